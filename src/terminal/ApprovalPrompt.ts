// The terminal's approval prompt: the core's preview, coloured and wrapped, then one line of
// one-key choices (docs/how-to/approvals.md).
import type { ApprovalRequest } from "../approvals/Approver"
import { type PreviewLine, previewLines } from "../approvals/PreviewLines"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"
import { wrapText } from "../text/Wrap"
import { pagerName } from "./Pager"

const INDENT = "  "

const paint = (line: PreviewLine, style: Style): (text: string) => string => {
  switch (line.kind) {
    case "added":
      return style.green
    case "removed":
      return style.red
    case "header":
    case "hunk":
    case "note":
      return style.dim
    case "warning":
      return style.yellow
    case "text":
    case "context":
      return (text) => text
  }
}

/** Cuts a line into pieces of at most `width` characters: long lines are wrapped, never cut off. */
export const wrapLine = (text: string, width: number): Array<string> => {
  const chars = Array.from(text.replace(/\t/g, "    "))
  if (chars.length <= width) return [chars.join("")]
  const pieces: Array<string> = []
  for (let at = 0; at < chars.length; at += width) pieces.push(chars.slice(at, at + width).join(""))
  return pieces
}

/** The width a preview line is wrapped to on a terminal `columns` wide. */
const widthOf = (columns: number): number => Math.max(20, columns - INDENT.length)

/**
 * A command is cut when it takes more screen rows than this, or than the terminal's rows less
 * ROWS_AROUND when that is more: 20 rows fit a 24-row terminal with what surrounds them, and a
 * taller terminal shows more before anything goes to the pager.
 */
const COMMAND_ROWS = 20

/** Rows kept for what surrounds a command: its tool line, its timeout, the reason or `always:` line (wrapped), the question. */
const ROWS_AROUND = 6

/** What is shown of a command too long for the screen: its first rows, and what is left for the pager. */
interface CommandCut {
  /** The first rows, sanitized and wrapped. */
  readonly shown: ReadonlyArray<string>
  /** How many of its lines are not shown at all. */
  readonly hidden: number
  /** Its first line alone was too long: only the start of it is shown. */
  readonly partial: boolean
  readonly timeout: number | undefined
}

/**
 * A command whose lines wrap to more rows than the screen has room for (at least COMMAND_ROWS)
 * is cut after as many whole lines as fit in one row less (the last row says what is left out);
 * undefined for anything else, shown whole.
 */
const cutCommand = (preview: ApprovalRequest["preview"], width: number, rows: number): CommandCut | undefined => {
  if (preview._tag !== "Command") return undefined
  // split as previewLines splits it, drawn as drawnLine draws a text line, up to the first row past the budget
  const raw = preview.command.replace(/\n$/, "").split("\n")
  const budget = Math.max(COMMAND_ROWS, rows - ROWS_AROUND)
  const lines: Array<Array<string>> = []
  let total = 0
  for (const line of raw) {
    if (total > budget) break
    lines.push(wrapLine(sanitize(line), width))
    total += lines[lines.length - 1].length
  }
  if (total <= budget) return undefined
  const shown: Array<string> = []
  let whole = 0
  for (const pieces of lines) {
    if (shown.length + pieces.length > budget - 1) break
    shown.push(...pieces)
    whole++
  }
  const { timeout } = preview
  if (whole > 0) return { shown, hidden: raw.length - whole, partial: false, timeout }
  return { shown: lines[0].slice(0, budget - 1), hidden: raw.length - 1, partial: true, timeout }
}

/**
 * A one-line command without a timeout is already whole on the tool's line (`⚙ bash  ls -la`);
 * not one with a control or invisible character, whose escapes may make it too long for that line.
 */
const shownByTitle = ({ preview, title }: Pick<ApprovalRequest, "preview" | "title">): boolean =>
  preview._tag === "Command" && preview.timeout === undefined && !preview.command.trim().includes("\n") &&
  preview.command.trim() === title && sanitize(title) === title

/** The old and new line numbers a diff is at, moved on by its hunk headers and lines. */
interface Numbering {
  old: number
  new: number
}

const DIFF_KINDS = new Set<PreviewLine["kind"]>(["added", "removed", "context"])

/** The number shown beside a diff line (the old file's for a removed line, the new file's otherwise), then moves on. */
const numberOf = (line: PreviewLine, at: Numbering): number => {
  if (line.kind === "removed") return at.old++
  if (line.kind === "added") return at.new++
  at.old++
  return at.new++
}

/**
 * One preview line, cut to `width`: a diff line gets its line number in a gutter, and each row
 * it wraps to keeps its `+`/`-` marker, so a long added line still reads as added.
 */
const drawnLine = (line: PreviewLine, style: Style, width: number, at: Numbering, gutter: number): Array<string> => {
  const text = sanitize(line.text)
  if (line.kind === "hunk") {
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)/.exec(text)
    if (hunk !== null) {
      at.old = Number(hunk[1])
      at.new = Number(hunk[2])
    }
  }
  if (!DIFF_KINDS.has(line.kind) || text === "") return wrapLine(text, width).map((piece) => paint(line, style)(piece))
  const number = String(numberOf(line, at)).padStart(gutter)
  const marker = text[0]
  return wrapLine(text.slice(1), Math.max(10, width - gutter - 2)).map((piece, i) =>
    `${style.dim(i === 0 ? number : " ".repeat(gutter))} ${paint(line, style)(`${marker}${piece}`)}`
  )
}

