import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"

import type { AlwaysChoice } from "../approvals/ApprovalScope"
import { Approval, type ApprovalRequest, Approver } from "../approvals/Approver"
import { forEditor, previewContent } from "./ToolUpdates"

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

const ALLOW_ONCE = "allow-once"
/** The choice the terminal's `a` picks: remembered for the project. */
const ALLOW_ALWAYS = "allow-always"
/** The terminal's `[s]ession only`: this exact command, for this session only. */
const ALLOW_SESSION = "allow-always-session"
/** `[p]roject` of the terminal: every edit and write inside the project, for this session. */
const ALLOW_PROJECT = "allow-always-project"
const REJECT = "reject"

const optionIdOf = (choice: AlwaysChoice): string =>
  choice.scope._tag === "Project" ? ALLOW_PROJECT : choice.keep === "session" ? ALLOW_SESSION : ALLOW_ALWAYS

/**
 * The option's name states what "always" covers: ``Always allow `git log` with read-only
 * options``, `Always run exactly this command`, `Always allow edits to src/a.ts`.
 */
const alwaysOptionName = (choice: AlwaysChoice, access: ApprovalRequest["access"]): string => {
  switch (choice.scope._tag) {
    case "CommandPrefix":
      return `Always ${choice.label}`
    case "ExactCommand":
      return choice.keep === "session"
        ? "Allow exactly this command until this session ends"
        : "Always run exactly this command, in this project"
    case "File":
      return access === "read"
        ? `Always allow reading ${choice.label}`
        : `Always allow edits to ${choice.label}`
    case "Project":
      return "Always allow edits in this project"
    case "Tool":
      return `Always allow ${choice.label}`
    case "Domain":
      return `Always allow fetching from ${choice.scope.host}`
  }
}

/** The options of a question to run a blocked command again outside the sandbox: once, or not. */
const outsideOptions: Array<acp.PermissionOption> = [
  { optionId: ALLOW_ONCE, name: "Run it outside the sandbox", kind: "allow_once" },
  { optionId: REJECT, name: "Keep it in the sandbox", kind: "reject_once" }
]

export const permissionOptions = (request: Pick<ApprovalRequest, "always" | "access">): Array<acp.PermissionOption> => [
  { optionId: ALLOW_ONCE, name: "Allow once", kind: "allow_once" },
  ...request.always.map(
    (choice): acp.PermissionOption => ({
      optionId: optionIdOf(choice),
      name: alwaysOptionName(choice, request.access),
      kind: "allow_always"
    })
  ),
  { optionId: REJECT, name: "Reject", kind: "reject_once" }
]

export const approvalOf = (
  outcome: acp.RequestPermissionOutcome,
  request: Pick<ApprovalRequest, "always">
): Approval => {
  if (outcome.outcome !== "selected") return Approval.deny
  if (outcome.optionId === ALLOW_ONCE) return Approval.once
  const chosen = request.always.find((choice) => optionIdOf(choice) === outcome.optionId)
  return chosen === undefined ? Approval.deny : Approval.chose(chosen)
}

export const permissionRequest = (
  peer: Pick<Peer, "sessionId" | "cwd">,
  request: ApprovalRequest
): acp.RequestPermissionRequest => {
  const content = previewContent(request.preview)
  const shown = forEditor(request.tool, request, peer.cwd)
  // a sub-agent's call: the editor never saw it start, so its title says whose it is
  const described = request.agent === undefined
    ? shown
    : { ...shown, title: `${request.agent}: ${request.tool} ${shown.title}` }
  if (request.outsideSandbox !== undefined) {
    return {
      sessionId: peer.sessionId,
      toolCall: {
        toolCallId: request.toolCallId,
        ...described,
        title: `Run outside the sandbox: ${described.title}`,
        rawInput: request.input,
        // the whole command, as its ordinary request shows it, then why the sandbox stopped it
        content: [
          ...content,
          {
            type: "content",
            content: {
              type: "text",
              text: `The sandbox blocked it: ${request.outsideSandbox}. Run it again outside the sandbox, unconfined?`
            }
          }
        ]
      },
      options: outsideOptions
    }
  }
  return {
    sessionId: peer.sessionId,
    toolCall: {
      toolCallId: request.toolCallId,
      ...described,
      status: "pending",
      rawInput: request.input,
      ...(content.length === 0 ? {} : { content })
    },
    options: permissionOptions(request)
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
    Effect.map((response) => approvalOf(response.outcome, request)),
    Effect.catchAll((cause) =>
      Effect.sync(() => {
        peer.log(
          `permission request for ${request.tool} failed (${
            cause instanceof Error ? cause.message : String(cause)
          }): denied`
        )
        return Approval.deny
      })
    ),
    Effect.tap((approval) => {
      const status = statusAfter(approval, request)
      return status === undefined ? Effect.void : Effect.promise(() =>
        peer.client
          .notify(acp.methods.client.session.update, {
            sessionId: peer.sessionId,
            update: { sessionUpdate: "tool_call_update", toolCallId: request.toolCallId, status }
          })
          .catch(() => undefined)
      )
    })
  )

/**
 * The status of the asked call once answered. A call of the conversation goes on under its id:
 * `in_progress` when allowed (its end comes as any call's). A sub-agent's call is shown only by
 * its question (its steps are under its `task` call): the answer closes it.
 */
const statusAfter = (approval: Approval, request: ApprovalRequest): acp.ToolCallStatus | undefined => {
  const allowed = approval._tag === "Once" || approval._tag === "Always"
  if (request.agent !== undefined) return allowed ? "completed" : "failed"
  return allowed ? "in_progress" : undefined
}

/** Approval through `session/request_permission`; a cancelled or failed request is a refusal. */
export const AcpApproverLive = Layer.succeed(Approver, {
  ask: (request) =>
    Effect.flatMap(
      FiberRef.get(CurrentPeer),
      (peer) => (peer === undefined ? Effect.succeed(Approval.deny) : ask(peer, request))
    )
})
