import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { type ChangeRecord, type Message } from "../domain/Session"
import { changesSince } from "../domain/Turns"
import { removeLeftTempsBeside, writeProjectFileAtomic } from "../lib/DurableFiles"
import { firstLineOf } from "../lib/OneLine"
import { projectTarget, projectTargetOf } from "../lib/RealPath"
import type { Conversation } from "../sessions/Conversation"
import { Keeper } from "../sessions/Keeper"
import { FileAccess, type FileAccessShape } from "../tools/FileAccess"
import {
  type ChangeGroup,
  describeDiff,
  type FileDiff,
  groupChanges,
  type GroupOverview,
  groupOverview,
  type NetChange,
  netChanges,
  textOf,
  TOO_LARGE
} from "./ChangeGroups"
import { Checkpoints, hashOf, sweepProjectTemps } from "./Checkpoints"
import { currentContent, editorWriter } from "./CurrentContent"
import { type Deps, type Forget, forget, keep, now, persistFor, type Recorder, recorder } from "./Recorder"
import { noteText, planLabel, type PlannedFile, type PlannedState, type UndoPlan, type UndoReport } from "./UndoPlan"

/**
 * What mm's file tools changed in a session (its `changes`), and `/undo`: recording each
 * change before it is made, listing them by turn, and taking the last turns back.
 * docs/how-to/undo.md tells the user's side. The groups are ChangeGroups.ts; the plans UndoPlan.ts.
 */

export interface ChangesShape {
  /** The `beforeWrite` of the file tools during a turn: keeps the blobs, then the entry in the session. */
  readonly recorder: Recorder
  /**
   * A call's write failed after all: drops what that call (of that turn) recorded, unless the
   * file is no longer what it was before (the disk was touched: the record lets /undo put it back).
   */
  readonly forget: Forget
  /** `/changes`: every group with its files and their line counts. */
  readonly overview: (conversation: Conversation) => Effect.Effect<ReadonlyArray<GroupOverview>>
  /**
   * `/changes N`: the diffs of turn N (not those of a question that failed after it: no turn's);
   * undefined when that turn changed nothing.
   */
  readonly turnDiffs: (conversation: Conversation, turn: number) => Effect.Effect<GroupOverview | undefined>
  /**
   * What `/rewind` restores: every file changed since turn `turn` began (undos included) back
   * to how it was then; `last` names the range. Undefined when nothing changed since.
   */
  readonly planSince: (conversation: Conversation, turn: number, last: number) => Effect.Effect<UndoPlan | undefined>
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

export class Changes extends Context.Tag("mm/Changes")<Changes, ChangesShape>() {}

const blobOrNull = (deps: Deps, conversation: Conversation, hash: string | null) =>
  hash === null ? Effect.succeed(null) : deps.checkpoints.get(conversation.cwd, hash)

// ---- listing ----

const overviewOf = (deps: Deps, conversation: Conversation, group: ChangeGroup) =>
  groupOverview(deps.checkpoints, conversation.cwd, group)

const groupsOf = (conversation: Conversation) => Effect.map(conversation.snapshot, (s) => groupChanges(s.changes ?? []))

const overview = (deps: Deps): ChangesShape["overview"] =>
  Effect.fn("Changes.overview")(function*(conversation: Conversation) {
    const groups = yield* groupsOf(conversation)
    return yield* Effect.forEach(groups, (group) => overviewOf(deps, conversation, group))
  })

const turnDiffs = (deps: Deps): ChangesShape["turnDiffs"] =>
  Effect.fn("Changes.turnDiffs")(function*(conversation: Conversation, turn: number) {
    const groups = (yield* groupsOf(conversation)).filter((g) => g.kind === "turn" && g.turn === turn)
    if (groups.length === 0) return undefined
    const merged: ChangeGroup = { ...groups[0], entries: groups.flatMap((g) => g.entries) }
    return yield* overviewOf(deps, conversation, merged)
  })

// ---- planning an undo ----

const projectOf = (cwd: string, file: string) => Effect.try({ try: () => projectTarget(cwd, file), catch: (c) => c })

/**
 * Removes the temporary files an undo killed midway left beside these files' real targets
 * (only those inside the project: a path that cannot be resolved is left alone).
 */
const removeLeftovers = (cwd: string, nets: ReadonlyArray<NetChange>): void =>
  removeLeftTempsBeside(nets.flatMap((net) => {
    const where = projectTargetOf(cwd, path.resolve(cwd, net.path))
    return where._tag === "Inside" ? [where.real] : []
  }))

const planFile = (deps: Deps, conversation: Conversation, net: NetChange) =>
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
    const where = yield* Effect.either(projectOf(conversation.cwd, file))
    if (where._tag === "Left") return unavailable(`cannot resolve it: ${firstLineOf(where.left)}`)
    if (where.right._tag === "Outside") return { ...unavailable(where.right.why), outside: where.right.real }
    if (net.skipped) return unavailable(TOO_LARGE)
    const target = yield* Effect.either(blobOrNull(deps, conversation, net.before))
    if (target._tag === "Left") return unavailable(target.left.message)
    const read = yield* Effect.either(currentContent(deps.files, file, net.path))
    if (read._tag === "Left") return unavailable(`cannot read it: ${firstLineOf(read.left)}`)
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
      diff,
      afterHash: net.after
    } satisfies PlannedFile
  })

