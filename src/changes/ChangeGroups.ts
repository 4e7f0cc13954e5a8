import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { ChangeRecord } from "../domain/Session"
import { diffTexts, tooLargeSummary } from "../lib/Diff"
import { type CheckpointsShape, MAX_CHECKPOINT_BYTES } from "./Checkpoints"

/**
 * The changes of a session (its `changes`) gathered into groups: the changes of one turn, of one
 * question that failed, or of one undo; each file's net change in a group, and its diff read from
 * the checkpoints.
 */

export interface ChangeGroup {
  /** `failed`: made by a question that failed (it left the conversation, and is no turn). */
  readonly kind: "turn" | "failed" | "undo"
  /**
   * The turn the changes were made in; for a failed question, the turn it came after; for an
   * undo, the number of turns the conversation held when it ran.
   */
  readonly turn: number
  /** `turn 3`, `failed question after turn 2`, or what an undo took back (`undo of turn 3`). */
  readonly label: string
  /** First line of the question ("" for an undo). */
  readonly question: string
  readonly at: string
  readonly entries: ReadonlyArray<ChangeRecord>
}

/** How a failed question's changes are named: by the turn it came after. */
export const failedLabel = (after: number): string =>
  after === 0 ? "failed question before turn 1" : `failed question after turn ${after}`

const groupKey = (change: ChangeRecord): string =>
  change.kind === "undo"
    ? `undo ${change.at}`
    : change.failed !== undefined
    ? `failed ${change.turn} ${change.failed}`
    : `turn ${change.turn} ${change.question ?? ""}`

const kindOf = (change: ChangeRecord): ChangeGroup["kind"] =>
  change.kind === "undo" ? "undo" : change.failed !== undefined ? "failed" : "turn"

const labelOf = (change: ChangeRecord): string => {
  switch (kindOf(change)) {
    case "undo":
      return change.question ?? "undo"
    case "failed":
      return failedLabel(change.turn)
    case "turn":
      return `turn ${change.turn}`
  }
}

/** The changes in order, gathered by turn (by failed question, and by undo); oldest first. */
export const groupChanges = (changes: ReadonlyArray<ChangeRecord>): Array<ChangeGroup> => {
  const groups: Array<ChangeGroup & { entries: Array<ChangeRecord> }> = []
  let lastKey: string | undefined
  for (const change of changes) {
    const key = groupKey(change)
    if (key === lastKey) {
      groups[groups.length - 1].entries.push(change)
      continue
    }
    lastKey = key
    const kind = kindOf(change)
    groups.push({
      kind,
      turn: change.turn,
      label: labelOf(change),
      question: kind === "undo" ? "" : (change.question ?? ""),
      at: change.at,
      entries: [change]
    })
  }
  return groups
}

/** One file across some changes: its content before the first and after the last. */
export interface NetChange {
  readonly path: string
  readonly before: string | null
  readonly after: string | null
  /** One of its changes was too large to keep. */
  readonly skipped: boolean
}

/** The net change of each file over `entries` (in the order they were made), in first-change order. */
export const netChanges = (entries: ReadonlyArray<ChangeRecord>): Array<NetChange> => {
  const byPath = new Map<string, { path: string; before: string | null; after: string | null; skipped: boolean }>()
  for (const entry of entries) {
    const held = byPath.get(entry.path)
    const skipped = entry.skipped !== undefined
    if (held === undefined) {
      byPath.set(entry.path, { path: entry.path, before: entry.before, after: entry.after, skipped })
    } else {
      held.after = entry.after
      held.skipped = held.skipped || skipped
    }
  }
  return [...byPath.values()].map(({ path, before, after, skipped }) => ({ path, before, after, skipped }))
}

/** How a change names a file: relative to the project when inside it, absolute otherwise. */
export const recordedPath = (cwd: string, file: string): string => {
  const relative = path.relative(cwd, file)
  const outside = relative === "" || relative === ".." || relative.startsWith(`..${path.sep}`) ||
    path.isAbsolute(relative)
  return outside ? path.resolve(file) : relative
}

