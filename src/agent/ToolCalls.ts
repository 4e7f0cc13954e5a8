import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { alwaysChoices, type CallToApprove, isAllowed, type ReadCommand } from "../approvals/ApprovalScope"
import { commandReader } from "../approvals/CommandReader"
import { refusedInPlan } from "../approvals/PlanMode"
import { approvalNeeded, secretsAsked } from "../approvals/SessionSettings"
import type { PlanEntry } from "../domain/Plan"
import type { Message, ToolCall } from "../domain/Session"
import { blockedResult, postToolUseHooks, preToolUseHooks } from "../hooks/HookCalls"
import { Secrets } from "../lib/Secrets"
import { bashTool } from "../tools/Bash"
import { FileAccess } from "../tools/FileAccess"
import type { FileChange, Preview } from "../tools/Preview"
import { secretFilesOf } from "../tools/SecretFiles"
import { failure, type ToolContext, type ToolResult } from "../tools/Tool"
import { type CallDescription, describeCall, type PreparedCall, type ToolRecord } from "../tools/ToolRecord"
import { runPrepared, runTool } from "../tools/Tools"
import { unknownToolRecord } from "../tools/UnknownTool"
import { type Deps, warn } from "./Deps"
import { runConfined } from "./SandboxedBash"
import type { TurnEvent } from "./TurnEvent"
import { runSaved, saveProgress } from "./TurnProgress"
import type { TurnState } from "./TurnState"

export const DENIED = "denied by the user"
/** The result of a call that needs approval when no person can answer (stdin is not a terminal). */
export const NO_TERMINAL = "not approved: no terminal to ask (set permissions: allow, or run mm in a terminal)"

/** Runs a tool's effect with the agent's file access (the disk's, or the editor's) and the program's secrets. */
const withFiles = <A, E>(deps: Deps, effect: Effect.Effect<A, E, FileAccess | Secrets>) =>
  effect.pipe(Effect.provideService(FileAccess, deps.files), Effect.provideService(Secrets, deps.secrets))

/** The tool a call names: a tool of the registry, or of the turn's MCP servers. */
const toolOf = (deps: Deps, state: TurnState, name: string): ToolRecord | undefined =>
  deps.tools.find(name) ?? state.mcpTools.find(name)

/** The result of a call of a tool mm does not have. */
const unknownTool = (deps: Deps, state: TurnState, name: string): ToolResult =>
  failure(
    `unknown tool "${name}"; the tools are ${
      [...deps.tools.tools, ...state.mcpTools.tools()].map((tool) => tool.name).join(", ")
    }`
  )

/**
 * One call of the model: shown, approved if it must be, run (a command in the sandbox when it
 * is on, a file tool with its change recorded for /undo), and its result added.
 */
