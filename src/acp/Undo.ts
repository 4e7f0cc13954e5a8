import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"

import { type FileDiff, textOf } from "../changes/ChangeGroups"
import type { ChangesShape } from "../changes/Changes"
import { type PlannedFile, undoActionable } from "../changes/UndoPlan"
import { quickRandomHex } from "../lib/QuickIds"
import type { Conversation } from "../sessions/Conversation"
import { changesListing, leftOutsideLine, NO_CHANGES, undoneLine } from "../text/ChangesText"
import { plain } from "../text/Style"
import type { Peer } from "./AcpApprover"
import { agentText, textBlock } from "./ToolUpdates"

/**
 * `/changes` and `/undo` from an editor: diffs as `diff` tool-call content, the confirmation
 * (and one per file changed since mm wrote it) as `session/request_permission`.
 */

const UNDO = "undo"
const KEEP = "keep"

const send = (peer: Peer, updates: ReadonlyArray<acp.SessionUpdate>) =>
  Effect.promise(async () => {
    try {
      for (const update of updates) {
        await peer.client.notify(acp.methods.client.session.update, { sessionId: peer.sessionId, update })
      }
    } catch {
      // the editor went away
    }
  })

const text = (line: string): acp.ToolCallContent => ({ type: "content", content: textBlock(line) })

/** The change of one file as the editor shows it: a diff when both sides are text. */
const diffContent = (
  file: string,
  before: Buffer | null,
  after: Buffer | null,
  shown: FileDiff
): Array<acp.ToolCallContent> => {
  const oldText = before === null ? null : textOf(before)
  const newText = after === null ? "" : textOf(after)
  if (oldText === undefined || newText === undefined || shown.problem !== undefined || shown.estimated === true) {
    return [text(`${shown.path}: ${shown.diff}`)]
  }
  const diff: acp.ToolCallContent = { type: "diff", path: file, oldText, newText }
  return after === null ? [diff, text(`${shown.path}: deleted`)] : [diff]
}

const plannedContent = (file: PlannedFile): Array<acp.ToolCallContent> => {
  switch (file.state) {
    case "ready":
      return diffContent(file.file, file.current, file.target, file.diff)
    case "changed":
      return [text(`${file.path} was changed after mm wrote it: asked separately`)]
    case "same":
      return [text(`${file.path} is already as it was: nothing to do`)]
    case "unavailable":
      return [
        text(
          file.outside !== undefined
            ? leftOutsideLine(file.path, file.reason ?? "")
            : `${file.path} cannot be restored: ${file.reason ?? ""}`
        )
      ]
  }
}

const ask = (peer: Peer, request: acp.RequestPermissionRequest) =>
  Effect.tryPromise({
    try: (signal) =>
      peer.client.request(acp.methods.client.session.requestPermission, request, {
        cancellationSignal: signal,
        stopWaitingOnCancel: true
      }),
    catch: (cause) => cause
  }).pipe(
    Effect.map((response) => response.outcome.outcome === "selected" && response.outcome.optionId === UNDO),
    Effect.catchAll((cause) =>
      Effect.sync(() => {
        peer.log(
          `permission request for /undo failed (${
            cause instanceof Error ? cause.message : String(cause)
          }): nothing undone`
        )
        return false
      })
    )
  )

const positive = (arg: string): number | undefined => (/^[1-9]\d{0,5}$/.test(arg) ? Number(arg) : undefined)

const done = { stopReason: "end_turn" } satisfies acp.PromptResponse

/** The question asked once for the whole undo: take back the turns, or keep their changes. */
const undoOptions = (label: string): Array<acp.PermissionOption> => [
  { optionId: UNDO, name: `Undo ${label}`, kind: "allow_once" },
  { optionId: KEEP, name: "Keep the changes", kind: "reject_once" }
]

