import * as Effect from "effect/Effect"
import type { MarkdownEngine } from "./MarkdownEngine"
import { noColor } from "./Style"
import type { Printer } from "./TerminalIO"

/**
 * An answer rendered as markdown while it streams. A line is drawn once it is complete: prose
 * line by line, a fenced block's lines one by one (highlighted), a table once its last row has
 * come (its columns need every row). What is not complete yet — the line being written, the
 * rows of a table so far — is shown raw in the printer's live block, redrawn at most every
 * `LIVE_MS`, and replaced by its rendering. Nothing here reaches a pipe: there the answer is
 * printed as it came.
 */
export interface AnswerRenderer {
  readonly write: (text: string) => void
  /** The answer (or this part of it, before a tool call) ended: everything held is drawn. */
  readonly flush: () => void
}

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
  let fence: { readonly marker: string; readonly language: string } | undefined
  let table: Array<string> | undefined
  let timer: NodeJS.Timeout | undefined
  let liveShown = false

  /** One complete line: what it draws (with its newline), or "" while it is held. */
  const complete = (line: string): string => {
    if (fence !== undefined) {
      const trimmed = line.trim()
      if (trimmed.startsWith(fence.marker) && /^([`~])\1*$/.test(trimmed)) {
        fence = undefined
        return ""
      }
      return `${engine.code(line, fence.language)}\n`
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
      fence = { marker: opened[1], language: opened[2].toLowerCase() }
      return drawn
    }
    if (tableRow.test(line)) {
      table = [line]
      return drawn
    }
    return `${drawn}${engine.line(line)}\n`
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
    for (const line of [...(table ?? []), ...(partial === "" ? [] : [partial])]) {
      const chars = [...line]
      if (chars.length === 0) rows.push("")
      for (let i = 0; i < chars.length; i += width) rows.push(chars.slice(i, i + width).join(""))
    }
    return rows.slice(-Math.max(1, (out.rows() || 24) - 2))
  }

  const showPending = () => {
    timer = undefined
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
      if (partial !== "" || table !== undefined) schedule()
    },
    flush: () => {
      cancelLive()
      let drawn = partial === "" ? "" : complete(partial)
      partial = ""
      drawn += releaseTable()
      fence = undefined
      if (drawn !== "") out.write(drawn)
    }
  }
}

let loading: Promise<MarkdownEngine> | undefined

/**
 * The engine, loaded once. Built, it is a file of its own (dist/mm-markdown.cjs: marked,
 * highlight.js and the rest weigh as much as mm), so start-up never reads it. Its colour
 * libraries are told to draw colours: mm has already decided (a terminal, no NO_COLOR).
 */
export const loadMarkdownEngine = (columns: () => number): Promise<MarkdownEngine> =>
  (loading ??= withColours(() => import("./MarkdownEngine")).then((module) => module.makeMarkdownEngine(columns)))

const withColours = async <A>(load: () => Promise<A>): Promise<A> => {
  const before = process.env.FORCE_COLOR
  process.env.FORCE_COLOR = "1"
  try {
    return await load()
  } finally {
    if (before === undefined) delete process.env.FORCE_COLOR
    else process.env.FORCE_COLOR = before
  }
}

/** Where an answer's text goes, for one terminal. */
export interface Answers {
  /** The engine, loaded on first use when answers are rendered; `undefined` when they are not (a pipe, NO_COLOR) or it cannot load. */
  readonly engine: Effect.Effect<MarkdownEngine | undefined>
  /** A piece of an answer: rendered when the engine is loaded, printed as it came otherwise. */
  readonly write: (text: string) => void
  /** What the answer holds back is drawn: before anything else is printed, and when the turn ends. */
  readonly flush: () => void
}

/**
 * Answers rendered as markdown when stdout is a terminal and NO_COLOR is not set; anywhere
 * else printed exactly as the model wrote them.
 */
export const makeAnswers = (print: Printer, env: NodeJS.ProcessEnv = process.env, stdout: NodeJS.WriteStream = process.stdout): Answers => {
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
    write: (text) => {
      if (loaded === undefined) return print.write(text)
      answer ??= makeAnswerRenderer({ write: print.write, live: print.live, columns, rows: () => stdout.rows || 24 }, loaded)
      answer.write(text)
    },
    flush: () => {
      answer?.flush()
      answer = undefined
    }
  }
}
