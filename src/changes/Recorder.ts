import * as path from "node:path"

import * as Effect from "effect/Effect"

import { type ChangeRecord } from "../domain/Session"
import { firstLine } from "../lib/OneLine"
import type { Conversation } from "../sessions/Conversation"
import type { FileAccessShape } from "../tools/FileAccess"
import type { FileWrite } from "../tools/Tool"
import { recordedPath } from "./ChangeGroups"
import { type CheckpointsShape, hashOf, MAX_CHECKPOINT_BYTES } from "./Checkpoints"
import { readCurrent } from "./CurrentContent"

/**
 * Recording a file tool's change before it is made (its blobs, then its entry in the
 * session), and dropping that entry when the write failed and left the file alone.
 */

/** The layer's checkpoints, and the checkpoint warnings already shown (each is said once). */
export interface Deps {
  readonly checkpoints: CheckpointsShape
  /** Who reads and writes the project's files: the disk, or the editor (`mm acp`). */
  readonly files: FileAccessShape
  readonly shownWarnings: Set<string>
}

export const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms).toISOString())

export const persistFor = (conversation: Conversation) =>
  Effect.map(conversation.status, (status) => status._tag !== "Off")

export const keep = (deps: Deps, conversation: Conversation, bytes: Uint8Array, persist: boolean) =>
  Effect.map(deps.checkpoints.put(conversation.cwd, bytes, persist), ({ hash, warning }) => {
    const fresh = warning !== undefined && !deps.shownWarnings.has(warning)
    if (fresh) deps.shownWarnings.add(warning)
    return { hash, warning: fresh ? warning : undefined }
  })

// ---- recording ----

export type Recorder = (
  conversation: Conversation,
  call: { readonly turn: number; readonly question: string; readonly toolCallId: string },
  notice: (text: string) => Effect.Effect<void>,
  /** Where a failed save of the session is said (default: `notice`): at once, whatever the write does. */
  saveNotice?: (text: string) => Effect.Effect<void>
) => (write: FileWrite) => Effect.Effect<void>

export type Forget = (
  conversation: Conversation,
  call: { readonly turn: number; readonly toolCallId: string }
) => Effect.Effect<boolean>

export const recorder = (deps: Deps): Recorder => (conversation, call, notice, saveNotice = notice) =>
  Effect.fn("Changes.recorder")(function*(write: FileWrite) {
    let current: ReturnType<typeof readCurrent>
    try {
      current = readCurrent(write.file)
    } catch {
      return // the write will fail and say why; there is nothing to record
    }
    const after = Buffer.from(write.content, "utf8")
    const at = yield* now
    const entryOf = (before: string | null, after: string | null): ChangeRecord => ({
      turn: call.turn,
      at,
      tool_call_id: call.toolCallId,
      path: recordedPath(conversation.cwd, write.file),
      before,
      after,
      question: firstLine(call.question).slice(0, 100)
    })
    let entry: ChangeRecord
    if (current.tooLarge || after.length > MAX_CHECKPOINT_BYTES) {
      entry = { ...entryOf(null, null), skipped: "too large" }
    } else {
      const persist = yield* persistFor(conversation)
      const before = current.bytes === null ? undefined : yield* keep(deps, conversation, current.bytes, persist)
      const kept = yield* keep(deps, conversation, after, persist)
      for (const warning of [before?.warning, kept.warning]) if (warning !== undefined) yield* notice(warning)
      entry = entryOf(before?.hash ?? null, kept.hash)
    }
    const saved = yield* conversation.update((session) => ({
      ...session,
      changes: [...(session.changes ?? []), entry]
    }))
    if (saved !== undefined) yield* saveNotice(saved)
  })

/** Whether the file is still as `entry` found it before the write: the failed write left it alone. */
const untouched = (cwd: string, entry: ChangeRecord): boolean => {
  if (entry.skipped !== undefined) return true
  try {
    const current = readCurrent(path.resolve(cwd, entry.path))
    if (current.tooLarge) return false
    return current.bytes === null ? entry.before === null : hashOf(current.bytes) === entry.before
  } catch {
    return false
  }
}

/**
 * Ids are the model's (or its server's): some reuse `call_0` in every answer, so a record is
 * matched by its turn as well, and never by id alone (that once took turn 1's edit away).
 */
export const forget = (deps: Deps): Forget =>
  Effect.fn("Changes.forget")(function*(conversation: Conversation, call) {
    const ofCall = (c: ChangeRecord) =>
      c.kind === undefined && c.turn === call.turn && c.tool_call_id === call.toolCallId
    const { changes } = yield* conversation.snapshot
    const recorded = (changes ?? []).filter(ofCall)
    const dropped = recorded.filter((c) => untouched(conversation.cwd, c))
    if (dropped.length === 0) return recorded.length > 0
    yield* conversation.update((session) => ({
      ...session,
      changes: (session.changes ?? []).filter((c) =>
        !(ofCall(c) && dropped.some((d) => d.path === c.path && d.at === c.at && d.after === c.after))
      )
    }))
    // a checkpoint warning of the dropped record was not shown (ToolCalls holds it): it may be said again
    deps.shownWarnings.clear()
    return dropped.length < recorded.length
  })
