import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { type ChangeRecord, firstLine, type Message } from "../domain/Session"
import { lineCounts, unifiedDiff } from "../lib/Diff"
import type { Conversation } from "../sessions/Conversation"
import { FileAccess, type FileAccessShape } from "../tools/FileAccess"
import type { FileWrite } from "../tools/Tools"
import {
  Checkpoints,
  CheckpointsLive,
  type CheckpointsShape,
  hashOf,
  MAX_CHECKPOINT_BYTES,
  writeFileAtomic
} from "./Checkpoints"

/**
 * What mm's file tools changed in a session (its `changes`), and `/undo`: recording each
 * change before it is made, listing them by turn, and taking the last turns back.
 * docs/how-to/undo.md tells the user's side.
 */

// ---------------------------------------------------------------------------------------
// Groups: the changes of one turn, or of one undo

export interface ChangeGroup {
  readonly kind: "turn" | "undo"
  /** The turn the changes were made in; for an undo, the turns completed when it ran. */
  readonly turn: number
  /** `turn 3`, or what an undo took back (`undo of turn 3`). */
  readonly label: string
  /** First line of the turn's question ("" for an undo). */
  readonly question: string
  readonly at: string
  readonly entries: ReadonlyArray<ChangeRecord>
}

const groupKey = (change: ChangeRecord): string =>
  change.kind === "undo" ? `undo ${change.at}` : `turn ${change.turn} ${change.question ?? ""}`