/** The plan that brings every file of `entries` back to how it was before the first of them. */
const planOf = (
  deps: Deps,
  conversation: Conversation,
  entries: ReadonlyArray<ChangeRecord>,
  label: string,
  ofTurns: boolean
) =>
  Effect.gen(function*() {
    const nets = netChanges(entries)
    yield* Effect.sync(() => removeLeftovers(conversation.cwd, nets))
    const files = yield* Effect.forEach(nets, (net) => planFile(deps, conversation, net))
    return { label, ofTurns, files } satisfies UndoPlan
  })

const plan = (deps: Deps): ChangesShape["plan"] =>
  Effect.fn("Changes.plan")(function*(conversation: Conversation, count: number) {
    const groups = yield* groupsOf(conversation)
    if (groups.length === 0) return undefined
    const taken = groups.slice(-Math.max(1, count))
    const newestFirst = [...taken].reverse()
    return yield* planOf(
      deps,
      conversation,
      taken.flatMap((g) => g.entries),
      planLabel(newestFirst),
      taken.every((g) => g.kind !== "undo")
    )
  })

const planSince = (deps: Deps): ChangesShape["planSince"] =>
  Effect.fn("Changes.planSince")(function*(conversation: Conversation, turn: number, last: number) {
    const session = yield* conversation.snapshot
    const changes = session.changes ?? []
    const first = changesSince(session, turn)
    if (first >= changes.length) return undefined
    const label = last > turn ? `turns ${turn}–${last}` : `turn ${turn}`
    return yield* planOf(deps, conversation, changes.slice(first), label, true)
  })

// ---- applying an undo ----

/** What every entry of one undo shares. */
interface UndoRun {
  readonly turn: number
  readonly at: string
  readonly label: string
  readonly persist: boolean
}

/** A file the undo will write, with the change it records once written. */
interface Pending {
  readonly planned: PlannedFile
  readonly entry: ChangeRecord
}

type Checked =
  | { readonly _tag: "Skip"; readonly entry?: ChangeRecord }
  | { readonly _tag: "Left"; readonly reason: string; readonly outside?: boolean }
  | { readonly _tag: "Pending"; readonly pending: Pending; readonly warning: string | undefined }

/** Whether a planned file is restored after all: what leaves it as it is, or its entry (its content now kept first). */
const checkFile = (
  deps: Deps,
  conversation: Conversation,
  file: PlannedFile,
  confirmed: ReadonlySet<string>,
  run: UndoRun
): Effect.Effect<Checked> =>
  Effect.gen(function*() {
    const entryOf = (before: string | null): ChangeRecord => ({
      turn: run.turn,
      at: run.at,
      path: file.path,
      before,
      after: file.targetHash,
      kind: "undo",
      question: run.label
    })
    if (file.state === "same") {
      // restored already (by an undo killed midway, say; UndoPlan.ts's foundRestored): its undo must bring it back too
      const after = file.afterHash ?? null
      return after === null || after === file.targetHash
        ? { _tag: "Skip" } as const
        : { _tag: "Skip", entry: entryOf(after) } as const
    }
    if (file.state === "unavailable") {
      return { _tag: "Left", reason: file.reason ?? "cannot be restored", outside: file.outside !== undefined } as const
    }
    if (file.state === "changed" && !confirmed.has(file.path)) {
      return { _tag: "Left", reason: "changed since mm wrote it" } as const
    }
    const where = yield* Effect.either(projectOf(conversation.cwd, file.file))
    if (where._tag === "Left") return { _tag: "Left", reason: `cannot resolve it: ${firstLineOf(where.left)}` } as const
    if (where.right._tag === "Outside") return { _tag: "Left", reason: where.right.why, outside: true } as const
    const read = yield* Effect.either(currentContent(deps.files, file.file, file.path))
    if (read._tag === "Left") return { _tag: "Left", reason: `cannot read it: ${firstLineOf(read.left)}` } as const
    const current = read.right
    if ((current.bytes === null ? null : hashOf(current.bytes)) !== file.currentHash || current.tooLarge) {
      return { _tag: "Left", reason: "changed while the undo was being confirmed" } as const
    }
    const kept = current.bytes === null ? undefined : yield* keep(deps, conversation, current.bytes, run.persist)
    return {
      _tag: "Pending",
      pending: { planned: file, entry: entryOf(kept?.hash ?? null) },
      warning: kept?.warning
    } as const
  })

