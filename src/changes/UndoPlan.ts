import type { ChangeGroup, FileDiff } from "./ChangeGroups"

/** What `/undo` would do (an undo plan, file by file), what it did, and what the model is told of it. */

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
  /** `delete`: it did not exist before the changes taken back. */
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
  /** What the agent left (the undone change's `after`): kept by an undo that finds the file `same`. */
  readonly afterHash?: string | null
  /** Where the path really leads, when that is outside the project: the file is left as it is. */
  readonly outside?: string
}

/**
 * A file found as the undo would leave it although the turn had changed it: restored by an
 * undo that was stopped (killed) before it was recorded, or by hand. The undo records it, so
 * that the undo of this undo brings it back too.
 */
const foundRestored = (file: PlannedFile): boolean =>
  file.state === "same" && file.afterHash !== undefined && file.afterHash !== null &&
  file.afterHash !== file.targetHash

export interface UndoPlan {
  /** `turn 3`, `turns 3, 2`, `the failed question after turn 2`, `undo of turn 3`. */
  readonly label: string
  /** Every group taken back is the agent's (a turn, or a failed question), not an undo. */
  readonly ofTurns: boolean
  readonly files: ReadonlyArray<PlannedFile>
}

/**
 * Whether `/undo` goes ahead: some file to write, or only files found restored already (an
 * undo killed once every file was written; recording it needs no confirmation).
 */
export const undoActionable = (plan: UndoPlan): {
  readonly toWrite: ReadonlyArray<PlannedFile>
  readonly recordOnly: boolean
} => {
  const toWrite = plan.files.filter((f) => f.state === "ready" || f.state === "changed")
  return { toWrite, recordOnly: toWrite.length === 0 && plan.files.some(foundRestored) }
}

export interface UndoReport {
  readonly label: string
  readonly restored: ReadonlyArray<string>
  readonly deleted: ReadonlyArray<string>
  /** `outside`: refused because the path now leads outside the project (said on a line of its own). */
  readonly left: ReadonlyArray<{ readonly path: string; readonly reason: string; readonly outside?: boolean }>
  /** What the model is told (also kept in the conversation); undefined when nothing changed. */
  readonly note: string | undefined
  readonly warnings: ReadonlyArray<string>
}

export const planLabel = (groups: ReadonlyArray<ChangeGroup>): string => {
  if (groups.every((g) => g.kind === "turn")) {
    return groups.length === 1 ? `turn ${groups[0].turn}` : `turns ${groups.map((g) => g.turn).join(", ")}`
  }
  return groups.map((g) => (g.kind === "failed" ? `the ${g.label}` : g.label)).join(", ")
}

const listOf = (paths: ReadonlyArray<string>): string => paths.join(", ")

/** The line the model reads after an undo, so that it does not believe its edits are still there. */
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