/** A file changed since mm wrote it: restored only when the user agrees again, for that file. */
const restoreAnyway = (peer: Peer, toolCallId: string, file: PlannedFile) =>
  ask(peer, {
    sessionId: peer.sessionId,
    toolCall: {
      toolCallId,
      title: `Restore ${file.path}? It was changed after mm wrote it`,
      kind: "edit",
      status: "pending",
      locations: [{ path: file.file }],
      content: [
        text(`${file.path} was changed after mm wrote it; restoring it gives up these changes.`),
        ...diffContent(file.file, file.current, file.target, file.diff)
      ]
    },
    options: [
      { optionId: UNDO, name: `Restore ${path.basename(file.path)}`, kind: "allow_once" },
      { optionId: KEEP, name: "Leave it as it is", kind: "reject_once" }
    ]
  })

export const acpUndo = (changes: ChangesShape, peer: Peer, conversation: Conversation, arg: string) =>
  Effect.gen(function*() {
    const count = arg === "" ? 1 : positive(arg)
    if (count === undefined) {
      yield* send(peer, [agentText("Usage: /undo [N] — take back the last N turns that changed files (default 1).")])
      return done
    }
    const plan = yield* changes.plan(conversation, count)
    if (plan === undefined) {
      yield* send(peer, [agentText(`Nothing to undo: ${NO_CHANGES}.`)])
      return done
    }
    const toolCallId = `undo-${quickRandomHex(4)}`
    const title = `Undo ${plan.label}`
    const locations = plan.files.map((f) => ({ path: f.file }))
    const content = plan.files.flatMap(plannedContent)
    const { toWrite: actionable, recordOnly } = undoActionable(plan)
    const toolCall = { toolCallId, title, kind: "edit" as const, locations, content }
    yield* send(peer, [{ sessionUpdate: "tool_call", ...toolCall, status: "pending" }])
    if (actionable.length === 0 && !recordOnly) {
      yield* send(peer, [
        { sessionUpdate: "tool_call_update", toolCallId, status: "completed" },
        agentText(`Nothing to undo of ${plan.label}.`)
      ])
      return done
    }
    // only files found restored by an undo stopped before it was recorded: recorded without asking
    const agreed = recordOnly || (yield* ask(peer, {
      sessionId: peer.sessionId,
      toolCall: { ...toolCall, status: "pending" },
      options: undoOptions(plan.label)
    }))
    if (!agreed) {
      yield* send(peer, [{
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: "failed",
        content: [text("nothing undone")]
      }, agentText("Nothing undone.")])
      return done
    }
    const confirmed = new Set<string>()
    for (const file of actionable.filter((f) => f.state === "changed")) {
      if (yield* restoreAnyway(peer, toolCallId, file)) confirmed.add(file.path)
    }
    yield* send(peer, [{ sessionUpdate: "tool_call_update", toolCallId, status: "in_progress" }])
    const report = yield* changes.apply(conversation, plan, confirmed)
    for (const warning of report.warnings) peer.log(warning)
    const line = undoneLine(report)
    yield* send(peer, [
      {
        sessionUpdate: "tool_call_update",
        toolCallId,
        status: report.restored.length + report.deleted.length > 0 ? "completed" : "failed",
        content: [...content.filter((c) => c.type === "diff"), text(line)]
      },
      agentText(line)
    ])
    return done
  })

export const acpChanges = (changes: ChangesShape, peer: Peer, conversation: Conversation, arg: string) =>
  Effect.gen(function*() {
    if (arg === "") {
      yield* send(peer, [agentText(changesListing(yield* changes.overview(conversation), plain))])
      return done
    }
    const turn = positive(arg)
    if (turn === undefined) {
      yield* send(peer, [agentText("Usage: /changes [N] — N a turn number, as /changes lists them.")])
      return done
    }
    const overview = yield* changes.turnDiffs(conversation, turn)
    if (overview === undefined) {
      yield* send(peer, [agentText(`Turn ${turn} changed no file through mm's file tools.`)])
      return done
    }
    yield* send(peer, [
      {
        sessionUpdate: "tool_call",
        toolCallId: `changes-${quickRandomHex(4)}`,
        title: `Changes of turn ${turn}`,
        kind: "read",
        status: "completed",
        locations: overview.files.map((f) => ({ path: path.resolve(conversation.cwd, f.path) })),
        content: overview.files.flatMap((f) =>
          diffContent(path.resolve(conversation.cwd, f.path), f.before, f.after, f)
        )
      }
    ])
    return done
  })