type Restored =
  | { readonly _tag: "Restored" }
  | { readonly _tag: "Deleted" }
  | { readonly _tag: "Left"; readonly reason: string }

/** Writes one file back: through the editor when it writes files for mm and the content is text, else on disk. */
const restoreFile = (editor: FileAccessShape | undefined, file: PlannedFile): Effect.Effect<Restored> =>
  Effect.gen(function*() {
    const text = file.target === null || editor === undefined ? undefined : textOf(file.target)
    if (editor !== undefined && text !== undefined) {
      // an editor that writes files for mm restores them itself: its buffer shows the undo
      const written = yield* editor.write(file.file, file.path, text)
      return written._tag === "Left" ? { _tag: "Left", reason: written.left } as const : { _tag: "Restored" } as const
    }
    try {
      if (file.target === null) {
        fs.rmSync(file.file, { force: true })
        return { _tag: "Deleted" } as const
      }
      fs.mkdirSync(path.dirname(file.file), { recursive: true })
      writeProjectFileAtomic(file.file, file.target)
      return { _tag: "Restored" } as const
    } catch (cause) {
      return { _tag: "Left", reason: firstLineOf(cause) } as const
    }
  })

/** The note and the undo's entries, kept in the conversation; a warning when saving failed. */
const recordUndo = (conversation: Conversation, note: string, entries: ReadonlyArray<ChangeRecord>) =>
  conversation.update((session) => ({
    ...session,
    messages: [...session.messages, { role: "user", content: note, note: true } satisfies Message],
    changes: [...(session.changes ?? []), ...entries]
  }))

const apply = (deps: Deps): ChangesShape["apply"] =>
  Effect.fn("Changes.apply")(function*(conversation: Conversation, planned: UndoPlan, confirmed: ReadonlySet<string>) {
    const at = yield* now
    const persist = yield* persistFor(conversation)
    const { turns } = yield* conversation.snapshot
    const run: UndoRun = { turn: turns, at, label: `undo of ${planned.label}`, persist }
    const left: Array<UndoReport["left"][number]> = []
    const warnings: Array<string> = []
    const todo: Array<Pending> = []
    const restored: Array<string> = []
    const deleted: Array<string> = []
    const entries: Array<ChangeRecord> = []
    for (const file of planned.files) {
      const checked = yield* checkFile(deps, conversation, file, confirmed, run)
      if (checked._tag === "Left") {
        left.push({ path: file.path, reason: checked.reason, ...(checked.outside ? { outside: true } : {}) })
      }
      if (checked._tag === "Skip" && checked.entry !== undefined) {
        // restored already: recorded with the rest (so an undo killed after its last write is completed)
        entries.push(checked.entry)
        ;(file.targetHash === null ? deleted : restored).push(file.path)
      }
      if (checked._tag !== "Pending") continue
      if (checked.warning !== undefined) warnings.push(checked.warning)
      todo.push(checked.pending)
    }
    // recorded once the files are written: after a crash midway, the next /undo finds the
    // files already restored "the same" and restores the others (the blobs are kept first)
    const editor = yield* editorWriter(deps.files)
    for (const { entry, planned: file } of todo) {
      const done = yield* restoreFile(editor, file)
      if (done._tag === "Left") {
        left.push({ path: file.path, reason: done.reason })
        continue
      }
      if (done._tag === "Deleted") deleted.push(file.path)
      else restored.push(file.path)
      entries.push(entry)
    }
    const report = { label: planned.label, restored, deleted, left }
    const note = entries.length > 0 ? noteText(planned, report) : undefined
    if (note !== undefined) {
      const saved = yield* recordUndo(conversation, note, entries)
      if (saved !== undefined) warnings.push(saved)
    }
    return { ...report, note, warnings }
  })

// ---- the layer ----

/**
 * The change log over the checkpoints and the file access. Made by every façade as mm starts
 * in the project (its current directory), it forks the removal of what a killed mm's writes
 * left in the project's `.mm/`, so that the start does not wait for it.
 */
export const makeChanges = Effect.gen(function*() {
  const deps: Deps = { checkpoints: yield* Checkpoints, files: yield* FileAccess, shownWarnings: new Set<string>() }
  const keeper = yield* Keeper
  const cwd = process.cwd()
  yield* Effect.forkDaemon(sweepProjectTemps(cwd, keeper.dirFor(cwd)))
  return {
    recorder: recorder(deps),
    forget: forget(deps),
    overview: overview(deps),
    turnDiffs: turnDiffs(deps),
    plan: plan(deps),
    planSince: planSince(deps),
    apply: apply(deps)
  }
})
