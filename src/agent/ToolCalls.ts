import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { alwaysChoices, isAllowed } from "../approvals/ApprovalScope"
import { commandReader } from "../approvals/CommandReader"
import { type FileChange, fileChangeOf, previewOf } from "../approvals/Preview"
import { approvalNeeded } from "../approvals/SessionSettings"
import type { Message, ToolCall } from "../domain/Session"
import { Secrets } from "../lib/Secrets"
import { type McpTool } from "../mcp/McpGroup"
import { mcpApprovalNeeded } from "../mcp/McpTurnTools"
import type { Conversation } from "../sessions/Conversation"
import { type CallDescription, describeCall } from "../tools/Describe"
import { FileAccess } from "../tools/FileAccess"
import { type ToolContext, type ToolResult } from "../tools/Tool"
import { parseToolArguments } from "../tools/ToolArguments"
import { runTool } from "../tools/Tools"
import type { Deps } from "./Deps"
import { runConfined } from "./SandboxedBash"
import type { TurnEvent } from "./TurnEvent"
import type { TurnState } from "./TurnState"

export const DENIED = "denied by the user"
/** The result of a call that needs approval when no person can answer (stdin is not a terminal). */
export const NO_TERMINAL = "not approved: no terminal to ask (set permissions: allow, or run mm in a terminal)"

/** Runs a tool's effect with the agent's file access (the disk's, or the editor's) and the program's secrets. */
const withFiles = <A, E>(deps: Deps, effect: Effect.Effect<A, E, FileAccess | Secrets>) =>
  effect.pipe(Effect.provideService(FileAccess, deps.files), Effect.provideService(Secrets, deps.secrets))

/** One call of an MCP tool: shown, approved unless its server allows it, run, and its result added. */
export const runMcpCall = Effect.fn("Agent.runMcpCall")(
  function*(deps: Deps, state: TurnState, call: ToolCall, tool: McpTool) {
    const { config } = deps
    const { conversation, emit, mcpTools } = state
    const parsed = mcpTools.parse(call.function.arguments)
    const input = "args" in parsed ? parsed.args : undefined
    const described = describeCall(call.function.name, input, conversation.cwd)
    yield* emit(callStarted(call, input, described))
    const refused = input === undefined
      ? undefined
      : yield* approve(deps, conversation, call, input, described.title, state, tool.approval)
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
export const runBuiltinCall = Effect.fn("Agent.runBuiltinCall")(
  function*(deps: Deps, state: TurnState, call: ToolCall) {
    const { changes, config } = deps
    const { conversation, emit } = state
    const parsed = parseToolArguments(call.function.name, call.function.arguments)
    const input = parsed._tag === "Right" ? parsed.right : undefined
    const described = describeCall(call.function.name, input, conversation.cwd)
    yield* emit(callStarted(call, input, described))
    const refused = parsed._tag === "Left"
      ? undefined
      : yield* approve(deps, conversation, call, input, described.title, state)
    // the call is on the user's screen before it runs (an editor may show its terminal under it)
    if (refused === undefined) yield* state.shown
    // what a file tool changes, read just before it runs: the old text is gone after it
    const change = refused === undefined && input !== undefined
      ? yield* withFiles(deps, fileChangeOf(call.function.name, input, conversation.cwd))
      : undefined
    // what recording says (a checkpoint that could not be written) is said once the write is done:
    // a write that failed and left the file alone has nothing to undo, and no line says otherwise
    const held: Array<string> = []
    const beforeWrite = changes.recorder(
      conversation,
      { turn: state.turnNumber, question: state.question, toolCallId: call.id },
      (text) => Effect.sync(() => void held.push(text)),
      (text) => emit({ _tag: "Notice", text })
    )
    const run = (confine: ToolContext["confine"]) =>
      withFiles(
        deps,
        runTool(call.function.name, call.function.arguments, {
          cwd: conversation.cwd,
          maxOutput: config.maxOutput,
          callId: call.id,
          beforeWrite,
          onOutput: (text) => {
            // only the end is kept: a cancelled call's result is its last `maxOutput` characters
            const sofar = (state.toolOutput.get(call.id) ?? "") + text
            state.toolOutput.set(call.id, sofar.slice(-2 * config.maxOutput))
            Effect.runSync(emit({ _tag: "ToolOutput", id: call.id, text }))
          },
          ...(confine === undefined ? {} : { confine })
        })
      )
    const stepOut = () =>
      Effect.gen(function*() {
        return {
          sessionId: yield* conversation.id,
          call,
          input,
          title: described.title,
          preview: yield* withFiles(deps, previewOf(call.function.name, input, conversation.cwd))
        }
      })
    const result = refused !== undefined
      ? { output: refused, failed: true }
      : call.function.name === "bash"
      ? yield* runConfined(deps, conversation.cwd, stepOut, run)
      : yield* run(undefined)
    state.toolOutput.delete(call.id)
    const recorded = result.failed
      ? yield* changes.forget(conversation, { turn: state.turnNumber, toolCallId: call.id })
      : true
    if (recorded) { for (const text of held) yield* emit({ _tag: "Notice", text }) }
    state.added.push(toolMessage(call, result))
    yield* emit(callFinished(call, result, change))
  }
)

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
  state: Pick<TurnState, "shown" | "emit">,
  mcpApproval?: "ask" | "allow"
) {
  const { config } = deps
  const tool = call.function.name
  const { mode } = yield* Ref.get(conversation.settings)
  const sandboxed = (yield* deps.sandbox.state)._tag === "On"
  const needed = mcpApproval === undefined
    ? approvalNeeded(config.permissions, mode, tool, input, conversation.cwd, sandboxed)
    : mcpApprovalNeeded(config.permissions, mode, mcpApproval)
  if (!needed) return undefined
  const toApprove = { tool, input, cwd: conversation.cwd }
  // the bash parser is loaded here, the first time a command needs approval
  const reader = tool === "bash" ? yield* commandReader : undefined
  const read = (command: string) => reader?.read(command) ?? { _tag: "Unresolved" as const, reason: "not bash" }
  const remembered = yield* deps.remembered.read(conversation.cwd)
  if (remembered.problem !== undefined && !deps.shownWarnings.has(remembered.problem)) {
    deps.shownWarnings.add(remembered.problem)
    yield* state.emit({ _tag: "Notice", text: remembered.problem })
  }
  if (isAllowed([...remembered.scopes, ...(yield* Ref.get(conversation.allowed))], toApprove, read)) return undefined
  yield* state.shown
  const answer = yield* deps.approver.ask({
    sessionId: yield* conversation.id,
    toolCallId: call.id,
    tool,
    title,
    input,
    preview: yield* withFiles(deps, previewOf(tool, input, conversation.cwd)),
    always: alwaysChoices(toApprove, read)
  })
  switch (answer._tag) {
    case "Once":
      return undefined
    case "Always": {
      yield* Ref.update(conversation.allowed, (scopes) => [...scopes, answer.scope])
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
  onOutput: (text: string) => void
) {
  return yield* withFiles(
    deps,
    runTool("bash", JSON.stringify({ command }), { cwd, maxOutput: deps.config.maxOutput, onOutput })
  )
})