export const runCall = Effect.fn("Agent.runCall")(function*(deps: Deps, state: TurnState, call: ToolCall) {
  const { conversation, emit } = state
  const name = call.function.name
  const tool = toolOf(deps, state, name)
  if (tool === undefined) {
    const described = describeCall(unknownToolRecord(name), undefined, conversation.cwd)
    yield* emit(callStarted(call, undefined, described, false))
    return yield* finish(state, call, unknownTool(deps, state, name))
  }
  const prepared = tool.prepare(call.function.arguments)
  if (prepared._tag === "Left") {
    yield* emit(callStarted(call, undefined, describeCall(tool, undefined, conversation.cwd), false))
    return yield* finish(state, call, failure(`invalid arguments for ${name}: ${prepared.left}`))
  }
  const { input } = prepared.right
  const described = describeCall(tool, input, conversation.cwd)
  const planned = yield* planModeRefusal(deps, conversation, tool, input)
  if (planned !== undefined) {
    yield* emit(callStarted(call, input, described, false))
    return yield* finish(state, call, failure(planned))
  }
  // the user's PreToolUse hooks come before the approval rule: they may refuse, allow or ask
  const use = { tool: tool.name, input, id: call.id }
  const hooked = yield* preToolUseHooks(deps.hooks, conversation, say(state), use)
  if (hooked._tag === "Deny") {
    yield* emit(callStarted(call, input, described, false))
    return yield* finish(state, call, failure(blockedResult(hooked.reason)))
  }
  const question = hooked._tag === "Allow"
    ? undefined
    : yield* awaitsApproval(deps, state, tool, input, hooked._tag === "Ask")
  yield* emit(callStarted(call, input, described, question !== undefined))
  // the call the user is asked about is on disk while they think: killed then, it never ran
  if (question !== undefined) yield* saveProgress(deps, state)
  const refused = question === undefined ? undefined : yield* ask(deps, state, call, tool, described, question)
  if (refused !== undefined) return yield* finish(state, call, failure(refused))
  // the call is on the user's screen before it runs (an editor may show its terminal under it)
  yield* state.shown
  // what a file tool changes, read just before it runs: the old text is gone after it
  const preview = yield* withFiles(deps, tool.preview(input, conversation.cwd))
  const run = (changed: Effect.Effect<void>) => runApproved(deps, state, call, tool, prepared.right, described, changed)
  // a plan or a sub-agent is not marked running: a sub-agent's own file holds what it does, and
  // sub-agents side by side would take the one mark from each other
  const ran = tool.access === "mm" ? yield* run(Effect.void) : yield* runSaved(deps, state, call.id, run)
  // the user's PostToolUse hooks read the result; what they say back is added to it
  const result = yield* postToolUseHooks(deps.hooks, conversation, say(state), use, ran)
  yield* finish(state, call, result, preview._tag === "FileChange" && !result.failed ? preview : undefined)
})

/** A hook's line, shown as the turn's notice. */
const say = (state: Pick<TurnState, "emit">) => (text: string) => state.emit({ _tag: "Notice", text })

/** The call's result added to the turn and told. `change`: what a file tool changed, when it succeeded. */
const finish = (state: TurnState, call: ToolCall, result: ToolResult, change?: FileChange) =>
  Effect.suspend(() => {
    state.toolOutput.delete(call.id)
    if (state.running === call.id) state.running = undefined
    state.added.push(toolMessage(call, result))
    return state.emit(callFinished(call, result, change))
  })

/**
 * Runs a call that may run: a command confined when the sandbox is on; a file tool's writes
 * recorded. `outputChanged` is told each time the call prints (its output is saved as it runs).
 */
const runApproved = Effect.fn("Agent.runApproved")(function*(
  deps: Deps,
  state: TurnState,
  call: ToolCall,
  tool: ToolRecord,
  prepared: PreparedCall,
  described: CallDescription,
  outputChanged: Effect.Effect<void>
) {
  const { changes, config } = deps
  const { conversation, emit } = state
  // what recording says (a checkpoint that could not be written) is said once the write is done:
  // a write that failed and left the file alone has nothing to undo, and no line says otherwise
  const held: Array<string> = []
  const records = tool.access === "write"
  const beforeWrite = records
    ? changes.recorder(
      conversation,
      { turn: state.turnNumber, question: state.question, toolCallId: call.id },
      (text) => Effect.sync(() => void held.push(text)),
      (text) => emit({ _tag: "Notice", text })
    )
    : undefined
  const emitOutput = (text: string) =>
    Effect.suspend(() => {
      // only the end is kept: a cancelled call's result is its last `maxOutput` characters
      const sofar = (state.toolOutput.get(call.id) ?? "") + text
      state.toolOutput.set(call.id, sofar.slice(-2 * config.maxOutput))
      return Effect.zipRight(outputChanged, emit({ _tag: "ToolOutput", id: call.id, text }))
    })
  const ctx: ToolContext = {
    cwd: conversation.cwd,
    maxOutput: config.maxOutput,
    ...(tool.access === "read" ? { secretFile: (yield* secretFilesOf(conversation.cwd, config.secrets)).test } : {}),
    timeoutSeconds: config.watchdogTimeout,
    callId: call.id,
    ...(beforeWrite === undefined ? {} : { beforeWrite }),
    setPlan: (entries) => keepPlan(state, entries),
    delegate: (task) => state.delegate(call.id, task, (text) => emitOutput(text)),
    ...(deps.jobs === undefined ? {} : { jobs: deps.jobs.control(conversation, call.id) }),
    onOutput: (text) => emitOutput(text)
  }
  const run = (confine: ToolContext["confine"]) =>
    withFiles(deps, runPrepared(tool, prepared, confine === undefined ? ctx : { ...ctx, confine }))
  const stepOut = () =>
    Effect.gen(function*() {
      return {
        sessionId: yield* conversation.id,
        call,
        tool,
        input: prepared.input,
        described,
        preview: yield* withFiles(deps, tool.preview(prepared.input, conversation.cwd))
      }
    })
  const result = tool.access === "command"
    ? yield* runConfined(deps, conversation.cwd, stepOut, run)
    : yield* run(undefined)
  if (!records) return result
  const recorded = result.failed
    ? yield* changes.forget(conversation, { turn: state.turnNumber, toolCallId: call.id })
    : true
  if (recorded) { for (const text of held) yield* emit({ _tag: "Notice", text }) }
  return result
})

