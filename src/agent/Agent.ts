import * as os from "node:os"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

import { alwaysChoices, isAllowed } from "../approvals/ApprovalScope"
import { Approver } from "../approvals/Approver"
import { type FileChange, fileChangeOf, previewOf } from "../approvals/Preview"
import { approvalNeeded } from "../approvals/SessionSettings"
import { Changes, type ChangesShape } from "../changes/Changes"
import { type AgentConfig, AppConfig } from "../config/Config"
import { type CompactionError, GenerationError } from "../domain/Errors"
import { type Message, titleOf, type ToolCall, toWire, type WireMessage, withSystem } from "../domain/Session"
import type { McpTool } from "../mcp/McpGroup"
import { McpServers, type McpServersShape } from "../mcp/McpServers"
import { mcpApprovalNeeded, type McpTurnTools, noMcpTools } from "../mcp/McpTurnTools"
import { ModelClient, type ModelClientShape, type ModelEvent } from "../model/ModelClient"
import { HeldText, textToolCalls } from "../model/TextToolCalls"
import type { Conversation } from "../sessions/Conversation"
import { type CallDescription, describeCall } from "../tools/Describe"
import type { ToolResult } from "../tools/Tool"
import { runTool } from "../tools/Tools"
import { parseToolArguments, toolSpecs } from "../tools/ToolSpecs"
import { Compactor, type CompactorShape, estimateTokens } from "./Compactor"
import { loadSkills, skillsPrompt } from "./Skills"
import { isTerminal, type TurnEvent } from "./TurnEvent"

export const DENIED = "denied by the user"
export const CANCELLED = "cancelled by the user"
/** The result of a call that needs approval when no person can answer (stdin is not a terminal). */
export const NO_TERMINAL = "not approved: no terminal to ask (set permissions: allow, or run mm in a terminal)"

export interface AgentShape {
  /**
   * One turn: the question, then model calls and tool runs until an answer without tool
   * calls (or `maxSteps`). Interrupting the stream's consumer cancels the turn: what was
   * shown stays in the conversation, and nothing is recorded as an error.
   */
  readonly turn: (conversation: Conversation, question: string) => Stream.Stream<TurnEvent>
  /**
   * `/compact`: older turns replaced by a summary, in memory and in the file. A failure is
   * recorded in the session's `errors` and leaves the history as it was.
   */
  readonly compact: (conversation: Conversation, hint?: string) => Effect.Effect<CompactReport, CompactionError>
  /** `/context`: what the next request would hold, part by part, in (estimated) tokens. */
  readonly context: (conversation: Conversation) => Effect.Effect<ContextReport>
}

export interface ContextReport {
  readonly systemPrompt: number
  readonly skills: { readonly count: number; readonly tokens: number }
  readonly messages: { readonly count: number; readonly tokens: number }
  readonly toolResults: { readonly count: number; readonly tokens: number }
  /** The tool definitions sent with every request. */
  readonly tools: number
  readonly total: number
  readonly contextWindow: number
  /** What the server counted for the last answer (prompt + answer), when it said. */
  readonly measured: number | undefined
}

export type CompactReport =
  | { readonly _tag: "Nothing" }
  | {
    readonly _tag: "Compacted"
    readonly replaced: number
    readonly tokensBefore: number
    readonly tokensAfter: number
    readonly warning: string | undefined
  }

export class Agent extends Context.Tag("mm/Agent")<Agent, AgentShape>() {}

