import type { Style } from "../text/Style"
import type { Printer } from "./TerminalIO"

export interface ThoughtDisplay {
  /** A piece of the model's reasoning: shown dim as it comes, on a terminal. */
  readonly push: (text: string) => void
  /** The answer (or a tool call) starts: the reasoning shown so far collapses to `thought for N s`. */
  readonly close: () => void
}

/** How many screen rows `text` took when printed from a line start on a terminal `columns` wide. */
export const rowsOf = (text: string, columns: number): number =>
  text.split("\n").reduce((rows, line) => rows + Math.max(1, Math.ceil([...line].length / Math.max(1, columns))), 0)

export const makeThoughtDisplay = (options: {
  readonly print: Printer
  readonly style: Style
  /** On a terminal the reasoning streams, then is erased; elsewhere only the closing line is printed. */
  readonly live: boolean
  readonly columns: () => number
  readonly now?: () => number
}): ThoughtDisplay => {
  const { print, style, live } = options
  const now = options.now ?? Date.now
  let started: number | undefined
  let shown = ""

  const push = (text: string) => {
    if (text === "") return
    if (started === undefined) {
      started = now()
      print.endLine()
    }
    if (!live) return
    print.write(style.dim(text))
    shown += text
  }

  const close = () => {
    if (started === undefined) return
    const seconds = Math.max(1, Math.ceil((now() - started) / 1000))
    const line = style.dim(`thought for ${seconds} s`)
    if (live && shown !== "") {
      const rows = rowsOf(shown, options.columns())
      // back to the first row of the reasoning, cleared to the end of the screen
      print.write(`\r${rows > 1 ? `\u001b[${rows - 1}A` : ""}\u001b[J${line}\n`)
    } else {
      print.line(line)
    }
    started = undefined
    shown = ""
  }

  return { push, close }
}
