import * as Effect from "effect/Effect"

import type { ApprovalRequest } from "../approvals/Approver"
import type { ToolCall } from "../domain/Session"
import {
  blockedBy,
  type Confine,
  type ConfinedCall,
  SANDBOX_BLOCKED,
  type SandboxState,
  writableOf
} from "../tools/Sandbox"
import type { ToolResult } from "../tools/Tool"
import type { CallDescription, ToolRecord } from "../tools/ToolRecord"
import type { Deps } from "./Deps"

/** What a call needs to be asked about again, outside the sandbox. */
interface StepOutRequest {
  readonly sessionId: string
  readonly call: ToolCall
  readonly tool: ToolRecord
  readonly input: Record<string, unknown> | undefined
  readonly described: CallDescription
  readonly preview: ApprovalRequest["preview"]
}

/** Why a blocked command was not run again outside, as the model reads it. */
const notRunOutside = (answer: { readonly _tag: string; readonly instead?: string | undefined }): string =>
  answer._tag === "NoOneToAsk"
    ? "not run outside the sandbox: no terminal to ask"
    : answer.instead !== undefined && answer.instead.trim() !== ""
    ? `not run outside the sandbox, the user says: ${answer.instead.trim()}`
    : "not run outside the sandbox: the user said no"

/** The view the reason for a block is checked against: what the sandbox lets a command in `cwd` write. */
const viewOf = (state: Extract<SandboxState, { _tag: "On" }>, cwd: string) => ({
  cwd,
  network: state.network,
  writable: writableOf(state, cwd)
})

/** Runs `run` confined as `call` says, its limit line added, and what the call held freed whatever happens. */
const runInside = (call: ConfinedCall, run: (confine: Confine | undefined) => Effect.Effect<ToolResult>) =>
  Effect.ensuring(
    Effect.map(run(call.confine), (result) => {
      const limit = call.limitLine(result)
      return limit === undefined ? result : { ...result, output: `${result.output}\n${limit}` }
    }),
    Effect.sync(() => call.release())
  )

/**
 * A command the model runs, confined when the sandbox is on. When the confined command failed
 * and its output shows the sandbox stopped it, the user is asked whether to run it outside
 * (never done silently; refused when no one can answer), with the whole command and mm's own
 * reason; a result the sandbox blocked ends with SANDBOX_BLOCKED, so the model can say so
 * instead of trying again blindly.
 */
export const runConfined = Effect.fn("Agent.runConfined")(function*(
  deps: Deps,
  cwd: string,
  request: () => Effect.Effect<StepOutRequest>,
  run: (confine: Confine | undefined) => Effect.Effect<ToolResult>
) {
  const state = yield* deps.sandbox.state
  const call = deps.sandbox.confine(state, cwd)
  if (state._tag === "Off" || call === undefined) return yield* run(undefined)
  const confined = yield* runInside(call, run)
  const reason = confined.failed ? blockedBy(confined.output, viewOf(state, cwd)) : undefined
  if (reason === undefined) return confined
  const asked = yield* request()
  const answer = yield* deps.approver.ask({
    sessionId: asked.sessionId,
    toolCallId: asked.call.id,
    tool: asked.tool.name,
    access: asked.tool.access,
    title: asked.described.title,
    kind: asked.described.kind,
    locations: asked.described.locations,
    input: asked.input,
    preview: asked.preview,
    always: [],
    outsideSandbox: reason
  })
  if (answer._tag === "Once" || answer._tag === "Always") return yield* run(undefined)
  return { output: `${confined.output}\n${notRunOutside(answer)}\n${SANDBOX_BLOCKED}`, failed: true }
})
