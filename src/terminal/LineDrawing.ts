/** Columns a string takes: wide East Asian characters and emoji count two. */
const columns = (text: string): number => {
  let width = 0
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (code < 32 || (code >= 0x300 && code <= 0x36f) || code === 0x200d || (code >= 0xfe00 && code <= 0xfe0f)) continue
    width += (code >= 0x1100 && code <= 0x115f) ||
        (code >= 0x2e80 && code <= 0xa4cf) ||
        (code >= 0xac00 && code <= 0xd7a3) ||
        (code >= 0xf900 && code <= 0xfaff) ||
        (code >= 0xfe30 && code <= 0xfe4f) ||
        (code >= 0xff00 && code <= 0xff60) ||
        (code >= 0xffe0 && code <= 0xffe6) ||
        (code >= 0x1f300 && code <= 0x1faff) ||
        (code >= 0x20000 && code <= 0x3fffd)
      ? 2
      : 1
  }
  return width
}

const visible = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

/** A prompt and its line laid out on the screen: the text to write, its rows, where the cursor goes. */
export interface Layout {
  readonly drawn: string
  readonly rows: number
  readonly cursorRow: number
  readonly cursorCol: number
}

/**
 * Where each character of `prompt + body` falls on a screen `width` columns wide, with
 * continuation lines indented under the prompt; `at` is the cursor's index into `body`.
 * `style`, when given, draws each non-empty line of `body` (a question sent).
 */
export const layout = (
  prompt: string,
  body: string,
  at: number,
  width: number,
  style?: (line: string) => string
): Layout => {
  const indent = " ".repeat(columns(visible(prompt)))
  const lines = body.split("\n")
  let row = 0
  let cursorRow = 0
  let cursorCol = 0
  let offset = 0
  const drawn: Array<string> = []
  for (const [i, line] of lines.entries()) {
    const head = i === 0 ? prompt : indent
    const headCols = columns(visible(head))
    if (at >= offset && at <= offset + line.length) {
      const before = headCols + columns(line.slice(0, at - offset))
      cursorRow = row + Math.floor(before / width)
      cursorCol = before % width
    }
    drawn.push(head + (style !== undefined && line !== "" ? style(line) : line))
    row += Math.max(1, Math.ceil((headCols + columns(line)) / width))
    offset += line.length + 1
  }
  return { drawn: drawn.join("\r\n"), rows: row, cursorRow, cursorCol }
}

/** What redraws a layout over the last drawing, `rowsAbove` rows above the cursor, and puts the cursor back. */
export const redrawing = (rowsAbove: number, { cursorCol, cursorRow, drawn, rows }: Layout): string => {
  let out = rowsAbove > 0 ? `\u001b[${rowsAbove}A` : ""
  out += `\r\u001b[J${drawn}`
  // the cursor is after the last character drawn: back to where it belongs
  const lastRow = rows - 1
  if (lastRow > cursorRow) out += `\u001b[${lastRow - cursorRow}A`
  out += `\r${cursorCol > 0 ? `\u001b[${cursorCol}C` : ""}`
  return out
}

/** What goes below a drawing of `rows` rows, the cursor `rowsAbove` rows down in it, to a fresh line. */
export const leaving = (rowsAbove: number, { rows }: Layout): string => {
  const down = rows - 1 - rowsAbove
  return `${down > 0 ? `\u001b[${down}B` : ""}\r\n`
}
