// A call's preview (tools/Preview.ts) as lines for a person: the terminal prints them above its
// question, and the editor is sent the same warnings.
import type { FileChange, Preview } from "../tools/Preview"

/** A new file shows this many lines of its content, then how many more there are. */
const NEW_FILE_HEAD_LINES = 40

/** One line of a preview as shown to a person; the kind decides its colour in the terminal. */
export interface PreviewLine {
  readonly kind: "text" | "header" | "hunk" | "added" | "removed" | "context" | "note" | "warning"
  readonly text: string
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

const linesOf = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

const diffLine = (line: string): PreviewLine => {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return { kind: "header", text: line }
  if (line.startsWith("@@")) return { kind: "hunk", text: line }
  if (line.startsWith("+")) return { kind: "added", text: line }
  if (line.startsWith("-")) return { kind: "removed", text: line }
  if (line.startsWith("\\")) return { kind: "note", text: line }
  return { kind: "context", text: line }
}

/**
 * `outside the project: REAL PATH`, and why when it is not plain (a link, hard links); for a
 * protected path inside the project, that it is asked as if it were outside, and why.
 */
export const outsideLines = (preview: FileChange): Array<PreviewLine> => {
  const real = preview.real ?? preview.file
  if (preview.protectedPath === true) {
    const why = preview.outsideWhy ?? ""
    return [
      { kind: "warning", text: `protected, asked as if outside the project: ${real}` },
      { kind: "warning", text: real !== preview.file ? `(${preview.path} is a link: ${why})` : `(${why})` }
    ]
  }
  const lines: Array<PreviewLine> = [{ kind: "warning", text: `outside the project: ${real}` }]
  if (preview.outsideWhy !== undefined && real !== preview.file) {
    lines.push({ kind: "warning", text: `(${preview.path} is a link: ${preview.outsideWhy})` })
  } else if (preview.outsideWhy?.includes("hard link") === true) {
    lines.push({ kind: "warning", text: `(${preview.outsideWhy})` })
  }
  return lines
}

/**
 * The preview as lines for a person (the terminal prints them above its question): the
 * whole command; a diff; or a new file's first lines and its size. Long lines are left
 * whole: the one who prints them wraps them.
 */
export const previewLines = (preview: Preview): ReadonlyArray<PreviewLine> => {
  switch (preview._tag) {
    case "None":
      return []
    case "Secret":
      return [{ kind: "warning", text: `${preview.reason}: its content would go to the model` }]
    case "Command":
      return [
        ...preview.command.replace(/\n$/, "").split("\n").map((text): PreviewLine => ({ kind: "text", text })),
        ...(preview.timeout === undefined ? [] : [{ kind: "note", text: `(timeout ${preview.timeout} s)` } as const])
      ]
    case "FileChange": {
      const out: Array<PreviewLine> = []
      if (preview.outsideProject) out.push(...outsideLines(preview))
      if (preview.problem !== undefined) out.push({ kind: "warning", text: preview.problem })
      if (preview.after === undefined) return out
      if (preview.before === undefined) {
        const lines = linesOf(preview.after)
        const bytes = Buffer.byteLength(preview.after)
        out.push({
          kind: "header",
          text: `new file ${preview.path} (${plural(bytes, "byte")}, ${plural(lines.length, "line")})`
        })
        for (const line of lines.slice(0, NEW_FILE_HEAD_LINES)) out.push({ kind: "added", text: `+${line}` })
        if (lines.length > NEW_FILE_HEAD_LINES) {
          out.push({ kind: "note", text: `… ${plural(lines.length - NEW_FILE_HEAD_LINES, "more line")}` })
        }
        return out
      }
      if (preview.tooLarge !== undefined) {
        out.push({ kind: "header", text: `${preview.path}: ${preview.tooLarge}` })
        return out
      }
      if (preview.diff === "") {
        out.push({ kind: "note", text: `${preview.path} stays as it is (no change)` })
        return out
      }
      return [...out, ...linesOf(preview.diff).map(diffLine)]
    }
  }
}
