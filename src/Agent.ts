import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"
import * as os from "node:os"
import { alwaysChoices, isAllowed } from "./ApprovalScope"
import { Approver } from "./Approver"
import { Changes } from "./Changes"
import { AppConfig } from "./Config"
import { Compactor, estimateTokens } from "./Compactor"
import { type CompactionError, GenerationError } from "./Domain/Errors"
import { type Message, titleOf, type ToolCall, toWire, type WireMessage, withSystem } from "./Domain/Session"
import type { Conversation } from "./Keeper"
import { McpServers, mcpApprovalNeeded, noMcpTools } from "./McpServers"
import { ModelClient, type ModelEvent } from "./ModelClient"
import { fileChangeOf, previewOf } from "./Preview"
import { loadSkills, skillsPrompt } from "./Skills"
import { approvalNeeded } from "./SessionSettings"
import { HeldText, textToolCalls } from "./TextToolCalls"
import { describeCall, parseToolArguments, runTool, toolSpecs } from "./Tools"
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
  | { readonly _tag: "Compacted"; readonly replaced: number; readonly tokensBefore: number; readonly tokensAfter: number; readonly warning: string | undefined }

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
  const written = completed.content.length + completed.toolCalls.reduce((n, call) => n + call.function.arguments.length, 0)
  return {
    _tag: "Usage",
    promptTokens: estimateTokens(sent),
    completionTokens: Math.ceil(written / 4),
    contextWindow,
    estimated: true
  }
}