/** The model's new plan: kept in the session (its file says it on a resume or a reload) and shown. */
const keepPlan = (state: TurnState, entries: ReadonlyArray<PlanEntry>) =>
  Effect.zipRight(
    Effect.flatMap(
      state.conversation.update((session) => ({ ...session, plan: { turn: state.turnNumber, entries } })),
      (warning) => warn(state.emit, warning)
    ),
    state.emit({ _tag: "Plan", entries })
  )

const callStarted = (
  call: ToolCall,
  input: Record<string, unknown> | undefined,
  described: CallDescription,
  asks: boolean
): TurnEvent => ({
  _tag: "ToolCallStarted",
  id: call.id,
  name: call.function.name,
  input,
  rawArguments: call.function.arguments,
  title: described.title,
  kind: described.kind,
  locations: described.locations,
  asks
})

/** `change`: what a file tool changed, shown only when it succeeded. */
const callFinished = (call: ToolCall, result: ToolResult, change?: FileChange): TurnEvent => ({
  _tag: "ToolCallFinished",
  id: call.id,
  name: call.function.name,
  output: result.output,
  failed: result.failed,
  ...(change !== undefined ? { change } : {})
})

const toolMessage = (call: ToolCall, result: ToolResult): Message => ({
  role: "tool",
  tool_call_id: call.id,
  content: result.output,
  ...(result.failed ? { failed: true } : {})
})

/** How a command line is read for the approval rule: the bash parser, loaded the first time a command needs it. */
const readerFor = (tool: ToolRecord): Effect.Effect<ReadCommand> =>
  tool.access === "command"
    ? Effect.map(commandReader, (reader) => reader.read)
    : Effect.succeed(() => ({ _tag: "Unresolved" as const, reason: "not a command" }))

/** Why plan mode refuses a call (approvals/PlanMode.ts); undefined when the session is not planning or it reads. */
const planModeRefusal = Effect.fn("Agent.planModeRefusal")(function*(
  deps: Deps,
  conversation: TurnState["conversation"],
  tool: ToolRecord,
  input: Record<string, unknown>
) {
  const { mode } = yield* Ref.get(conversation.settings)
  if (mode !== "plan") return undefined
  const read = yield* readerFor(tool)
  const secret = tool.access === "command" && deps.config.secrets.length > 0
    ? (yield* secretFilesOf(conversation.cwd, deps.config.secrets)).test
    : undefined
  return refusedInPlan(tool, input, conversation.cwd, read, secret)
})

/** What asking about a call needs: the call as the rule sees it, and how its command is read. */
interface Question {
  readonly call: CallToApprove
  readonly read: ReadCommand
  /** Set when the call reads a file that looks secret: why (the question shows it). */
  readonly secret?: string
}

/** Why a reading tool's call reads a file that looks secret (its `path`, links followed); undefined when it does not. */
const secretRead = (deps: Deps, tool: ToolRecord, input: Record<string, unknown>, cwd: string) =>
  tool.access === "read" && typeof input.path === "string" && input.path !== ""
    ? Effect.map(secretFilesOf(cwd, deps.config.secrets), (secrets) => secrets.reason(input.path as string))
    : Effect.succeed(undefined)