// ---- text of blobs ----

const decoder = new TextDecoder("utf-8", { fatal: true })

/** The text of some bytes, or undefined when they are not UTF-8 text (a NUL byte counts as binary). */
export const textOf = (bytes: Uint8Array): string | undefined => {
  if (bytes.includes(0)) return undefined
  try {
    return decoder.decode(bytes)
  } catch {
    return undefined
  }
}

export interface FileDiff {
  readonly path: string
  readonly added: number
  readonly removed: number
  /** The file did not exist before / does not exist after. */
  readonly created: boolean
  readonly deleted: boolean
  /** Unified diff, or a line saying why there is none (binary, too large, checkpoint missing). */
  readonly diff: string
  /** The diff was too large to compute (lib/Diff.ts): `diff` sums it up, the counts are estimates. */
  readonly estimated?: true
  /** Set when the counts are unknown. */
  readonly problem?: string
}

export const TOO_LARGE = `larger than ${MAX_CHECKPOINT_BYTES / 1024 / 1024} MB: not recorded`

export const describeDiff = (
  shown: string,
  before: Buffer | null,
  after: Buffer | null
): Omit<FileDiff, "path" | "created" | "deleted"> => {
  const beforeText = before === null ? "" : textOf(before)
  const afterText = after === null ? "" : textOf(after)
  if (beforeText === undefined || afterText === undefined) {
    return {
      added: 0,
      removed: 0,
      diff: `binary content (${before?.length ?? 0} → ${after?.length ?? 0} bytes)`,
      problem: "binary"
    }
  }
  const diff = diffTexts(shown, beforeText, afterText)
  if (diff.tooLarge) return { added: diff.added, removed: diff.removed, diff: tooLargeSummary(diff), estimated: true }
  return { added: diff.added, removed: diff.removed, diff: diff.diff }
}

// ---- a group with its files, read from the checkpoints ----

/** A file's net change in a group, with its contents before and after when they are kept. */
export interface FileChange extends FileDiff {
  readonly before: Buffer | null
  readonly after: Buffer | null
}

export interface GroupOverview {
  readonly group: ChangeGroup
  readonly files: ReadonlyArray<FileChange>
}
const blobOf = (checkpoints: CheckpointsShape, cwd: string, hash: string | null) =>
  hash === null ? Effect.succeed(null) : checkpoints.get(cwd, hash)

const fileDiff = (checkpoints: CheckpointsShape, cwd: string, net: NetChange) =>
  Effect.gen(function*() {
    const created = net.before === null && !net.skipped
    const deleted = net.after === null && !net.skipped
    const none = { path: net.path, added: 0, removed: 0, created, deleted, before: null, after: null }
    if (net.skipped) return { ...none, diff: TOO_LARGE, problem: TOO_LARGE } satisfies FileChange
    const blobs = yield* Effect.either(
      Effect.all([blobOf(checkpoints, cwd, net.before), blobOf(checkpoints, cwd, net.after)])
    )
    if (blobs._tag === "Left") {
      return { ...none, diff: blobs.left.message, problem: blobs.left.message } satisfies FileChange
    }
    const [before, after] = blobs.right
    return {
      path: net.path,
      created,
      deleted,
      before,
      after,
      ...describeDiff(net.path, before, after)
    } satisfies FileChange
  })

/** One group with the net change of each of its files, read from the checkpoints of `cwd`. */
export const groupOverview = (checkpoints: CheckpointsShape, cwd: string, group: ChangeGroup) =>
  Effect.map(
    Effect.forEach(netChanges(group.entries), (net) => fileDiff(checkpoints, cwd, net)),
    (files): GroupOverview => ({ group, files })
  )

/** What `/changes` lists, for any session (`mm sessions show` too): every group and its files. */
export const changesOverview = (checkpoints: CheckpointsShape, cwd: string, changes: ReadonlyArray<ChangeRecord>) =>
  Effect.forEach(groupChanges(changes), (group) => groupOverview(checkpoints, cwd, group))
