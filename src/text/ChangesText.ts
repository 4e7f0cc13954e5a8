import type { FileDiff, GroupOverview } from "../changes/ChangeGroups"
import type { PlannedFile, UndoPlan, UndoReport } from "../changes/UndoPlan"
import { sanitize } from "./Sanitize"
import type { Style } from "./Style"

/**
 * The text of `/changes`, `/changes N` and `/undo [N]` (docs/how-to/undo.md), whichever façade
 * shows it, and the `## Files changed` section of `mm sessions show`.
 */

export const NO_CHANGES = "no file changed by mm in this session yet (changes made by bash commands are not tracked)"

const counts = (
  file: FileDiff
): string =>
  file.problem !== undefined && file.problem !== "binary"
    ? ""
    : `${file.estimated === true ? "~" : ""}+${file.added} -${file.removed}`

const fileMark = (file: FileDiff): string =>
  file.problem !== undefined && file.problem !== "binary"
    ? `  (${file.problem})`
    : file.created
    ? "  (created)"
    : file.deleted
    ? "  (deleted)"
    : file.problem === "binary"
    ? "  (binary)"
    : ""

/** `turn 3  "the question"`, `failed question after turn 2  "the question"`, `undo of turn 3`. */
const groupHeader = (overview: GroupOverview): string =>
  overview.group.kind === "undo"
    ? overview.group.label
    : `${overview.group.label}  ${JSON.stringify(sanitize(overview.group.question))}`

/** Every group of changes, each file with its `+N -M` lines. */
export const changesListing = (overviews: ReadonlyArray<GroupOverview>, style: Style): string => {
  if (overviews.length === 0) return NO_CHANGES
  const lines = [
    "changes made through mm's file tools — /changes N shows the diffs of turn N, /undo takes back the latest group"
  ]
  for (const overview of overviews) {
    lines.push(style.bold(groupHeader(overview)))
    for (const file of overview.files) {
      lines.push(`  ${sanitize(file.path)}  ${counts(file)}${fileMark(file)}`.replace(/ {2}$/, ""))
    }
  }
  return lines.join("\n")
}

/** Lines longer than this are cut on screen (a minified file is one long line). */
const LINE_MAX = 400
/** A preview shows at most this many lines of each file's diff. */
export const PREVIEW_LINES = 60

const cutLine = (
  line: string
): string => (line.length > LINE_MAX ? `${line.slice(0, LINE_MAX)}… (${line.length - LINE_MAX} more characters)` : line)

/** A unified diff, indented, with removed lines red and added ones yellow; at most `maxLines` lines. */
export const coloredDiff = (diff: string, style: Style, maxLines = Infinity): string => {
  const all = sanitize(diff).replace(/\n$/, "").split("\n")
  const shown = all.slice(0, maxLines).map((raw) => {
    const line = cutLine(raw)
    return line.startsWith("+++") || line.startsWith("---") || line.startsWith("@@")
      ? style.dim(line)
      : line.startsWith("-")
      ? style.red(line)
      : line.startsWith("+")
      ? style.yellow(line)
      : line
  })
  if (all.length > shown.length) shown.push(style.dim(`… ${all.length - shown.length} more line(s) of diff`))
  return shown.map((line) => `    ${line}`).join("\n")
}

/** A file's diff, colored, or the line saying why there is none. */
export const diffBody = (file: FileDiff, style: Style, maxLines = Infinity): string =>
  file.problem === undefined && file.estimated !== true
    ? coloredDiff(file.diff, style, maxLines)
    : `    ${sanitize(file.diff)}`

export const turnDiffsText = (overview: GroupOverview, style: Style): string =>
  [
    style.bold(`${groupHeader(overview)} — ${overview.files.length} file(s)`),
    ...overview.files.map((file) =>
      `${sanitize(file.path)}  ${counts(file)}${fileMark(file)}\n${diffBody(file, style)}`
    )
  ].join("\n")

/** A file `/undo` refuses to write because its path now leads outside the project. */
export const leftOutsideLine = (path: string, why: string): string => sanitize(`left as it is: ${path} (${why})`)

export const plannedLine = (file: PlannedFile): string => {
  const shown = sanitize(file.path)
  switch (file.state) {
    case "ready":
      return file.action === "delete"
        ? `delete ${shown}  (it did not exist before)`
        : `restore ${shown}  ${counts(file.diff)}`
    case "changed":
      return `${shown} was changed after mm wrote it: asked separately`
    case "same":
      return `${shown} is already as it was: nothing to do`
    case "unavailable":
      return file.outside !== undefined
        ? leftOutsideLine(file.path, file.reason ?? "")
        : `${shown} cannot be restored: ${sanitize(file.reason ?? "")}`
  }
}

/** What `/undo` will do: each file with its reverse diff. */
export const undoPreview = (plan: UndoPlan, style: Style): string => {
  const lines = [style.bold(`/undo takes back ${plan.label}:`)]
  for (const file of plan.files) {
    lines.push(`  ${plannedLine(file)}`)
    if (file.state === "ready" && file.diff.diff !== "") lines.push(diffBody(file.diff, style, PREVIEW_LINES))
  }
  return lines.join("\n")
}

export const undoneLine = (report: UndoReport): string => {
  const parts: Array<string> = []
  if (report.restored.length > 0) parts.push(`restored ${report.restored.join(", ")}`)
  if (report.deleted.length > 0) parts.push(`deleted ${report.deleted.join(", ")}`)
  const inside = report.left.filter((l) => l.outside !== true)
  if (inside.length > 0) {
    parts.push(`left as they are: ${inside.map((l) => `${l.path} (${l.reason})`).join(", ")}`)
  }
  const head = report.restored.length + report.deleted.length > 0
    ? `↩️ undid ${report.label}`
    : `nothing undone of ${report.label}`
  const outside = report.left.filter((l) => l.outside === true).map((l) => leftOutsideLine(l.path, l.reason))
  const line = sanitize(`${head}: ${parts.join("; ")}${report.note === undefined ? "" : " — the model is told"}`)
  return [...outside, line.replace(/: $/, "")].join("\n")
}

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
        group.kind !== "undo" && group.question !== "" ? ` · ${JSON.stringify(group.question)}` : ""
      } · ${group.at}`,
      ...files.map((file) => `  - ${fileSummary(file)}`)
    ])
  ].join("\n")