/**
 * Whether a call waits for the user: the mode says it must be approved, and no "always" given
 * (in this conversation, or remembered for the project) covers it. Undefined when it may run.
 */
const awaitsApproval = Effect.fn("Agent.awaitsApproval")(function*(
  deps: Deps,
  state: Pick<TurnState, "conversation" | "emit">,
  tool: ToolRecord,
  input: Record<string, unknown>,
  /** A PreToolUse hook said `ask`: the user is asked whatever the mode and the "always" answers say. */
  forced = false
) {
  const { conversation } = state
  const { mode } = yield* Ref.get(conversation.settings)
  const sandboxed = (yield* deps.sandbox.state)._tag === "On"
  // a file that looks secret is asked even inside the project, in every mode but allow
  const secret = yield* secretRead(deps, tool, input, conversation.cwd)
  const needed = secret === undefined
    ? approvalNeeded(deps.config.permissions, mode, tool, input, conversation.cwd, sandboxed)
    : tool.preapproved !== true && secretsAsked(deps.config.permissions, mode)
  if (!needed && !forced) return undefined
  const read = yield* readerFor(tool)
  const remembered = yield* deps.remembered.read(conversation.cwd)
  if (remembered.problem !== undefined && !deps.shownWarnings.has(remembered.problem)) {
    deps.shownWarnings.add(remembered.problem)
    yield* state.emit({ _tag: "Notice", text: remembered.problem })
  }
  // a command's paths are checked against the configuration's secret globs too
  const secretTest = tool.access === "command" && deps.config.secrets.length > 0
    ? { secret: (yield* secretFilesOf(conversation.cwd, deps.config.secrets)).test }
    : {}
  const call: CallToApprove = { tool: tool.name, access: tool.access, input, cwd: conversation.cwd, ...secretTest }
  if (!forced && isAllowed([...remembered.scopes, ...(yield* Ref.get(conversation.allowed))], call, read)) {
    return undefined
  }
  const question: Question = { call, read, ...(secret === undefined ? {} : { secret }) }
  return question
})

/** Asks the user about a call; undefined when it may run, else the result the model gets instead. */
const ask = Effect.fn("Agent.ask")(function*(
  deps: Deps,
  state: Pick<TurnState, "conversation" | "shown" | "emit">,
  call: ToolCall,
  tool: ToolRecord,
  described: CallDescription,
  question: Question
) {
  const { conversation } = state
  const input = question.call.input
  yield* state.shown
  const preview: Preview = question.secret === undefined
    ? yield* withFiles(deps, tool.preview(input, conversation.cwd))
    : { _tag: "Secret", reason: question.secret }
  const answer = yield* deps.approver.ask({
    sessionId: yield* conversation.id,
    toolCallId: call.id,
    tool: tool.name,
    access: tool.access,
    title: described.title,
    kind: described.kind,
    locations: described.locations,
    input,
    preview,
    always: alwaysChoices(question.call, question.read)
  })
  switch (answer._tag) {
    case "Once":
      return undefined
    case "Always": {
      yield* Ref.update(conversation.allowed, (scopes) => [...scopes, answer.scope])
      // a session-only answer is kept for this conversation, never remembered for the project
      if (answer.keep === "session") return undefined
      const problem = yield* deps.remembered.add(conversation.cwd, answer.scope)
      if (problem !== undefined) yield* state.emit({ _tag: "Notice", text: problem })
      return undefined
    }
    case "Deny":
      return answer.instead === undefined || answer.instead.trim() === ""
        ? DENIED
        : `${DENIED}: ${answer.instead.trim()}`
    case "NoOneToAsk":
      return NO_TERMINAL
  }
})

/**
 * `!command` in the terminal: the user's own shell line, run by the bash tool with the same
 * output limit, its output passed on as it comes. No approval: the user typed it.
 */
export const runShell = Effect.fn("Agent.runShell")(function*(
  deps: Deps,
  command: string,
  cwd: string,
  onOutput: (text: string) => Effect.Effect<void>
) {
  return yield* withFiles(
    deps,
    runTool(bashTool, JSON.stringify({ command }), { cwd, maxOutput: deps.config.maxOutput, onOutput })
  )
})