/** The history after a cancel: the partial answer kept, every unanswered tool call closed. */
export const closeCancelled = (added: ReadonlyArray<Message>, partialText: string): Array<Message> => {
  const out: Array<Message> = [...added]
  if (partialText !== "") out.push({ role: "assistant", content: partialText })
  const answered = new Set(out.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
  for (const message of added) {
    for (const call of message.tool_calls ?? []) {
      if (!answered.has(call.id)) out.push({ role: "tool", tool_call_id: call.id, content: CANCELLED, failed: true })
    }
  }
  return out
}

/** A line for an answer that ended otherwise than complete, or said nothing at all. */
export const finishNotice = (finishReason: string, content: string): string | undefined => {
  if (finishReason === "length") return "the answer was cut at the model's output limit (finish_reason: length)"
  if (content.trim() !== "") return undefined
  return finishReason === "content_filter"
    ? "the model server withheld the answer (finish_reason: content_filter)"
    : "the model returned an empty answer"
}

/** The `Usage` event of one model call: as the server reported it, else estimated from the text. */
export const usageEvent = (
  completed: Extract<ModelEvent, { _tag: "Completed" }>,
  sent: ReadonlyArray<WireMessage>,
  contextWindow: number
): TurnEvent => {
  if (completed.usage !== undefined) {
    return { _tag: "Usage", ...completed.usage, contextWindow, estimated: false }
  }
  const written = completed.content.length +
    completed.toolCalls.reduce((n, call) => n + call.function.arguments.length, 0)
  return {
    _tag: "Usage",
    promptTokens: estimateTokens(sent),
    completionTokens: Math.ceil(written / 4),
    contextWindow,
    estimated: true
  }
}

/** What the agent's functions use: the layer's services, and the skill warnings already shown (each shown once). */
interface Deps {
  readonly config: AgentConfig
  readonly model: ModelClientShape
  readonly approver: Context.Tag.Service<Approver>
  readonly compactor: CompactorShape
  readonly changes: ChangesShape
  readonly mcp: Option.Option<McpServersShape>
  readonly shownWarnings: Set<string>
}

export const AgentLive = Layer.effect(
  Agent,
  Effect.gen(function*() {
    const deps: Deps = {
      config: (yield* AppConfig).config,
      model: yield* ModelClient,
      approver: yield* Approver,
      compactor: yield* Compactor,
      changes: yield* Changes,
      mcp: yield* Effect.serviceOption(McpServers),
      shownWarnings: new Set()
    }
    return {
      turn: (conversation, question) => turn(deps, conversation, question),
      compact: (conversation, hint) => compact(deps, conversation, hint, "/compact"),
      context: (conversation) => context(deps, conversation)
    } satisfies AgentShape
  })
)

type Emit = (event: TurnEvent) => Effect.Effect<void>

type StopReason = Extract<TurnEvent, { _tag: "TurnFinished" }>["stopReason"]

/** One turn under way: where its events go, and the history it adds to. */
interface TurnState {
  readonly conversation: Conversation
  readonly question: string
  readonly emit: Emit
  /** Waits until every event emitted so far is on the user's screen. */
  readonly shown: Effect.Effect<void>
  readonly mcpTools: McpTurnTools
  /** The number this turn will have in the session; its file changes are recorded under it. */
  readonly turnNumber: number
  /** What comes before this turn's messages: the system prompt, then the history. */
  readonly base: ReadonlyArray<Message>
  /** This turn's messages so far, the question first. */
  readonly added: Array<Message>
  /** The text shown of the answer being streamed, kept if the turn is cancelled. */
  readonly partial: Ref.Ref<string>
}

/** A warning a service gives only once (undefined the other times), as a notice. */
const warn = (emit: Emit, warning: string | undefined) =>
  warning === undefined ? Effect.void : emit({ _tag: "Notice", text: warning })

// ---------------------------------------------------------------------------
// Compaction

/**
 * Older turns replaced by a summary. A failure is recorded in the session with `question`:
 * `/compact`, or the question of the turn it ran before.
 */
const compact = Effect.fn("Agent.compact")(
  function*(deps: Deps, conversation: Conversation, hint: string | undefined, _question: string) {
    const before = yield* conversation.snapshot
    const result = yield* deps.compactor.compact(before.messages, { keepTurns: deps.config.compaction.keepTurns, hint })
    if (result._tag === "Nothing") return result
    const warning = yield* conversation.update((session) => ({ ...session, messages: result.messages }))
    yield* Ref.set(conversation.usage, undefined)
    return {
      _tag: "Compacted",
      replaced: result.replaced,
      tokensBefore: estimateTokens(before.messages),
      tokensAfter: estimateTokens(result.messages),
      warning
    } as const
  },
  (effect, _deps, conversation, _hint, question) =>
    Effect.tapError(effect, (error) =>
      Effect.flatMap(
        conversation.record({ kind: "compaction", line: error.message, raw: error.raw, question }),
        () => Effect.void
      ))
)

/** The tokens the next request would hold with `question`: as the server last counted them, else estimated. */
const historyTokens = Effect.fn("Agent.historyTokens")(function*(conversation: Conversation, question: string) {
  const usage = yield* Ref.get(conversation.usage)
  const { messages } = yield* conversation.snapshot
  const extra = Math.ceil(question.length / 4)
  return usage !== undefined ? usage.promptTokens + usage.completionTokens + extra : estimateTokens(messages) + extra
})

/** Compaction before a turn whose history (with the question) is over the threshold of the window. */
const autoCompact = Effect.fn("Agent.autoCompact")(
  function*(deps: Deps, conversation: Conversation, question: string, emit: Emit) {
    const { config, model } = deps
    if (!config.compaction.auto) return
    const limit = Math.floor(config.compaction.threshold * (yield* model.contextWindow))
    const tokens = yield* historyTokens(conversation, question)
    if (tokens <= limit) return
    const done = yield* Effect.either(compact(deps, conversation, undefined, question))
    if (done._tag === "Left") return yield* emit({ _tag: "CompactionFailed", error: done.left })
    if (done.right._tag === "Nothing") return
    yield* emit({
      _tag: "Notice",
      about: "compaction",
      text:
        `history compacted: ${done.right.replaced} older message(s) replaced by a summary (about ${tokens} tokens, over ${limit})`
    })
    if (done.right.warning !== undefined) yield* emit({ _tag: "Notice", text: done.right.warning })
  }
)

// ---------------------------------------------------------------------------
// One turn

/**
 * The turn as a stream of events. It runs in a fiber of its own that the stream's scope
 * interrupts, so a consumer that stops pulling cancels the turn.
 */
const turn = (deps: Deps, conversation: Conversation, question: string): Stream.Stream<TurnEvent> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<TurnEvent>()
      const pulls = yield* SubscriptionRef.make(0)
      let emitted = 0
      const emit = (event: TurnEvent) =>
        Effect.suspend(() => {
          emitted++
          return Queue.offer(queue, event)
        })
      // The consumer pulls the next event only once it has handled the previous one, so
      // a pull beyond the last event emitted means all of them are on the user's screen.
      const shown = Effect.suspend(() => {
        const wanted = emitted + 1
        return pulls.changes.pipe(Stream.takeUntil((count) => count >= wanted), Stream.runDrain)
      })
      yield* Effect.forkScoped(
        runTurn(deps, conversation, question, emit, shown).pipe(
          Effect.catchAllDefect((defect) =>
            emit({
              _tag: "TurnFailed",
              error: new GenerationError({
                reason: "malformed",
                message: `internal error: ${String(defect)}`,
                raw: String(defect)
              })
            })
          )
        )
      )
      return Stream.repeatEffect(Effect.zipRight(SubscriptionRef.update(pulls, (n) => n + 1), Queue.take(queue))).pipe(
        Stream.takeUntil(isTerminal)
      )
    })
  )

