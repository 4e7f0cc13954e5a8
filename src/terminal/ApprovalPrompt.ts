// The terminal's approval prompt: the core's preview, coloured and wrapped, then one line of
// one-key choices (docs/how-to/approvals.md).
import type { ApprovalRequest } from "../approvals/Approver"
import { type PreviewLine, previewLines } from "../approvals/Preview"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"
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

/** The preview as printed above the question: indented, each line wrapped to `columns`, coloured by kind. */
export const previewBlock = (
  request: Pick<ApprovalRequest, "preview" | "title"> & Partial<Pick<ApprovalRequest, "always" | "outsideSandbox">>,
  style: Style,
  columns: number
): string => {
  const width = Math.max(20, columns - INDENT.length)
  if (request.outsideSandbox !== undefined) {
    return wrapLine(sanitize(`the sandbox blocked it: ${request.outsideSandbox}`), width)
      .map((piece) => `${INDENT}${style.yellow(piece)}\n`)
      .join("")
  }
  // what an "always" would cover, in words (the first choice: the [a] key)
  const always = (request.always ?? []).filter((choice) => choice.scope._tag !== "Project")
  const coverage = always.map((choice): PreviewLine => ({ kind: "note", text: `always: ${choice.covers}` }))
  const lines = (shownByTitle(request) ? [] : previewLines(request.preview)).map((line) =>
    viewable(request) && line.kind === "header" ? { ...line, text: `${line.text} — [v]iew in ${pagerName()}` } : line
  )
  return [...lines, ...coverage]
    .flatMap((line) => wrapLine(sanitize(line.text), width).map((piece) => INDENT + paint(line, style)(piece)))
    .map((line) => `${line}\n`)
    .join("")
}

/** A file change too large to diff in the preview, which `v` shows whole in the pager (Pager.ts). */
export const viewable = ({ preview }: Partial<Pick<ApprovalRequest, "preview">>): boolean =>
  preview?._tag === "FileChange" && preview.tooLarge !== undefined && preview.before !== undefined &&
  preview.after !== undefined

export interface Choices {
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
