import * as Effect from "effect/Effect"

import { colourFor, escapesFor, withoutColour } from "../text/Style"
import type { MarkdownEngine } from "./MarkdownEngine"
import type { Printer } from "./TerminalIO"

/**
 * An answer rendered as markdown while it streams. A line is drawn once it is complete: prose
 * line by line, a fenced block's lines highlighted together (when the block closes, or those
 * come so far at the next redraw), a table once its last row has come (its columns need every
 * row). What is not complete yet — the line being written, the rows of a table so far — is
 * shown raw in the printer's live block, redrawn at most every `LIVE_MS` (and at once, cut at
 * the new width, when the terminal is resized), and replaced by its rendering. Nothing here reaches a pipe: there the answer is printed as it came.
 */
interface AnswerRenderer {
  readonly write: (text: string) => void
  /** The answer (or this part of it, before a tool call) ended: everything held is drawn. */
  readonly flush: () => void
  /** The answer was cancelled: what is held is drawn, but a table's unfinished row is dropped and a line says the table was cut. */
  readonly cut: () => void
}

/** Under a table an answer's cancel cut short. */
const TABLE_CUT = "  ⋯ table cut off here: the answer was cancelled"

/** How long after a question is sent the engine is loaded, if the first words have not come yet. */
const PRELOAD_AFTER_MS = 25

/** How often the text not complete yet is redrawn: a burst of deltas costs one redraw. */
export const LIVE_MS = 40

const fenceOpen = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/
const tableRow = /^\s{0,3}\|.*\|\s*$/

export interface AnswerOutput {
  /** Rendered lines, each ending with a newline. */
  readonly write: (text: string) => void
  /**
   * The raw rows not complete yet, drawn under everything; `undefined` erases them. They are
   * given as a function, asked again when the terminal is resized: they are cut at its width.
   */
  readonly live: (rows: (() => ReadonlyArray<string>) | undefined) => void
  readonly columns: () => number
  readonly rows: () => number
}

/** An answer being rendered: where it goes, and what it holds back, not drawn yet. */
interface Rendering {
  readonly out: AnswerOutput
  readonly engine: MarkdownEngine
  /** The line being written, not complete yet. */
  partial: string
  /** Its length in characters (code points), kept as it grows: the live rows are cut from its end. */
  partialPoints: number
  /** Whether it ends with the first half of a surrogate pair (looked at, it would be copied whole). */
  partialHigh: boolean
  /** A fenced block: its code lines not drawn yet are highlighted together, when it closes or when the timer comes. */
  fence: { readonly marker: string; readonly language: string; lines: Array<string> } | undefined
  table: Array<string> | undefined
  timer: NodeJS.Timeout | undefined
  liveShown: boolean
}