const runTurn = Effect.fn("Agent.runTurn")(function*(
  deps: Deps,
  conversation: Conversation,
  question: string,
  emit: Emit,
  shown: Effect.Effect<void>
) {
  const state = yield* prepareTurn(deps, conversation, question, emit, shown)
  const outcome = yield* runSteps(deps, state).pipe(
    Effect.onInterrupt(() =>
      Effect.flatMap(Ref.get(state.partial), (text) => commit(state, closeCancelled(state.added, text), false))
    ),
    Effect.either
  )
  yield* endTurn(deps, state, outcome)
})

/**
 * What comes before the first model call: the warnings not shown yet, compaction when the
 * history is near the window, the system prompt with the skills, the turn's MCP tools.
 */
const prepareTurn = Effect.fn("Agent.prepareTurn")(function*(
  deps: Deps,
  conversation: Conversation,
  question: string,
  emit: Emit,
  shown: Effect.Effect<void>
) {
  yield* warn(emit, yield* conversation.ensureFile)
  yield* warn(emit, yield* deps.model.takeWarning)
  yield* autoCompact(deps, conversation, question, emit)
  const { system, warnings } = yield* loadSystemPrompt(deps.config, conversation.cwd)
  for (const warning of warnings) {
    if (deps.shownWarnings.has(warning)) continue
    deps.shownWarnings.add(warning)
    yield* emit({ _tag: "Notice", text: warning })
  }

  const mcpTools = Option.isSome(deps.mcp) ? yield* deps.mcp.value.forTurn(conversation) : noMcpTools
  for (const notice of mcpTools.notices) yield* emit({ _tag: "Notice", text: notice })

  const before = yield* conversation.snapshot
  const state: TurnState = {
    conversation,
    question,
    emit,
    shown,
    mcpTools,
    turnNumber: before.turns + 1,
    base: withSystem(before.messages, system),
    added: [{ role: "user", content: question }],
    partial: yield* Ref.make("")
  }
  return state
})

