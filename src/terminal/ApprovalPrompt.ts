// The terminal's approval prompt: the core's preview, coloured and wrapped, then the one-key
// choices, laid out to the terminal's width (docs/how-to/approvals.md).
import type { AlwaysChoice } from "../approvals/ApprovalScope"
import type { ApprovalRequest } from "../approvals/Approver"
import { type PreviewLine, previewLines } from "../approvals/PreviewLines"
import { toolStartLine } from "../text/Lines"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"
import { displayWidth } from "../text/Width"
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

/** Above a sub-agent's question: who asks, and its call as the tool line shows one (`⚙ explore: bash  ls -la`). */
export const subAgentCallLine = (request: Pick<ApprovalRequest, "agent" | "tool" | "title">, style: Style): string =>
  toolStartLine(sanitize(`${request.agent ?? ""}: ${request.tool}`), sanitize(request.title), style)

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
  // what each "always" would cover, in words: the [a] key's, then the [s] key's
  const always = (request.always ?? []).filter((choice) => choice.scope._tag !== "Project")
  // wrapped at their words, as the question is
  const coverage = always.flatMap((choice) =>
    wrapText(sanitize(`${choice.keep === "session" ? "session" : "always"}: ${choice.covers}`), width)
      .split("\n").map((piece) => style.dim(piece))
  )
  const lines = (shownByTitle(request) || cut !== undefined ? [] : previewLines(request.preview)).map((line) =>
    viewable(request) && line.kind === "header" ? { ...line, text: `${line.text} — [v]iew in ${pagerName()}` } : line
  )
  // a new file's lines count from 1; a diff's from its hunk headers
  const at: Numbering = { old: 1, new: 1 }
  const gutter = Math.max(3, String(lastLineNumber(lines)).length)
  return [
    ...(cut === undefined ? [] : cutRows(cut, style, width)),
    ...lines.flatMap((line) => drawnLine(line, style, width, at, gutter)),
    ...coverage
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
  /**
   * `allow? [y]es  [n]o  [a]lways run exactly this command  [s]ession only  [t]ell mm what to
   * do instead: `, in as many rows as the terminal's width needs (below).
   */
  readonly line: string
  readonly keys: ReadonlyArray<string>
}

/** The key that picks a choice: `p` the whole project, `s` a session-only answer, `a` the rest. */
export const choiceKey = (choice: AlwaysChoice): "a" | "s" | "p" =>
  choice.scope._tag === "Project" ? "p" : choice.keep === "session" ? "s" : "a"

/** At this width and below, the choices are drawn one per row. */
const NARROW = 50

/**
 * The question laid out for a terminal `columns` wide, never cut inside a word: on one row when
 * it fits, else broken between choices; at NARROW columns and less, `allow?` and then one
 * choice per row. A choice longer than a row is broken between its words, its next rows indented.
 */
const laidOut = (parts: ReadonlyArray<string>, columns: number): string => {
  const width = Math.max(12, columns)
  const last = parts.length - 1
  // a piece too long for a row: broken between words, its next rows indented by two
  const fitted = (piece: string) => wrapText(piece, width - 2).split("\n").join("\n  ")
  const pieces = parts.map((part, i) => (i === last ? `${part}: ` : part))
  if (columns <= NARROW) return ["allow?", ...pieces.map(fitted)].join("\n")
  const rows: Array<string> = []
  let row = "allow?"
  for (const piece of pieces) {
    const joined = row === "" ? piece : `${row}${row === "allow?" ? " " : "  "}${piece}`
    if (displayWidth(joined) <= width) {
      row = joined
      continue
    }
    if (row !== "") rows.push(row)
    row = displayWidth(piece) <= width ? piece : fitted(piece)
  }
  return [...rows, row].join("\n")
}

/**
 * The question's line and the keys that answer it: `a`, `s` and `p` only when the request
 * offers those scopes, `v` only when there is more to read in the pager (the terminal's size,
 * as given to `previewBlock`, decides whether a command is cut, and its width how the line is
 * laid out).
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
  const offered = (key: string) => request.always.find((choice) => choiceKey(choice) === key)
  const always = offered("a")
  const session = offered("s")
  const project = offered("p")
  const choices: ReadonlyArray<readonly [string, string] | undefined> = [
    ["y", "[y]es"],
    ["n", "[n]o"],
    always === undefined ? undefined : ["a", `[a]lways ${sanitize(always.label)}`],
    session === undefined ? undefined : ["s", `[s]ession only`],
    project === undefined ? undefined : ["p", "[p]roject"],
    view ? ["v", "[v]iew"] : undefined,
    ["t", "[t]ell mm what to do instead"]
  ]
  const given = choices.filter((choice): choice is readonly [string, string] => choice !== undefined)
  return { line: laidOut(given.map(([, text]) => text), columns), keys: given.map(([key]) => key) }
}
