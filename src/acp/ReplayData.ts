import * as path from "node:path"

import type * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { Agent } from "../agent/Agent"
import { recordedJobWords } from "../agent/JobWords"
import { textOf } from "../changes/ChangeGroups"
import { Checkpoints, readBlobSync } from "../changes/Checkpoints"
import type { ChangeRecord, Session } from "../domain/Session"
import { turnStarts } from "../domain/Turns"
import type { Conversation } from "../sessions/Conversation"
import { Keeper } from "../sessions/Keeper"
import { ToolRegistry } from "../tools/Registry"
import { replayBlocks } from "./PromptBlocks"
import { replayUpdates, type Told } from "./Replay"
import { agentText, type ShownChange } from "./ToolUpdates"

/**
 * `session/load`'s replay, gathered from the file and what it points at: the archives of
 * earlier compactions first, then the conversation with the blocks its questions were asked
 * with and the whole-file diff of each file tool call (from the change log's blobs), then the
 * context meter and the session's title as they stand.
 */

const COMPACTED_HERE =
  "— The conversation was compacted here: the turns above were replaced, for the model, by the summary below. —"

/** A blob's text, or undefined when it is gone, damaged or not text. */
const blobText = (cwd: string, hash: string | null) =>
  hash === null
    ? Effect.succeed(undefined)
    : Effect.map(
      Effect.flatMap(Checkpoints, (c) => Effect.either(c.get(cwd, hash))),
      (read) => (Either.isRight(read) ? textOf(read.right) : undefined)
    )

/** The changes file tool calls made, by call id in the order recorded, read back from their blobs. */
const fileChanges = (changes: ReadonlyArray<ChangeRecord>, cwd: string) =>
  Effect.gen(function*() {
    const shown = (record: ChangeRecord) =>
      record.tool_call_id !== undefined && record.kind !== "undo" && record.skipped === undefined &&
      record.after !== null
    const records = changes.filter(shown)
    // each blob read once (a file edited again starts from the last edit's blob), several at a time
    const hashes = [...new Set(records.flatMap((r) => [r.before, r.after].filter((h): h is string => h !== null)))]
    const texts = new Map(
      yield* Effect.forEach(hashes, (hash) => Effect.map(blobText(cwd, hash), (text) => [hash, text] as const), {
        concurrency: 16
      })
    )
    const byCall = new Map<string, Array<ShownChange>>()
    for (const record of records) {
      const after = texts.get(record.after!)
      const before = record.before === null ? undefined : texts.get(record.before)
      if (after === undefined || (record.before !== null && before === undefined)) continue
      const id = record.tool_call_id!
      byCall.set(id, [...(byCall.get(id) ?? []), { file: path.resolve(cwd, record.path), before, after }])
    }
    return byCall
  })

/** The questions asked from an editor, as the blocks it sent, by message index. */
const userBlocks = (session: Session, cwd: string) =>
  Effect.gen(function*() {
    const told = new Map<number, ReadonlyArray<acp.SessionUpdate>>()
    for (const [i, message] of session.messages.entries()) {
      if (message.role !== "user" || message.blocks === undefined || message.blocks.length === 0) continue
      told.set(i, yield* replayBlocks(message.blocks, cwd))
    }
    return told
  })

/** Where the session's plan is told: before the first question of a turn after the one that wrote it. */
const planTold = (session: Session): Pick<Told, "plan"> => {
  if (session.plan === undefined) return {}
  const { entries, turn } = session.plan
  const next = turnStarts(session).find((start) => start.turn > turn)
  return { plan: { at: next === undefined ? session.messages.length : next.index, entries } }
}

/**
 * One stored conversation's updates, sharing `usedIds` with the others of the same replay.
 * `changes`: the change log (an archive has none of its own: the compacted session keeps it).
 */
const conversationUpdates = (
  session: Session,
  cwd: string,
  usedIds: Set<string>,
  changes: ReadonlyArray<ChangeRecord> = session.changes ?? []
) =>
  Effect.gen(function*() {
    const told: Told = {
      userBlocks: yield* userBlocks(session, cwd),
      fileChanges: yield* fileChanges(changes, cwd),
      usedIds,
      blob: (hash) => readBlobSync(cwd, hash),
      tools: yield* ToolRegistry,
      ...planTold(session),
      ...(session.jobs === undefined
        ? {}
        : { jobs: new Map(session.jobs.map((job) => [job.callId, recordedJobWords(job)])) })
    }
    return replayUpdates(session.messages, cwd, told)
  })

/** The archives a compacted session points at, oldest first; one that cannot be read is said in a line. */
const archiveUpdates = (session: Session, cwd: string, usedIds: Set<string>) =>
  Effect.gen(function*() {
    const keeper = yield* Keeper
    const updates: Array<acp.SessionUpdate> = []
    for (const id of session.archives ?? []) {
      const loaded = yield* Effect.either(Effect.flatMap(keeper.load(cwd, id), (archive) => archive.snapshot))
      if (Either.isLeft(loaded)) {
        updates.push(agentText(`(the turns archived as ${id} cannot be shown: ${loaded.left.message})\n\n`))
        continue
      }
      updates.push(...(yield* conversationUpdates(loaded.right, cwd, usedIds, session.changes ?? [])))
    }
    if (updates.length > 0) updates.push(agentText(`\n\n${COMPACTED_HERE}\n\n`))
    return updates
  })

/** The context meter and the title, as the session stands now. */
export const standingUpdates = Effect.fn("Acp.standingUpdates")(function*(conversation: Conversation) {
  const report = yield* Effect.flatMap(Agent, (agent) => agent.context(conversation))
  const session = yield* conversation.snapshot
  const updates: Array<acp.SessionUpdate> = [
    { sessionUpdate: "usage_update", used: report.measured ?? report.total, size: report.contextWindow }
  ]
  if (session.title !== "") {
    updates.push({ sessionUpdate: "session_info_update", title: session.title, updatedAt: session.updatedAt })
  }
  return updates
})

/** Everything `session/load` tells of a stored thread, in order. */
export const replayOf = Effect.fn("Acp.replayOf")(function*(conversation: Conversation) {
  const session = yield* conversation.snapshot
  const usedIds = new Set<string>()
  return [
    ...(yield* archiveUpdates(session, conversation.cwd, usedIds)),
    ...(yield* conversationUpdates(session, conversation.cwd, usedIds)),
    ...(yield* standingUpdates(conversation))
  ]
})