/** The preview as printed above the question: indented, diff lines numbered, each line wrapped to `columns`, coloured by kind. */
export const previewBlock = (
  request: Pick<ApprovalRequest, "preview" | "title"> & Partial<Pick<ApprovalRequest, "always" | "outsideSandbox">>,
  style: Style,
  columns: number,
  rows = 0
): string => {
  const width = widthOf(columns)
  const cut = cutCommand(request.preview, width, rows)
  if (request.outsideSandbox !== undefined) {
    return outsideBlock(request.preview, request.outsideSandbox, style, width, cut)
  }
  // what an "always" would cover, in words (the first choice: the [a] key)
  const always = (request.always ?? []).filter((choice) => choice.scope._tag !== "Project")
  const coverage = always.map((choice): PreviewLine => ({ kind: "note", text: `always: ${choice.covers}` }))
  const lines = (shownByTitle(request) || cut !== undefined ? [] : previewLines(request.preview)).map((line) =>
    viewable(request) && line.kind === "header" ? { ...line, text: `${line.text} — [v]iew in ${pagerName()}` } : line
  )
  // a new file's lines count from 1; a diff's from its hunk headers
  const at: Numbering = { old: 1, new: 1 }
  const gutter = Math.max(3, String(lastLineNumber(lines)).length)
  return [
    ...(cut === undefined ? [] : cutRows(cut, style, width)),
    ...[...lines, ...coverage].flatMap((line) => drawnLine(line, style, width, at, gutter))
  ].map((line) => `${INDENT}${line}\n`).join("")
}

/**
 * Above the question to run a blocked command again outside the sandbox: the whole command,
 * drawn as the ordinary approval draws it (even a one-line command, whose tool line may be far
 * above by now; a long one cut as there, the rest in the pager), then why the sandbox stopped
 * it, in mm's words.
 */
const outsideBlock = (
  preview: ApprovalRequest["preview"],
  reason: string,
  style: Style,
  width: number,
  cut: CommandCut | undefined
): string =>
  [
    ...(cut === undefined
      ? previewLines(preview).flatMap((line) => drawnLine(line, style, width, { old: 1, new: 1 }, 0))
      : cutRows(cut, style, width)),
    // its line breaks become spaces (a path in it cannot start a line of its own); wrapped at its words
    ...wrapText(sanitize(`the sandbox blocked it: ${reason}`).replace(/\s+/g, " "), width)
      .split("\n").map((piece) => style.yellow(piece))
  ].map((line) => `${INDENT}${line}\n`).join("")

/** A long command's first rows, the line that says what is left out and how to read it, and its timeout. */
const cutRows = (cut: CommandCut, style: Style, width: number): Array<string> => {
  const more = cut.hidden === 0 ? "" : `${cut.hidden} more line${cut.hidden === 1 ? "" : "s"}`
  const left = cut.partial ? `the rest of this line${more === "" ? "" : ` and ${more}`}` : more
  // wrapped at its words, as the reason is
  const notice = wrapText(sanitize(`… ${left} not shown — [v]iew the whole command in ${pagerName()}`), width)
  return [
    ...cut.shown,
    ...notice.split("\n").map((piece) => style.yellow(piece)),
    ...(cut.timeout === undefined ? [] : [style.dim(`(timeout ${cut.timeout} s)`)])
  ]
}

/** A file change too large to diff in the preview, which `v` shows whole in the pager (Pager.ts). */
const viewable = ({ preview }: Partial<Pick<ApprovalRequest, "preview">>): boolean =>
  preview?._tag === "FileChange" && preview.tooLarge !== undefined && preview.before !== undefined &&
  preview.after !== undefined

/** About the largest line number a preview shows: its hunks' starts plus their lengths, or its line count. */
const lastLineNumber = (lines: ReadonlyArray<PreviewLine>): number => {
  let largest = lines.length
  for (const line of lines) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))?/.exec(line.text)
    if (hunk !== null) {
      largest = Math.max(largest, Number(hunk[1]) + Number(hunk[2] ?? 1), Number(hunk[3]) + Number(hunk[4] ?? 1))
    }
  }
  return largest
}

interface Choices {
  /** `allow? [y]es  [n]o  [a]lways "npm test …"  [t]ell mm what to do instead: ` */
  readonly line: string
  readonly keys: ReadonlyArray<string>
}

/**
 * The question's line and the keys that answer it: `a` and `p` only when the request offers
 * those scopes, `v` only when there is more to read in the pager (the terminal's size, as given
 * to `previewBlock`, decides whether a command is cut).
 */
export const choicesOf = (
  request: Pick<ApprovalRequest, "always"> & Partial<Pick<ApprovalRequest, "preview" | "outsideSandbox">>,
  columns = 80,
  rows = 0
): Choices => {
  const view = viewable(request) ||
    (request.preview !== undefined && cutCommand(request.preview, widthOf(columns), rows) !== undefined)
  if (request.outsideSandbox !== undefined) {
    return view
      ? { line: "run it outside the sandbox? [y/n]  [v]iew ", keys: ["y", "n", "v"] }
      : { line: "run it outside the sandbox? [y/n] ", keys: ["y", "n"] }
  }
  const always = request.always.find((choice) => choice.scope._tag !== "Project")
  const project = request.always.find((choice) => choice.scope._tag === "Project")
  const parts = [
    "[y]es",
    "[n]o",
    ...(always === undefined ? [] : [`[a]lways ${sanitize(always.label)}`]),
    ...(project === undefined ? [] : ["[p]roject"]),
    ...(view ? ["[v]iew"] : []),
    "[t]ell mm what to do instead"
  ]
  const keys = [
    "y",
    "n",
    ...(always === undefined ? [] : ["a"]),
    ...(project === undefined ? [] : ["p"]),
    ...(view ? ["v"] : []),
    "t"
  ]
  return { line: `allow? ${parts.join("  ")}: `, keys }
}