/** The changes in order, gathered by turn (and by undo); oldest first. */
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
    const undo = change.kind === "undo"
    groups.push({
      kind: undo ? "undo" : "turn",
      turn: change.turn,
      label: undo ? (change.question ?? "undo") : `turn ${change.turn}`,
      question: undo ? "" : (change.question ?? ""),
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

// ---------------------------------------------------------------------------------------
// Text of blobs

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
  /** Set when the counts are unknown. */
  readonly problem?: string
}

const TOO_LARGE = `larger than ${MAX_CHECKPOINT_BYTES / 1024 / 1024} MB: not recorded`

const describeDiff = (
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
  const counts = lineCounts(beforeText, afterText)
  return { ...counts, diff: unifiedDiff(shown, beforeText, afterText) }
}

// ---------------------------------------------------------------------------------------
// Undo plans

export type PlannedState =
  /** As the agent (or the undo) left it: restored on the one confirmation. */
  | "ready"
  /** Changed since: restored only if confirmed for this file. */
  | "changed"
  /** Already as it would be restored: nothing to do. */
  | "same"
  /** Cannot be restored: too large when changed, or its checkpoint is gone. */
  | "unavailable"

export interface PlannedFile {
  readonly path: string
  readonly file: string
  /** `delete`: the turn created it. */
  readonly action: "restore" | "delete"
  readonly state: PlannedState
  readonly targetHash: string | null
  readonly target: Buffer | null
  readonly currentHash: string | null
  /** The file's content now (null: it does not exist, or could not be read). */
  readonly current: Buffer | null
  /** Current content → restored content. */
  readonly diff: FileDiff
  readonly reason?: string
}

export interface UndoPlan {
  /** `turn 3`, `turns 3, 2`, `undo of turn 3`. */
  readonly label: string
  /** Every group taken back is an agent's turn (not an undo). */
  readonly ofTurns: boolean
  readonly files: ReadonlyArray<PlannedFile>
}

export interface UndoReport {
  readonly label: string
  readonly restored: ReadonlyArray<string>
  readonly deleted: ReadonlyArray<string>
  readonly left: ReadonlyArray<{ readonly path: string; readonly reason: string }>
  /** What the model is told (also kept in the conversation); undefined when nothing changed. */
  readonly note: string | undefined
  readonly warnings: ReadonlyArray<string>
}

const planLabel = (groups: ReadonlyArray<ChangeGroup>): string => {
  if (groups.every((g) => g.kind === "turn")) {
    return groups.length === 1 ? `turn ${groups[0].turn}` : `turns ${groups.map((g) => g.turn).join(", ")}`
  }
  return groups.map((g) => g.label).join(", ")
}

const listOf = (paths: ReadonlyArray<string>): string => paths.join(", ")

/** The line the model reads after an undo, so that it does not believe its edits are still there. */
/**
 * The editor's way to write files, when `/undo` runs for an editor that offers one (`mm acp`
 * with `fs/write_text_file`); undefined on the disk. Deletions and files that are not text
 * go to the disk either way: the protocol writes text only.
 */
const editorWriter: Effect.Effect<FileAccessShape | undefined> = Effect.flatMap(
  Effect.serviceOption(FileAccess),
  (provided) =>
    provided._tag === "None"
      ? Effect.succeed(undefined)
      : Effect.map(provided.value.writesDisk, (disk) => (disk ? undefined : provided.value))
)

export const noteText = (
  plan: Pick<UndoPlan, "label" | "ofTurns">,
  report: Pick<UndoReport, "restored" | "deleted" | "left">
): string => {
  const files = [...report.restored, ...report.deleted]
  const head = plan.ofTurns ? `the user reverted the changes of ${plan.label}` : `the user took back the ${plan.label}`
  const parts = [`[mm] ${head}: files ${listOf(files)}`]
  if (report.deleted.length > 0) parts.push(`(${listOf(report.deleted)} deleted)`)
  let text = parts.join(" ")
  if (report.left.length > 0) text += `; left as they are: ${listOf(report.left.map((l) => l.path))}`
  return text
}

// ---------------------------------------------------------------------------------------
// The service

/** A file's net change in a group, with its contents before and after when they are kept. */
export interface FileChange extends FileDiff {
  readonly before: Buffer | null
  readonly after: Buffer | null
}

export interface GroupOverview {
  readonly group: ChangeGroup
  readonly files: ReadonlyArray<FileChange>
}

export interface ChangesShape {
  /** The `beforeWrite` of the file tools during a turn: keeps the blobs, then the entry in the session. */
  readonly recorder: (
    conversation: Conversation,
    call: { readonly turn: number; readonly question: string; readonly toolCallId: string },
    notice: (text: string) => Effect.Effect<void>
  ) => (write: FileWrite) => Effect.Effect<void>
  /** Drops what a call recorded when its write failed after all. */
  readonly forget: (conversation: Conversation, toolCallId: string) => Effect.Effect<void>
  /** `/changes`: every group with its files and their line counts. */
  readonly overview: (conversation: Conversation) => Effect.Effect<ReadonlyArray<GroupOverview>>
  /** `/changes N`: the diffs of turn N; undefined when that turn changed nothing. */
  readonly turnDiffs: (conversation: Conversation, turn: number) => Effect.Effect<GroupOverview | undefined>
  /** What `/undo [count]` would do; undefined when nothing was changed. */
  readonly plan: (conversation: Conversation, count: number) => Effect.Effect<UndoPlan | undefined>
  /**
   * Restores the plan's `ready` files and the `changed` ones in `confirmed`, each written
   * atomically; then records the undo as changes of kind `undo`, and the note, in the session.
   */
  readonly apply: (
    conversation: Conversation,
    plan: UndoPlan,
    confirmed: ReadonlySet<string>
  ) => Effect.Effect<UndoReport>
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

export class Changes extends Context.Tag("mm/Changes")<Changes, ChangesShape>() {}

const readCurrent = (file: string): { readonly bytes: Buffer | null; readonly tooLarge: boolean } => {
  const stat = fs.statSync(file, { throwIfNoEntry: false })
  if (stat === undefined) return { bytes: null, tooLarge: false }
  if (!stat.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: "EISDIR" })
  if (stat.size > MAX_CHECKPOINT_BYTES) return { bytes: null, tooLarge: true }
  return { bytes: fs.readFileSync(file), tooLarge: false }
}

/**
 * What the file holds now, as the user sees it: the editor's buffer (unsaved changes
 * included) when the editor reads files for mm, the disk otherwise. A buffer the editor
 * cannot read (a file that does not exist, say) is looked for on disk.
 */
const currentContent = (
  file: string,
  shown: string
): Effect.Effect<{ readonly bytes: Buffer | null; readonly tooLarge: boolean }, unknown> =>
  Effect.flatMap(Effect.serviceOption(FileAccess), (provided) => {
    const fromDisk = Effect.try({ try: () => readCurrent(file), catch: (cause) => cause })
    if (provided._tag === "None") return fromDisk
    return Effect.flatMap(provided.value.readsDisk, (disk) =>
      disk
        ? fromDisk
        : Effect.flatMap(provided.value.read(file, shown), (read) =>
          read._tag === "Right"
            ? Effect.succeed({ bytes: Buffer.from(read.right, "utf8"), tooLarge: false })
            : fromDisk))
  })

const problemText = (cause: unknown): string => String((cause as Error)?.message ?? cause).split("\n")[0]

export const ChangesLayer = Layer.effect(
  Changes,
  Effect.gen(function*() {
    const checkpoints = yield* Checkpoints
    const shownWarnings = new Set<string>()

    const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms).toISOString())

    const persistFor = (conversation: Conversation) =>
      Effect.map(conversation.status, (status) => status._tag !== "Off")

    const keep = (conversation: Conversation, bytes: Uint8Array, persist: boolean) =>
      Effect.map(checkpoints.put(conversation.cwd, bytes, persist), ({ hash, warning }) => {
        const fresh = warning !== undefined && !shownWarnings.has(warning)
        if (fresh) shownWarnings.add(warning)
        return { hash, warning: fresh ? warning : undefined }
      })

    const blobOrNull = (conversation: Conversation, hash: string | null) =>
      hash === null ? Effect.succeed(null) : checkpoints.get(conversation.cwd, hash)

    const recorder: ChangesShape["recorder"] = (conversation, call, notice) => (write) =>
      Effect.gen(function*() {
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
          const before = current.bytes === null ? undefined : yield* keep(conversation, current.bytes, persist)
          const kept = yield* keep(conversation, after, persist)
          for (const warning of [before?.warning, kept.warning]) if (warning !== undefined) yield* notice(warning)
          entry = entryOf(before?.hash ?? null, kept.hash)
        }
        const saved = yield* conversation.update((session) => ({
          ...session,
          changes: [...(session.changes ?? []), entry]
        }))
        if (saved !== undefined) yield* notice(saved)
      })

    const forget: ChangesShape["forget"] = (conversation, toolCallId) =>
      Effect.gen(function*() {
        const { changes } = yield* conversation.snapshot
        if (!(changes ?? []).some((c) => c.tool_call_id === toolCallId)) return
        yield* conversation.update((session) => ({
          ...session,
          changes: (session.changes ?? []).filter((c) => c.tool_call_id !== toolCallId)
        }))
      })

    const overviewOf = (conversation: Conversation, group: ChangeGroup) =>
      groupOverview(checkpoints, conversation.cwd, group)

    const groupsOf = (conversation: Conversation) =>
      Effect.map(conversation.snapshot, (s) => groupChanges(s.changes ?? []))

    const overview: ChangesShape["overview"] = (conversation) =>
      Effect.flatMap(
        groupsOf(conversation),
        (groups) => Effect.forEach(groups, (group) => overviewOf(conversation, group))
      )

    const turnDiffs: ChangesShape["turnDiffs"] = (conversation, turn) =>
      Effect.gen(function*() {
        const groups = (yield* groupsOf(conversation)).filter((g) => g.kind === "turn" && g.turn === turn)
        if (groups.length === 0) return undefined
        const merged: ChangeGroup = { ...groups[0], entries: groups.flatMap((g) => g.entries) }
        return yield* overviewOf(conversation, merged)
      })

    const planFile = (conversation: Conversation, net: NetChange) =>
      Effect.gen(function*() {
        const file = path.resolve(conversation.cwd, net.path)
        const action = net.before === null ? ("delete" as const) : ("restore" as const)
        const unavailable = (reason: string): PlannedFile => ({
          path: net.path,
          file,
          action,
          state: "unavailable",
          targetHash: net.before,
          target: null,
          currentHash: null,
          current: null,
          diff: { path: net.path, added: 0, removed: 0, created: false, deleted: false, diff: reason, problem: reason },
          reason
        })
        if (net.skipped) return unavailable(TOO_LARGE)
        const target = yield* Effect.either(blobOrNull(conversation, net.before))
        if (target._tag === "Left") return unavailable(target.left.message)
        const read = yield* Effect.either(currentContent(file, net.path))
        if (read._tag === "Left") return unavailable(`cannot read it: ${problemText(read.left)}`)
        const current = read.right
        if (current.tooLarge) return unavailable(`it is now ${TOO_LARGE.replace(": not recorded", "")}`)
        const currentHash = current.bytes === null ? null : hashOf(current.bytes)
        const state: PlannedState = currentHash === net.before
          ? "same"
          : currentHash === net.after
          ? "ready"
          : "changed"
        const diff: FileDiff = {
          path: net.path,
          created: current.bytes === null,
          deleted: action === "delete",
          ...describeDiff(net.path, current.bytes, target.right)
        }
        return {
          path: net.path,
          file,
          action,
          state,
          targetHash: net.before,
          target: target.right,
          currentHash,
          current: current.bytes,
          diff
        } satisfies PlannedFile
      })

    const plan: ChangesShape["plan"] = (conversation, count) =>
      Effect.gen(function*() {
        const groups = yield* groupsOf(conversation)
        if (groups.length === 0) return undefined
        const taken = groups.slice(-Math.max(1, count))
        const files = yield* Effect.forEach(netChanges(taken.flatMap((g) => g.entries)), (net) =>
          planFile(conversation, net))
        const newestFirst = [...taken].reverse()
        return {
          label: planLabel(newestFirst),
          ofTurns: taken.every((g) =>
            g.kind === "turn"
          ),
          files
        }
      })

    const apply: ChangesShape["apply"] = (conversation, planned, confirmed) =>
      Effect.gen(function*() {
        const at = yield* now
        const persist = yield* persistFor(conversation)
        const { turns } = yield* conversation.snapshot
        const label = `undo of ${planned.label}`
        const left: Array<{ path: string; reason: string }> = []
        const warnings: Array<string> = []
        const todo: Array<{ planned: PlannedFile; entry: ChangeRecord }> = []
        for (const file of planned.files) {
          if (file.state === "same") continue
          if (file.state === "unavailable") {
            left.push({ path: file.path, reason: file.reason ?? "cannot be restored" })
            continue
          }
          if (file.state === "changed" && !confirmed.has(file.path)) {
            left.push({ path: file.path, reason: "changed since mm wrote it" })
            continue
          }
          const read = yield* Effect.either(currentContent(file.file, file.path))
          if (read._tag === "Left") {
            left.push({ path: file.path, reason: `cannot read it: ${problemText(read.left)}` })
            continue
          }
          const current = read.right
          if ((current.bytes === null ? null : hashOf(current.bytes)) !== file.currentHash || current.tooLarge) {
            left.push({ path: file.path, reason: "changed while the undo was being confirmed" })
            continue
          }
          const kept = current.bytes === null ? undefined : yield* keep(conversation, current.bytes, persist)
          if (kept?.warning !== undefined) warnings.push(kept.warning)
          todo.push({
            planned: file,
            entry: {
              turn: turns,
              at,
              path: file.path,
              before: kept?.hash ?? null,
              after: file.targetHash,
              kind: "undo",
              question: label
            }
          })
        }
        // recorded once the files are written: after a crash midway, the next /undo finds the
        // files already restored "the same" and restores the others (the blobs are kept first)
        const restored: Array<string> = []
        const deleted: Array<string> = []
        const entries: Array<ChangeRecord> = []
        const editor = yield* editorWriter
        for (const { planned: file, entry } of todo) {
          const text = file.target === null || editor === undefined ? undefined : textOf(file.target)
          if (editor !== undefined && text !== undefined) {
            // an editor that writes files for mm restores them itself: its buffer shows the undo
            const written = yield* editor.write(file.file, file.path, text)
            if (written._tag === "Left") {
              left.push({ path: file.path, reason: written.left })
              continue
            }
            restored.push(file.path)
            entries.push(entry)
            continue
          }
          try {
            if (file.target === null) {
              fs.rmSync(file.file, { force: true })
              deleted.push(file.path)
            } else {
              fs.mkdirSync(path.dirname(file.file), { recursive: true })
              writeFileAtomic(file.file, file.target)
              restored.push(file.path)
            }
            entries.push(entry)
          } catch (cause) {
            left.push({ path: file.path, reason: problemText(cause) })
          }
        }
        const report = { label: planned.label, restored, deleted, left }
        const note = entries.length > 0 ? noteText(planned, report) : undefined
        if (note !== undefined) {
          const saved = yield* conversation.update((session) => ({
            ...session,
            messages: [...session.messages, { role: "user", content: note, note: true } satisfies Message],
            changes: [...(session.changes ?? []), ...entries]
          }))
          if (saved !== undefined) warnings.push(saved)
        }
        return { ...report, note, warnings }
      })

    return { recorder, forget, overview, turnDiffs, plan, apply }
  })
)

/** The changes of every session, over one store of checkpoints shared by the façade and the agent. */
export const ChangesLive = ChangesLayer.pipe(Layer.provide(CheckpointsLive))

const fileSummary = (file: FileDiff): string => {
  const counts = file.problem !== undefined && file.problem !== "binary"
    ? file.problem
    : `+${file.added} -${file.removed}`
  const mark = file.created ? " (created)" : file.deleted ? " (deleted)" : file.problem === "binary" ? " (binary)" : ""
  return `\`${file.path}\` ${counts}${mark}`
}

/** The `## Files changed` section of `mm sessions show`: each group, then its files with their line counts. */
export const changesMarkdown = (overviews: ReadonlyArray<GroupOverview>): string =>
  [
    "## Files changed",
    "",
    ...overviews.flatMap(({ group, files }) => [
      `- ${group.label}${
        group.kind === "turn" && group.question !== "" ? ` · ${JSON.stringify(group.question)}` : ""
      } · ${group.at}`,
      ...files.map((file) => `  - ${fileSummary(file)}`)
    ])
  ].join("\n")