/** A complete line inside a fenced block: the block drawn when it closes, or held. */
const fencedLine = (r: Rendering, fence: NonNullable<Rendering["fence"]>, line: string): string => {
  const trimmed = line.trim()
  if (trimmed.startsWith(fence.marker) && /^([`~])\1*$/.test(trimmed)) {
    const drawn = releaseCode(r)
    r.fence = undefined
    return drawn
  }
  fence.lines.push(line)
  // never more held than the live block could show
  return fence.lines.length >= Math.max(1, (r.out.rows() || 24) - 2) ? releaseCode(r) : ""
}

/** One complete line: what it draws (with its newline), or "" while it is held. */
const completeLine = (r: Rendering, line: string): string => {
  if (r.fence !== undefined) return fencedLine(r, r.fence, line)
  let drawn = ""
  if (r.table !== undefined) {
    if (tableRow.test(line)) {
      r.table.push(line)
      return ""
    }
    drawn = releaseTable(r)
  }
  const opened = fenceOpen.exec(line)
  if (opened !== null) {
    r.fence = { marker: opened[1], language: opened[2].toLowerCase(), lines: [] }
    return drawn
  }
  if (tableRow.test(line)) {
    r.table = [line]
    return drawn
  }
  return `${drawn}${r.engine.line(line)}\n`
}

const releaseCode = (r: Rendering): string => {
  if (r.fence === undefined || r.fence.lines.length === 0) return ""
  const lines = r.fence.lines
  r.fence.lines = []
  return `${r.engine.code(lines, r.fence.language)}\n`
}

const releaseTable = (r: Rendering): string => {
  if (r.table === undefined) return ""
  const rows = r.table
  r.table = undefined
  return `${r.engine.table(rows)}\n`
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Characters (code points) in `text`: a surrogate pair is one, a lone half one too. */
const pointsOf = (text: string): number => {
  let points = text.length
  for (let i = 1; i < text.length; i++) {
    if (isLow(text.charCodeAt(i)) && isHigh(text.charCodeAt(i - 1))) {
      points--
      i++
    }
  }
  return points
}

/**
 * The last `max` of the rows `line` (of `points` characters) is cut into, `width` characters
 * each from its start: built from the characters those rows hold, at its end, only.
 */
const tailRows = (line: string, points: number, width: number, max: number): Array<string> => {
  if (points === 0) return [""]
  const kept = points - Math.max(0, Math.ceil(points / width) - max) * width
  let start = line.length
  for (let k = 0; k < kept; k++) {
    start--
    if (start > 0 && isLow(line.charCodeAt(start)) && isHigh(line.charCodeAt(start - 1))) start--
  }
  const chars = [...line.slice(start)]
  const rows: Array<string> = []
  for (let i = 0; i < chars.length; i += width) rows.push(chars.slice(i, i + width).join(""))
  return rows
}

/**
 * The raw text not complete yet, cut into screen rows; only the last screen's worth, taken
 * from the end: a line of a megabyte costs no more to redraw than a short one.
 */
const pendingRows = (r: Rendering): Array<string> => {
  const width = Math.max(20, (r.out.columns() || 80) - 1)
  const max = Math.max(1, (r.out.rows() || 24) - 2)
  const parts: Array<Array<string>> = []
  let total = 0
  if (r.partial !== "") {
    parts.push(tailRows(r.partial, r.partialPoints, width, max))
    total = parts[0].length
  }
  const held = [r.table ?? [], r.fence?.lines ?? []]
  for (let h = held.length - 1; h >= 0; h--) {
    for (let k = held[h].length - 1; k >= 0 && total < max; k--) {
      const line = held[h][k]
      const rows = tailRows(line, pointsOf(line), width, max - total)
      parts.push(rows)
      total += rows.length
    }
  }
  return parts.reverse().flat().slice(-max)
}

const showPending = (r: Rendering) => {
  r.timer = undefined
  // code lines are complete: drawn now, not shown raw
  const code = releaseCode(r)
  if (code !== "") {
    r.liveShown = false
    r.out.write(code)
  }
  r.liveShown = r.partial !== "" || r.table !== undefined || (r.fence?.lines.length ?? 0) > 0
  r.out.live(r.liveShown ? () => pendingRows(r) : undefined)
}

const schedule = (r: Rendering) => {
  if (r.timer !== undefined) return
  r.timer = setTimeout(() => showPending(r), LIVE_MS)
  r.timer.unref()
}

const cancelLive = (r: Rendering) => {
  if (r.timer !== undefined) clearTimeout(r.timer)
  r.timer = undefined
  if (r.liveShown) r.out.live(undefined)
  r.liveShown = false
}

/**
 * A piece of the answer: its complete lines drawn (or held), the rest shown live soon. Only
 * the piece is searched for line ends: a line streamed in thousands of pieces is not searched
 * again for each one.
 */
const writeAnswer = (r: Rendering, text: string) => {
  if (!text.includes("\n")) {
    const joined = r.partialHigh && isLow(text.charCodeAt(0))
    r.partialPoints += pointsOf(text) - (joined ? 1 : 0)
    r.partial += text
    if (text !== "") r.partialHigh = isHigh(text.charCodeAt(text.length - 1))
  } else {
    const lines = text.split("\n")
    lines[0] = r.partial + lines[0]
    r.partial = lines.pop()!
    r.partialPoints = pointsOf(r.partial)
    r.partialHigh = isHigh(r.partial.charCodeAt(r.partial.length - 1))
    let drawn = ""
    for (const line of lines) drawn += completeLine(r, line.replace(/\r$/, ""))
    if (drawn !== "") {
      // writing erases the live block: it is drawn again, by the timer, if something is still pending
      r.liveShown = false
      r.out.write(drawn)
    }
  }
  if (r.partial !== "" || r.table !== undefined || (r.fence?.lines.length ?? 0) > 0) schedule(r)
}

/** The answer ended: everything held is drawn. */
const flushAnswer = (r: Rendering) => {
  cancelLive(r)
  let drawn = r.partial === "" ? "" : completeLine(r, r.partial)
  r.partial = ""
  r.partialPoints = 0
  r.partialHigh = false
  drawn += releaseCode(r) + releaseTable(r)
  r.fence = undefined
  if (drawn !== "") r.out.write(drawn)
}

/** The answer was cancelled: a table held is drawn without its unfinished row, and closed with a line saying so. */
const cutAnswer = (r: Rendering) => {
  if (r.table === undefined) return flushAnswer(r)
  if (/^\s{0,3}\|/.test(r.partial)) {
    r.partial = ""
    r.partialPoints = 0
    r.partialHigh = false
  }
  const rows = r.table
  r.table = undefined
  cancelLive(r)
  r.out.write(`${r.engine.table(rows)}\n${TABLE_CUT}\n`)
  flushAnswer(r)
}

export const makeAnswerRenderer = (out: AnswerOutput, engine: MarkdownEngine): AnswerRenderer => {
  const r: Rendering = {
    out,
    engine,
    partial: "",
    partialPoints: 0,
    partialHigh: false,
    fence: undefined,
    table: undefined,
    timer: undefined,
    liveShown: false
  }
  return { write: (text) => writeAnswer(r, text), flush: () => flushAnswer(r), cut: () => cutAnswer(r) }
}

let loading: Promise<MarkdownEngine> | undefined

/**
 * The engine, loaded once. Built, it is a file of its own (dist/mm-markdown.cjs: marked,
 * highlight.js and the rest weigh as much as mm), so start-up never reads it.
 */
export const loadMarkdownEngine = (
  columns: () => number,
  theme: "dark" | "light" = "dark"
): Promise<
  MarkdownEngine
> => (loading ??= import("./MarkdownEngine").then((module) => warmedUp(module.makeMarkdownEngine(columns, theme))))

/** A little of everything the engine draws, the code in the languages answers hold most. */
const WARM_UP = [
  "# A heading with **bold**",
  "Prose with *emphasis*, `code` and a [link](https://example.com).",
  "- an item",
  "1. a numbered item",
  "> a quote",
  "| a | b |",
  "| --- | ---: |",
  "| `one` | two words |",
  "```ts",
  "export const f = (x: number): string => `${x}` // note",
  "```",
  "```sh",
  "echo \"$HOME\" | grep -v x",
  "```",
  "```python",
  "def f(x): return x + 1",
  "```",
  ""
].join("\n")

/**
 * The engine's first lines cost several times the next ones (code compiled on first use,
 * grammars built): it draws a small sample once, into nothing, before the first answer.
 */
const warmedUp = (engine: MarkdownEngine): MarkdownEngine => {
  const sample = makeAnswerRenderer({ write: () => {}, live: () => {}, columns: () => 80, rows: () => 24 }, engine)
  sample.write(WARM_UP)
  sample.flush()
  return engine
}

/** Where an answer's text goes, for one terminal. */
export interface Answers {
  /** The engine, loaded on first use when answers are rendered; `undefined` when they are not (a pipe, TERM=dumb) or it cannot load. */
  readonly engine: Effect.Effect<MarkdownEngine | undefined>
  /** Whether `engine` has nothing left to do (loaded, or not wanted): the streaming path skips it then. */
  readonly settled: () => boolean
  /**
   * A question was sent: the engine is loaded shortly after, while the model reads it, rather
   * than when the first words arrive (nothing to do when it is loaded, or not wanted). The
   * load runs in a fiber forked from the one that asks, so it never outlives it: mm's end
   * interrupts a load not begun yet.
   */
  readonly preload: Effect.Effect<void>
  /** A piece of an answer: rendered when the engine is loaded, printed as it came otherwise. */
  readonly write: (text: string) => void
  /** What the answer holds back is drawn: before anything else is printed, and when the turn ends. */
  readonly flush: () => void
  /** The turn was cancelled: as `flush`, but a table held is closed with a line saying it was cut. */
  readonly cut: () => void
}

/** The engine's drawing with its colours taken out: NO_COLOR keeps the layout. */
const colourless = (engine: MarkdownEngine): MarkdownEngine => ({
  line: (markdown) => withoutColour(engine.line(markdown)),
  code: (lines, language) => withoutColour(engine.code(lines, language)),
  table: (rows) => withoutColour(engine.table(rows))
})

/**
 * Answers rendered as markdown when stdout is a terminal (not `TERM=dumb`), without colours
 * under NO_COLOR; through a pipe printed exactly as the model wrote them.
 */
export const makeAnswers = (
  print: Printer,
  env: NodeJS.ProcessEnv = process.env,
  stdout: NodeJS.WriteStream = process.stdout,
  theme: "dark" | "light" = "dark"
): Answers => {
  let rendering = escapesFor(stdout, env)
  const colour = colourFor(stdout, env)
  let loaded: MarkdownEngine | undefined
  let answer: AnswerRenderer | undefined
  const columns = () => stdout.columns || 80
  const engine: Effect.Effect<MarkdownEngine | undefined> = Effect.suspend(() =>
    !rendering || loaded !== undefined
      ? Effect.succeed(loaded)
      : Effect.promise(() =>
        loadMarkdownEngine(columns, theme).then(
          (engine) => (loaded = colour ? engine : colourless(engine)),
          () => {
            // without its engine mm still answers: raw, as through a pipe
            rendering = false
            return undefined
          }
        )
      )
  )
  return {
    engine,
    settled: () => !rendering || loaded !== undefined,
    preload: Effect.suspend(() =>
      !rendering || loaded !== undefined
        ? Effect.void
        // not at once: the request goes out first
        : Effect.asVoid(Effect.fork(Effect.zipRight(Effect.sleep(PRELOAD_AFTER_MS), engine)))
    ),
    write: (text) => {
      if (loaded === undefined) return print.write(text)
      answer ??= makeAnswerRenderer(
        { write: print.write, live: print.live, columns, rows: () => stdout.rows || 24 },
        loaded
      )
      answer.write(text)
    },
    flush: () => {
      answer?.flush()
      answer = undefined
    },
    cut: () => {
      answer?.cut()
      answer = undefined
    }
  }
}
