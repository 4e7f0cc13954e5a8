import { displayWidth } from "../text/Width"

/** Columns a string takes, by grapheme cluster: wide East Asian characters and emoji count two, combining marks none. */
const columns = (text: string): number => displayWidth(text)

const visible = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

/**
 * From the start of the cursor's row, everything to the end of the screen erased, the cursor
 * back at that row's start. Not a bare `ESC[J` from the row's start: on the screen's top row
 * (after Ctrl-L) that clears the whole screen, which tmux then copies into the scrollback at
 * every keystroke. The row is erased first, then the rest from its second column.
 */
export const ERASE_DOWN = "\r\u001b[K\u001b[C\u001b[J\r"

/** A prompt and its line laid out on the screen: the text to write, its rows, where the cursor goes. */
interface Layout {
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
  out += `${ERASE_DOWN}${drawn}`
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