const loadSystemPrompt = (config: AgentConfig, cwd: string) =>
  Effect.map(loadSkills(config.skills.dirs, cwd, os.homedir()), ({ skills, warnings }) => ({
    system: [config.system, skillsPrompt(skills)].filter((part) => part !== "").join("\n\n"),
    warnings
  }))

/** Model calls and their tool calls, until an answer without tool calls or `maxSteps` calls. */
const runSteps = Effect.fn("Agent.runSteps")(function*(deps: Deps, state: TurnState) {
  for (let step = 1; step <= deps.config.maxSteps; step++) {
    const completed = yield* callModel(deps, state)
    const calls = completed.toolCalls
    state.added.push(assistantMessage(completed))
    yield* Ref.set(state.partial, "")
    if (calls.length === 0) {
      const said = finishNotice(completed.finishReason, completed.content)
      if (said !== undefined) yield* state.emit({ _tag: "Notice", text: said })
      return completed.finishReason === "length" ? ("max_tokens" as const) : ("end_turn" as const)
    }
    for (const call of calls) {
      const mcpTool = state.mcpTools.find(call.function.name)
      if (mcpTool !== undefined) yield* runMcpCall(deps, state, call, mcpTool)
      else yield* runBuiltinCall(deps, state, call)
    }
  }
  return "max_steps" as const
})

type Completed = Extract<ModelEvent, { _tag: "Completed" }>

/**
 * One model call: the request, its text and reasoning emitted as they stream, then the whole
 * answer (and its usage). With `model.textToolCalls`, text that may be a tool call written
 * as text is held back until the answer is complete, and becomes tool calls if it is one.
 */
const callModel = Effect.fn("Agent.callModel")(function*(deps: Deps, state: TurnState) {
  const { config, model } = deps
  const { conversation, emit, partial } = state
  const { model: chosenModel } = yield* Ref.get(conversation.settings)
  const request = {
    messages: [...state.base, ...state.added].map(toWire),
    tools: [...toolSpecs, ...state.mcpTools.specs()],
    ...(chosenModel === undefined ? {} : { model: chosenModel })
  }
  let completed: Completed | undefined
  const held = config.model.textToolCalls ? new HeldText() : undefined
  const show = (text: string) =>
    text === ""
      ? Effect.void
      : Ref.update(partial, (shown) => shown + text).pipe(Effect.zipRight(emit({ _tag: "TextDelta", text })))
  yield* model.stream(request).pipe(
    Stream.runForEach((event) => {
      if (event._tag === "TextDelta") return show(held === undefined ? event.text : held.push(event.text))
      if (event._tag === "ReasoningDelta") return emit({ _tag: "ReasoningDelta", text: event.text })
      if (event._tag === "Retrying") return emit({ _tag: "Notice", text: event.text, quiet: true })
      completed = event
      if (event.usage !== undefined) return Ref.set(conversation.usage, event.usage)
      return Effect.void
    })
  )
  if (completed === undefined) {
    return yield* new GenerationError({
      reason: "stream-cut",
      message: "the model server ended the answer without completing it",
      raw: "stream ended without a Completed event"
    })
  }
  if (held !== undefined) {
    const written = completed.toolCalls.length === 0
      ? textToolCalls(completed.content, new Set(request.tools.map((tool) => tool.name)))
      : undefined
    if (written !== undefined) {
      completed = { ...completed, content: written.content, toolCalls: written.calls, finishReason: "tool_calls" }
    } else yield* show(held.flush())
  }
  // the window the server serves may have become known while it answered
  yield* warn(emit, yield* model.takeWarning)
  yield* emit(usageEvent(completed, request.messages, yield* model.contextWindow))
  return completed
})

