import * as Effect from "effect/Effect"

import { noColor } from "../text/Style"
import type { MarkdownEngine } from "./MarkdownEngine"
import type { Printer } from "./TerminalIO"

/**
 * An answer rendered as markdown while it streams. A line is drawn once it is complete: prose
 * line by line, a fenced block's lines highlighted together (when the block closes, or those
 * come so far at the next redraw), a table once its last row has come (its columns need every
 * row). What is not complete yet — the line being written, the rows of a table so far — is
 * shown raw in the printer's live block, redrawn at most every `LIVE_MS`, and replaced by its
 * rendering. Nothing here reaches a pipe: there the answer is printed as it came.
 */
export interface AnswerRenderer {
  readonly write: (text: string) => void
  /** The answer (or this part of it, before a tool call) ended: everything held is drawn. */
  readonly flush: () => void
}

/** How long after a question is sent the engine is loaded, if the first words have not come yet. */
const PRELOAD_AFTER_MS = 25

/** How often the text not complete yet is redrawn: a burst of deltas costs one redraw. */
export const LIVE_MS = 40

const fenceOpen = /^\s{0,3}(`{3,}|~{3,})\s*([\w+#.-]*)/
const tableRow = /^\s{0,3}\|.*\|\s*$/

export interface AnswerOutput {
  /** Rendered lines, each ending with a newline. */
  readonly write: (text: string) => void
  /** The raw rows not complete yet, drawn under everything; `undefined` erases them. */
  readonly live: (rows: ReadonlyArray<string> | undefined) => void
  readonly columns: () => number
  readonly rows: () => number
}

export const makeAnswerRenderer = (out: AnswerOutput, engine: MarkdownEngine): AnswerRenderer => {
  let partial = ""
  /** A fenced block: its code lines not drawn yet are highlighted together, when it closes or when the timer comes. */
  let fence: { readonly marker: string; readonly language: string; lines: Array<string> } | undefined
  let table: Array<string> | undefined
  let timer: NodeJS.Timeout | undefined
  let liveShown = false

  /** One complete line: what it draws (with its newline), or "" while it is held. */
  const complete = (line: string): string => {
    if (fence !== undefined) {
      const trimmed = line.trim()
      if (trimmed.startsWith(fence.marker) && /^([`~])\1*$/.test(trimmed)) {
        const drawn = releaseCode()
        fence = undefined
        return drawn
      }
      fence.lines.push(line)
      // never more held than the live block could show
      return fence.lines.length >= Math.max(1, (out.rows() || 24) - 2) ? releaseCode() : ""
    }
    let drawn = ""
    if (table !== undefined) {
      if (tableRow.test(line)) {
        table.push(line)
        return ""
      }
      drawn = releaseTable()
    }
    const opened = fenceOpen.exec(line)
    if (opened !== null) {
      fence = { marker: opened[1], language: opened[2].toLowerCase(), lines: [] }
      return drawn
    }
    if (tableRow.test(line)) {
      table = [line]
      return drawn
    }
    return `${drawn}${engine.line(line)}\n`
  }

  const releaseCode = (): string => {
    if (fence === undefined || fence.lines.length === 0) return ""
    const lines = fence.lines
    fence.lines = []
    return `${engine.code(lines, fence.language)}\n`
  }

  const releaseTable = (): string => {
    if (table === undefined) return ""
    const rows = table
    table = undefined
    return `${engine.table(rows)}\n`
  }

  /** The raw text not complete yet, cut into screen rows; only the last screen's worth. */
  const pendingRows = (): Array<string> => {
    const width = Math.max(20, (out.columns() || 80) - 1)
    const rows: Array<string> = []
    for (const line of [...(table ?? []), ...(fence?.lines ?? []), ...(partial === "" ? [] : [partial])]) {
      const chars = [...line]
      if (chars.length === 0) rows.push("")
      for (let i = 0; i < chars.length; i += width) rows.push(chars.slice(i, i + width).join(""))
    }
    return rows.slice(-Math.max(1, (out.rows() || 24) - 2))
  }

  const showPending = () => {
    timer = undefined
    // code lines are complete: drawn now, not shown raw
    const code = releaseCode()
    if (code !== "") {
      liveShown = false
      out.write(code)
    }
    const rows = pendingRows()
    liveShown = rows.length > 0
    out.live(rows.length > 0 ? rows : undefined)
  }

  const schedule = () => {
    if (timer !== undefined) return
    timer = setTimeout(showPending, LIVE_MS)
    timer.unref()
  }

  const cancelLive = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (liveShown) out.live(undefined)
    liveShown = false
  }

  return {
    write: (text) => {
      const lines = (partial + text).split("\n")
      partial = lines.pop()!
      let drawn = ""
      for (const line of lines) drawn += complete(line.replace(/\r$/, ""))
      if (drawn !== "") {
        // writing erases the live block: it is drawn again, by the timer, if something is still pending
        liveShown = false
        out.write(drawn)
      }
      if (partial !== "" || table !== undefined || (fence?.lines.length ?? 0) > 0) schedule()
    },
    flush: () => {
      cancelLive()
      let drawn = partial === "" ? "" : complete(partial)
      partial = ""
      drawn += releaseCode() + releaseTable()
      fence = undefined
      if (drawn !== "") out.write(drawn)
    }
  }
}

let loading: Promise<MarkdownEngine> | undefined

/**
 * The engine, loaded once. Built, it is a file of its own (dist/mm-markdown.cjs: marked,
 * highlight.js and the rest weigh as much as mm), so start-up never reads it.
 */
export const loadMarkdownEngine = (
  columns: () => number
): Promise<
  MarkdownEngine
> => (loading ??= import("./MarkdownEngine").then((module) => warmedUp(module.makeMarkdownEngine(columns))))

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
  /** The engine, loaded on first use when answers are rendered; `undefined` when they are not (a pipe, NO_COLOR) or it cannot load. */
  readonly engine: Effect.Effect<MarkdownEngine | undefined>
  /** Whether `engine` has nothing left to do (loaded, or not wanted): the streaming path skips it then. */
  readonly settled: () => boolean
  /**
   * A question was sent: the engine is loaded shortly after, while the model reads it, rather
   * than when the first words arrive (a no-op when it is loaded, or not wanted).
   */
  readonly preload: () => void
  /** A piece of an answer: rendered when the engine is loaded, printed as it came otherwise. */
  readonly write: (text: string) => void
  /** What the answer holds back is drawn: before anything else is printed, and when the turn ends. */
  readonly flush: () => void
}

/**
 * Answers rendered as markdown when stdout is a terminal and NO_COLOR is not set; anywhere
 * else printed exactly as the model wrote them.
 */
export const makeAnswers = (
  print: Printer,
  env: NodeJS.ProcessEnv = process.env,
  stdout: NodeJS.WriteStream = process.stdout
): Answers => {
  let rendering = stdout.isTTY === true && !noColor(env)
  let loaded: MarkdownEngine | undefined
  let answer: AnswerRenderer | undefined
  const columns = () => stdout.columns || 80
  const engine: Effect.Effect<MarkdownEngine | undefined> = Effect.suspend(() =>
    !rendering || loaded !== undefined
      ? Effect.succeed(loaded)
      : Effect.promise(() =>
        loadMarkdownEngine(columns).then(
          (engine) => (loaded = engine),
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
    preload: () => {
      if (!rendering || loaded !== undefined) return
      // not at once: the request goes out first
      setTimeout(() => void Effect.runPromise(engine), PRELOAD_AFTER_MS).unref()
    },
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
    }
  }
}