export const AgentLive = Layer.effect(
  Agent,
  Effect.gen(function* () {
    const { config } = yield* AppConfig
    const model = yield* ModelClient
    const approver = yield* Approver
    const compactor = yield* Compactor
    const changes = yield* Changes
    const mcp = yield* Effect.serviceOption(McpServers)
    const shownWarnings = new Set<string>()

    const compact = (conversation: Conversation, hint?: string, question = "/compact") =>
      Effect.gen(function* () {
        const before = yield* conversation.snapshot
        const result = yield* compactor.compact(before.messages, { keepTurns: config.compaction.keepTurns, hint })
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
      }).pipe(
        Effect.tapError((error) =>
          Effect.flatMap(
            conversation.record({ kind: "compaction", line: error.message, raw: error.raw, question }),
            () => Effect.void
          )
        )
      )

    const historyTokens = (conversation: Conversation, question: string) =>
      Effect.gen(function* () {
        const usage = yield* Ref.get(conversation.usage)
        const { messages } = yield* conversation.snapshot
        const extra = Math.ceil(question.length / 4)
        return usage !== undefined ? usage.promptTokens + usage.completionTokens + extra : estimateTokens(messages) + extra
      })

    const autoCompact = (conversation: Conversation, question: string, emit: (event: TurnEvent) => Effect.Effect<void>) =>
      Effect.gen(function* () {
        if (!config.compaction.auto) return
        const limit = Math.floor(config.compaction.threshold * (yield* model.contextWindow))
        const tokens = yield* historyTokens(conversation, question)
        if (tokens <= limit) return
        const done = yield* Effect.either(compact(conversation, undefined, question))
        if (done._tag === "Left") return yield* emit({ _tag: "CompactionFailed", error: done.left })
        if (done.right._tag === "Nothing") return
        yield* emit({
          _tag: "Notice",
          about: "compaction",
          text: `history compacted: ${done.right.replaced} older message(s) replaced by a summary (about ${tokens} tokens, over ${limit})`
        })
        if (done.right.warning !== undefined) yield* emit({ _tag: "Notice", text: done.right.warning })
      })

    const systemPrompt = (cwd: string) =>
      Effect.map(loadSkills(config.skills.dirs, cwd, os.homedir()), ({ skills, warnings }) => ({
        system: [config.system, skillsPrompt(skills)].filter((part) => part !== "").join("\n\n"),
        warnings
      }))

    /** undefined when the call may run; else the result the model gets instead. */
    const approve = (
      conversation: Conversation,
      call: ToolCall,
      input: Record<string, unknown> | undefined,
      title: string,
      shown: Effect.Effect<void>,
      mcpApproval?: "ask" | "allow"
    ) =>
      Effect.gen(function* () {
        const tool = call.function.name
        const { mode } = yield* Ref.get(conversation.settings)
        const needed =
          mcpApproval === undefined
            ? approvalNeeded(config.permissions, mode, tool, input, conversation.cwd)
            : mcpApprovalNeeded(config.permissions, mode, mcpApproval)
        if (!needed) return undefined
        const toApprove = { tool, input, cwd: conversation.cwd }
        if (isAllowed(yield* Ref.get(conversation.allowed), toApprove)) return undefined
        yield* shown
        const answer = yield* approver.ask({
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
            return answer.instead === undefined || answer.instead.trim() === "" ? DENIED : `${DENIED}: ${answer.instead.trim()}`
          case "NoOneToAsk":
            return NO_TERMINAL
        }
      })

    const runTurn = (
      conversation: Conversation,
      question: string,
      emit: (event: TurnEvent) => Effect.Effect<void>,
      shown: Effect.Effect<void>
    ) =>
      Effect.gen(function* () {
        const warnOnce = (warning: string | undefined) =>
          warning === undefined ? Effect.void : emit({ _tag: "Notice", text: warning })

        yield* warnOnce(yield* conversation.ensureFile)
        yield* warnOnce(yield* model.takeWarning)
        yield* autoCompact(conversation, question, emit)
        const { system, warnings } = yield* systemPrompt(conversation.cwd)
        for (const warning of warnings) {
          if (shownWarnings.has(warning)) continue
          shownWarnings.add(warning)
          yield* emit({ _tag: "Notice", text: warning })
        }

        const mcpTools = Option.isSome(mcp) ? yield* mcp.value.forTurn(conversation) : noMcpTools
        for (const notice of mcpTools.notices) yield* emit({ _tag: "Notice", text: notice })

        const before = yield* conversation.snapshot
        const base = withSystem(before.messages, system)
        const added: Array<Message> = [{ role: "user", content: question }]
        const partial = yield* Ref.make("")

        const commit = (messages: ReadonlyArray<Message>, completed: boolean) =>
          conversation.update((session) => ({
            ...session,
            messages: [...base, ...messages],
            turns: completed ? session.turns + 1 : session.turns,
            title: session.title === "" ? titleOf(question) : session.title
          }))

        const steps = Effect.gen(function* () {
          for (let step = 1; step <= config.maxSteps; step++) {
            const { model: chosenModel } = yield* Ref.get(conversation.settings)
            const request = {
              messages: [...base, ...added].map(toWire),
              tools: [...toolSpecs, ...mcpTools.specs()],
              ...(chosenModel === undefined ? {} : { model: chosenModel })
            }
            let completed: Extract<ModelEvent, { _tag: "Completed" }> | undefined
            const held = config.model.textToolCalls ? new HeldText() : undefined
            const show = (text: string) =>
              text === "" ? Effect.void : Ref.update(partial, (shown) => shown + text).pipe(Effect.zipRight(emit({ _tag: "TextDelta", text })))
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
              const written = completed.toolCalls.length === 0 ? textToolCalls(completed.content, new Set(request.tools.map((tool) => tool.name))) : undefined
              if (written !== undefined) completed = { ...completed, content: written.content, toolCalls: written.calls, finishReason: "tool_calls" }
              else yield* show(held.flush())
            }
            // the window the server serves may have become known while it answered
            yield* warnOnce(yield* model.takeWarning)
            yield* emit(usageEvent(completed, request.messages, yield* model.contextWindow))
            const calls = completed.toolCalls
            added.push({
              role: "assistant",
              content: completed.content === "" && calls.length > 0 ? null : completed.content,
              ...(calls.length > 0 ? { tool_calls: calls } : {}),
              ...(completed.reasoning === "" ? {} : { reasoning: completed.reasoning })
            })
            yield* Ref.set(partial, "")
            if (calls.length === 0) {
              const said = finishNotice(completed.finishReason, completed.content)
              if (said !== undefined) yield* emit({ _tag: "Notice", text: said })
              return completed.finishReason === "length" ? ("max_tokens" as const) : ("end_turn" as const)
            }

            for (const call of calls) {
              const mcpTool = mcpTools.find(call.function.name)
              if (mcpTool !== undefined) {
                const parsed = mcpTools.parse(call.function.arguments)
                const input = "args" in parsed ? parsed.args : undefined
                const described = describeCall(call.function.name, input, conversation.cwd)
                yield* emit({ _tag: "ToolCallStarted", id: call.id, name: call.function.name, input, rawArguments: call.function.arguments, ...described })
                const refused = input === undefined ? undefined : yield* approve(conversation, call, input, described.title, shown, mcpTool.approval)
                const result =
                  "error" in parsed
                    ? { output: `invalid arguments for ${call.function.name}: ${parsed.error}`, failed: true }
                    : refused === undefined
                      ? yield* mcpTools.run(mcpTool, parsed.args, { maxOutput: config.maxOutput, timeoutSeconds: config.watchdogTimeout })
                      : { output: refused, failed: true }
                added.push({ role: "tool", tool_call_id: call.id, content: result.output, ...(result.failed ? { failed: true } : {}) })
                yield* emit({ _tag: "ToolCallFinished", id: call.id, name: call.function.name, output: result.output, failed: result.failed })
                continue
              }
              const parsed = parseToolArguments(call.function.name, call.function.arguments)
              const input = parsed._tag === "Right" ? parsed.right : undefined
              const described = describeCall(call.function.name, input, conversation.cwd)
              yield* emit({
                _tag: "ToolCallStarted",
                id: call.id,
                name: call.function.name,
                input,
                rawArguments: call.function.arguments,
                title: described.title,
                kind: described.kind,
                locations: described.locations
              })
              const refused = parsed._tag === "Left" ? undefined : yield* approve(conversation, call, input, described.title, shown)
              // the call is on the user's screen before it runs (an editor may show its terminal under it)
              if (refused === undefined) yield* shown
              // what a file tool changes, read just before it runs: the old text is gone after it
              const change =
                refused === undefined && input !== undefined ? yield* fileChangeOf(call.function.name, input, conversation.cwd) : undefined
              const beforeWrite = changes.recorder(
                conversation,
                { turn: before.turns + 1, question, toolCallId: call.id },
                (text) => emit({ _tag: "Notice", text })
              )
              const result =
                refused === undefined
                  ? yield* runTool(call.function.name, call.function.arguments, {
                      cwd: conversation.cwd,
                      maxOutput: config.maxOutput,
                      callId: call.id,
                      beforeWrite,
                      onOutput: (text) => Effect.runSync(emit({ _tag: "ToolOutput", id: call.id, text }))
                    })
                  : { output: refused, failed: true }
              if (result.failed) yield* changes.forget(conversation, call.id)
              added.push({
                role: "tool",
                tool_call_id: call.id,
                content: result.output,
                ...(result.failed ? { failed: true } : {})
              })
              yield* emit({
                _tag: "ToolCallFinished",
                id: call.id,
                name: call.function.name,
                output: result.output,
                failed: result.failed,
                ...(change !== undefined && !result.failed ? { change } : {})
              })
            }
          }
          return "max_steps" as const
        })

        const outcome = yield* steps.pipe(
          Effect.onInterrupt(() =>
            Effect.flatMap(Ref.get(partial), (text) => commit(closeCancelled(added, text), false))
          ),
          Effect.either
        )
        if (outcome._tag === "Left") {
          const error = outcome.left
          yield* warnOnce(
            yield* conversation.record({ kind: "generation", line: error.message, raw: error.raw, question })
          )
          yield* emit({ _tag: "TurnFailed", error })
          return
        }
        yield* warnOnce(yield* commit(added, true))
        if (outcome.right === "max_steps") {
          yield* emit({
            _tag: "Notice",
            text: `stopped after ${config.maxSteps} model calls in one turn (maxSteps); ask again to let it go on`
          })
        }
        yield* emit({ _tag: "TurnFinished", stopReason: outcome.right })
      })

    const turn = (conversation: Conversation, question: string): Stream.Stream<TurnEvent> =>
      Stream.unwrapScoped(
        Effect.gen(function* () {
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
            runTurn(conversation, question, emit, shown).pipe(
              Effect.catchAllDefect((defect) =>
                emit({
                  _tag: "TurnFailed",
                  error: new GenerationError({ reason: "malformed", message: `internal error: ${String(defect)}`, raw: String(defect) })
                })
              )
            )
          )
          return Stream.repeatEffect(Effect.zipRight(SubscriptionRef.update(pulls, (n) => n + 1), Queue.take(queue))).pipe(
            Stream.takeUntil(isTerminal)
          )
        })
      )

    const context = (conversation: Conversation) =>
      Effect.gen(function* () {
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

    return { turn, compact: (conversation: Conversation, hint?: string) => compact(conversation, hint), context }
  })
)
