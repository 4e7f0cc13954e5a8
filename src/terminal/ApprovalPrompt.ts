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

/** A one-line command without a timeout is already whole on the tool's line (`⚙ bash  ls -la`). */
const shownByTitle = ({ preview, title }: Pick<ApprovalRequest, "preview" | "title">): boolean =>
  preview._tag === "Command" && preview.timeout === undefined && !preview.command.trim().includes("\n") &&
  preview.command.trim() === title

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
  columns: number
): string => {
  const width = Math.max(20, columns - INDENT.length)
  if (request.outsideSandbox !== undefined) return outsideBlock(request.preview, request.outsideSandbox, style, width)
  // what an "always" would cover, in words (the first choice: the [a] key)
  const always = (request.always ?? []).filter((choice) => choice.scope._tag !== "Project")
  const coverage = always.map((choice): PreviewLine => ({ kind: "note", text: `always: ${choice.covers}` }))
  const lines = (shownByTitle(request) ? [] : previewLines(request.preview)).map((line) =>
    viewable(request) && line.kind === "header" ? { ...line, text: `${line.text} — [v]iew in ${pagerName()}` } : line
  )
  // a new file's lines count from 1; a diff's from its hunk headers
  const at: Numbering = { old: 1, new: 1 }
  const gutter = Math.max(3, String(lastLineNumber(lines)).length)
  return [...lines, ...coverage]
    .flatMap((line) => drawnLine(line, style, width, at, gutter).map((piece) => INDENT + piece))
    .map((line) => `${line}\n`)
    .join("")
}

/**
 * Above the question to run a blocked command again outside the sandbox: the whole command,
 * every line drawn as the ordinary approval draws it (even a one-line command, whose tool line
 * may be far above by now), then why the sandbox stopped it, in mm's words.
 */
const outsideBlock = (preview: ApprovalRequest["preview"], reason: string, style: Style, width: number): string =>
  [
    ...previewLines(preview).flatMap((line) => drawnLine(line, style, width, { old: 1, new: 1 }, 0)),
    // its line breaks become spaces (a path in it cannot start a line of its own); wrapped at its words
    ...wrapText(sanitize(`the sandbox blocked it: ${reason}`).replace(/\s+/g, " "), width)
      .split("\n").map((piece) => style.yellow(piece))
  ].map((line) => `${INDENT}${line}\n`).join("")

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

/** The question's line and the keys that answer it: `a` and `p` only when the request offers those scopes. */
export const choicesOf = (
  request: Pick<ApprovalRequest, "always"> & Partial<Pick<ApprovalRequest, "preview" | "outsideSandbox">>
): Choices => {
  if (request.outsideSandbox !== undefined) return { line: "run it outside the sandbox? [y/n] ", keys: ["y", "n"] }
  const always = request.always.find((choice) => choice.scope._tag !== "Project")
  const project = request.always.find((choice) => choice.scope._tag === "Project")
  const parts = [
    "[y]es",
    "[n]o",
    ...(always === undefined ? [] : [`[a]lways ${sanitize(always.label)}`]),
    ...(project === undefined ? [] : ["[p]roject"]),
    "[t]ell mm what to do instead"
  ]
  const keys = [
    "y",
    "n",
    ...(always === undefined ? [] : ["a"]),
    ...(project === undefined ? [] : ["p"]),
    "t",
    ...(viewable(request) ? ["v"] : [])
  ]
  return { line: `allow? ${parts.join("  ")}: `, keys }
}