const assistantMessage = (completed: Completed): Message => {
  const calls = completed.toolCalls
  return {
    role: "assistant",
    content: completed.content === "" && calls.length > 0 ? null : completed.content,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(completed.reasoning === "" ? {} : { reasoning: completed.reasoning })
  }
}

/** One call of an MCP tool: shown, approved unless its server allows it, run, and its result added. */
const runMcpCall = Effect.fn("Agent.runMcpCall")(
  function*(deps: Deps, state: TurnState, call: ToolCall, tool: McpTool) {
    const { config } = deps
    const { conversation, emit, mcpTools } = state
    const parsed = mcpTools.parse(call.function.arguments)
    const input = "args" in parsed ? parsed.args : undefined
    const described = describeCall(call.function.name, input, conversation.cwd)
    yield* emit(callStarted(call, input, described))
    const refused = input === undefined
      ? undefined
      : yield* approve(deps, conversation, call, input, described.title, state.shown, tool.approval)
    const result = "error" in parsed
      ? { output: `invalid arguments for ${call.function.name}: ${parsed.error}`, failed: true }
      : refused === undefined
      ? yield* mcpTools.run(tool, parsed.args, { maxOutput: config.maxOutput, timeoutSeconds: config.watchdogTimeout })
      : { output: refused, failed: true }
    state.added.push(toolMessage(call, result))
    yield* emit(callFinished(call, result))
  }
)

/** One call of a built-in tool: shown, approved if it must be, run with its file changes recorded, and its result added. */
const runBuiltinCall = Effect.fn("Agent.runBuiltinCall")(function*(deps: Deps, state: TurnState, call: ToolCall) {
  const { changes, config } = deps
  const { conversation, emit } = state
  const parsed = parseToolArguments(call.function.name, call.function.arguments)
  const input = parsed._tag === "Right" ? parsed.right : undefined
  const described = describeCall(call.function.name, input, conversation.cwd)
  yield* emit(callStarted(call, input, described))
  const refused = parsed._tag === "Left"
    ? undefined
    : yield* approve(deps, conversation, call, input, described.title, state.shown)
  // the call is on the user's screen before it runs (an editor may show its terminal under it)
  if (refused === undefined) yield* state.shown
  // what a file tool changes, read just before it runs: the old text is gone after it
  const change = refused === undefined && input !== undefined
    ? yield* fileChangeOf(call.function.name, input, conversation.cwd)
    : undefined
  const beforeWrite = changes.recorder(
    conversation,
    { turn: state.turnNumber, question: state.question, toolCallId: call.id },
    (text) => emit({ _tag: "Notice", text })
  )
  const result = refused === undefined
    ? yield* runTool(call.function.name, call.function.arguments, {
      cwd: conversation.cwd,
      maxOutput: config.maxOutput,
      callId: call.id,
      beforeWrite,
      onOutput: (text) => Effect.runSync(emit({ _tag: "ToolOutput", id: call.id, text }))
    })
    : { output: refused, failed: true }
  if (result.failed) yield* changes.forget(conversation, call.id)
  state.added.push(toolMessage(call, result))
  yield* emit(callFinished(call, result, change))
})

const callStarted = (
  call: ToolCall,
  input: Record<string, unknown> | undefined,
  described: CallDescription
): TurnEvent => ({
  _tag: "ToolCallStarted",
  id: call.id,
  name: call.function.name,
  input,
  rawArguments: call.function.arguments,
  title: described.title,
  kind: described.kind,
  locations: described.locations
})

/** `change`: what a file tool changed, shown only when it succeeded. */
const callFinished = (call: ToolCall, result: ToolResult, change?: FileChange): TurnEvent => ({
  _tag: "ToolCallFinished",
  id: call.id,
  name: call.function.name,
  output: result.output,
  failed: result.failed,
  ...(change !== undefined && !result.failed ? { change } : {})
})

const toolMessage = (call: ToolCall, result: ToolResult): Message => ({
  role: "tool",
  tool_call_id: call.id,
  content: result.output,
  ...(result.failed ? { failed: true } : {})
})

