import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"
import { type Approval, type ApprovalRequest, Approver } from "../Approver"
import { describeForEditor, diffOf } from "./ToolUpdates"

/** The editor thread a prompt runs for: where approvals are asked and updates sent. */
export interface Peer {
  readonly sessionId: string
  readonly cwd: string
  readonly client: acp.AgentContext
  readonly log: (line: string) => void
  /** What the editor offered at `initialize`: its files and terminals are used when it did. */
  readonly capabilities?: acp.ClientCapabilities
}

/** Set around each prompt, inherited by the turn's fibers; the approver asks this peer. */
export const CurrentPeer = FiberRef.unsafeMake<Peer | undefined>(undefined)

export const ALLOW_ONCE = "allow-once"
export const ALLOW_ALWAYS = "allow-always"
export const REJECT = "reject"

export const permissionOptions = (tool: string): Array<acp.PermissionOption> => [
  { optionId: ALLOW_ONCE, name: "Allow once", kind: "allow_once" },
  { optionId: ALLOW_ALWAYS, name: `Always allow ${tool} in this session`, kind: "allow_always" },
  { optionId: REJECT, name: "Reject", kind: "reject_once" }
]

export const approvalOf = (outcome: acp.RequestPermissionOutcome): Approval =>
  outcome.outcome === "selected" && outcome.optionId === ALLOW_ONCE
    ? "once"
    : outcome.outcome === "selected" && outcome.optionId === ALLOW_ALWAYS
      ? "always"
      : "deny"

export const permissionRequest = (peer: Pick<Peer, "sessionId" | "cwd">, request: ApprovalRequest): acp.RequestPermissionRequest => {
  const diff = diffOf(request.tool, request.input, peer.cwd)
  return {
    sessionId: peer.sessionId,
    toolCall: {
      toolCallId: request.toolCallId,
      ...describeForEditor(request.tool, request.input, peer.cwd),
      status: "pending",
      rawInput: request.input,
      ...(diff === undefined ? {} : { content: [diff] })
    },
    options: permissionOptions(request.tool)
  }
}

const ask = (peer: Peer, request: ApprovalRequest) =>
  Effect.tryPromise({
    try: (signal) =>
      peer.client.request(acp.methods.client.session.requestPermission, permissionRequest(peer, request), {
        cancellationSignal: signal,
        stopWaitingOnCancel: true
      }),
    catch: (cause) => cause
  }).pipe(
    Effect.map((response) => approvalOf(response.outcome)),
    Effect.catchAll((cause) =>
      Effect.sync(() => {
        peer.log(`permission request for ${request.tool} failed (${cause instanceof Error ? cause.message : String(cause)}): denied`)
        return "deny" as const
      })
    ),
    Effect.tap((approval) =>
      approval === "deny"
        ? Effect.void
        : Effect.promise(() =>
            peer.client
              .notify(acp.methods.client.session.update, {
                sessionId: peer.sessionId,
                update: { sessionUpdate: "tool_call_update", toolCallId: request.toolCallId, status: "in_progress" }
              })
              .catch(() => undefined)
          )
    )
  )

/** Approval through `session/request_permission`; a cancelled or failed request is a refusal. */
export const AcpApproverLive = Layer.succeed(Approver, {
  ask: (request) =>
    Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => (peer === undefined ? Effect.succeed<Approval>("deny") : ask(peer, request)))
})
