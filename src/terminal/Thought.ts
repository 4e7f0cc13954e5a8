import type { Style } from "../text/Style"
import type { Printer } from "./TerminalIO"

export interface ThoughtDisplay {
  /** A piece of the model's reasoning: shown dim as it comes, on a terminal, under a `thinking · N s` label. */
  readonly push: (text: string) => void
  /** The answer (or a tool call) starts, or the turn is cancelled: the reasoning collapses to `thought for N s`. */
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
  /** The screen's rows: the label is kept up to date only while it is on the screen. */
  readonly rows?: () => number
  readonly now?: () => number
}): ThoughtDisplay => {
  const { print, style, live } = options
  const now = options.now ?? Date.now
  let started: number | undefined
  let shown = ""
  let labelled = 0
  const label = (seconds: number) => style.dim(`thinking · ${seconds} s`)

  /** The label's seconds, rewritten in place (cursor saved and restored) while it is still on the screen. */
  const relabel = () => {
    const seconds = Math.floor((now() - started!) / 1000)
    if (seconds === labelled) return
    const up = rowsOf(shown, options.columns())
    if (up >= (options.rows?.() ?? 24) - 1) return
    labelled = seconds
    print.write(`\u001b7\u001b[${up}A\r${label(seconds)}\u001b[K\u001b8`)
  }

  const push = (text: string) => {
    if (text === "") return
    if (started === undefined) {
      started = now()
      labelled = 0
      print.endLine()
      if (live) print.write(`${label(0)}\n`)
    }
    if (!live) return
    print.write(style.dim(text))
    shown += text
    relabel()
  }

  const close = () => {
    if (started === undefined) return
    const seconds = Math.max(1, Math.ceil((now() - started) / 1000))
    const line = style.dim(`thought for ${seconds} s`)
    if (live) {
      // back to the label above the reasoning, cleared to the end of the screen
      const rows = shown === "" ? 1 : rowsOf(shown, options.columns()) + 1
      print.write(`\r${rows > 1 ? `\u001b[${rows - 1}A` : ""}\u001b[J${line}\n`)
    } else {
      print.line(line)
    }
    started = undefined
    shown = ""
  }

  return { push, close }
}