/** undefined when the call may run; else the result the model gets instead. */
const approve = Effect.fn("Agent.approve")(function*(
  deps: Deps,
  conversation: Conversation,
  call: ToolCall,
  input: Record<string, unknown> | undefined,
  title: string,
  shown: Effect.Effect<void>,
  mcpApproval?: "ask" | "allow"
) {
  const { config } = deps
  const tool = call.function.name
  const { mode } = yield* Ref.get(conversation.settings)
  const needed = mcpApproval === undefined
    ? approvalNeeded(config.permissions, mode, tool, input, conversation.cwd)
    : mcpApprovalNeeded(config.permissions, mode, mcpApproval)
  if (!needed) return undefined
  const toApprove = { tool, input, cwd: conversation.cwd }
  if (isAllowed(yield* Ref.get(conversation.allowed), toApprove)) return undefined
  yield* shown
  const answer = yield* deps.approver.ask({
    sessionId: yield* conversation.id,
    toolCallId: call.id,
    tool,
    title,
    input,
    preview: yield* previewOf(tool, input, conversation.cwd),
    always: alwaysChoices(toApprove)
  })
  switch (answer._tag) {
    case "Once":
      return undefined
    case "Always":
      yield* Ref.update(conversation.allowed, (scopes) => [...scopes, answer.scope])
      return undefined
    case "Deny":
      return answer.instead === undefined || answer.instead.trim() === ""
        ? DENIED
        : `${DENIED}: ${answer.instead.trim()}`
    case "NoOneToAsk":
      return NO_TERMINAL
  }
})

/** The session with this turn's messages after the history it started from; a completed turn counts. */
const commit = (state: TurnState, messages: ReadonlyArray<Message>, completed: boolean) =>
  state.conversation.update((session) => ({
    ...session,
    messages: [...state.base, ...messages],
    turns: completed ? session.turns + 1 : session.turns,
    title: session.title === "" ? titleOf(state.question) : session.title
  }))

/**
 * A failed turn leaves the history as it was and keeps its error beside the conversation;
 * a finished one is committed.
 */
const endTurn = Effect.fn("Agent.endTurn")(function*(
  deps: Deps,
  state: TurnState,
  outcome: Either.Either<StopReason, GenerationError>
) {
  const { conversation, emit, question } = state
  if (outcome._tag === "Left") {
    const error = outcome.left
    yield* warn(emit, yield* conversation.record({ kind: "generation", line: error.message, raw: error.raw, question }))
    yield* emit({ _tag: "TurnFailed", error })
    return
  }
  yield* warn(emit, yield* commit(state, state.added, true))
  if (outcome.right === "max_steps") {
    yield* emit({
      _tag: "Notice",
      text: `stopped after ${deps.config.maxSteps} model calls in one turn (maxSteps); ask again to let it go on`
    })
  }
  yield* emit({ _tag: "TurnFinished", stopReason: outcome.right })
})

// ---------------------------------------------------------------------------
// /context

const context = Effect.fn("Agent.context")(function*(deps: Deps, conversation: Conversation) {
  const { config, model } = deps
  const { skills } = yield* loadSkills(config.skills.dirs, conversation.cwd, os.homedir())
  const { messages } = yield* conversation.snapshot
  const history = messages.filter((m) => m.role !== "system")
  const results = history.filter((m) => m.role === "tool")
  const others = history.filter((m) => m.role !== "tool")
  const systemPrompt = estimateTokens([{ role: "system", content: config.system }])
  const skillsTokens = skills.length === 0 ? 0 : Math.ceil(skillsPrompt(skills).length / 4)
  const tools = Math.ceil(JSON.stringify(toolSpecs).length / 4)
  const parts = { messages: estimateTokens(others), toolResults: estimateTokens(results) }
  const usage = yield* Ref.get(conversation.usage)
  return {
    systemPrompt,
    skills: { count: skills.length, tokens: skillsTokens },
    messages: { count: others.length, tokens: parts.messages },
    toolResults: { count: results.length, tokens: parts.toolResults },
    tools,
    total: systemPrompt + skillsTokens + tools + parts.messages + parts.toolResults,
    contextWindow: yield* model.contextWindow,
    measured: usage === undefined ? undefined : usage.promptTokens + usage.completionTokens
  }
})
