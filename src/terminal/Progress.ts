import { jobCount } from "../text/JobsText"
import type { Style } from "../text/Style"
import type { Printer } from "./TerminalIO"

/** How many lines of a running command are shown live. */
const LIVE_LINES = 5
const FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
const TICK_MS = 100

export interface Progress {
  /** A status line with a spinner and the seconds since now: `waiting for m · 4 s · Esc to cancel`. */
  readonly start: (label: string) => void
  /**
   * A new label for the status line, its seconds still counted from its start (started now
   * when none is shown): `waiting for m · reading the prompt 2,048/4,858`.
   */
  readonly relabel: (label: string) => void
  /** Output of the running command: its latest lines are shown, dim, above the status line. */
  readonly output: (text: string) => void
  /**
   * Lines kept above the live output while the status line is shown, until replaced
   * (`undefined` removes them): the model's plan, updated in place during a turn.
   */
  readonly plan: (lines: ReadonlyArray<string> | undefined) => void
  /** Erases the status line and the live output (the plan's lines come back with the next start). */
  readonly stop: () => void
  /**
   * The live output the last `stop` erased, as it was shown (dim lines), then forgotten: a
   * cancelled command's lines stay on screen with the cancel line.
   */
  readonly erased: () => ReadonlyArray<string>
}

/** ` · 1 job` while background jobs run (agent/Jobs.ts). */
const jobsPart = (running: number): string => (running === 0 ? "" : ` · ${jobCount(running)}`)

/**
 * What moves while nothing else does: the wait for the first token, a running tool. Drawn
 * through the printer's live block, so it is erased by the next output and never reaches a pipe.
 */
export const makeProgress = (
  print: Printer,
  style: Style,
  now: () => number = Date.now,
  jobs: () => number = () => 0
): Progress => {
  let label: string | undefined
  let since = 0
  let frame = 0
  let tail = ""
  let erased = ""
  let planLines: ReadonlyArray<string> = []
  let timer: NodeJS.Timeout | undefined

  const outputLines = (text: string) =>
    text
      .split("\n")
      .map((line) => line.replace(/\r/g, "").replace(/\t/g, "  "))
      .filter((line) => line.trim() !== "")
      .slice(-LIVE_LINES)
      .map((line) => style.dim(`  ${line}`))

  const lines = () => {
    const shown = outputLines(tail)
    const seconds = Math.floor((now() - since) / 1000)
    return [
      ...planLines,
      ...shown,
      style.dim(`${FRAMES[frame % FRAMES.length]} ${label} · ${seconds} s${jobsPart(jobs())} · Esc to cancel`)
    ]
  }

  const draw = () => {
    if (label === undefined) return
    frame++
    print.live(lines())
  }

  const stop = () => {
    if (timer !== undefined) clearInterval(timer)
    timer = undefined
    if (label !== undefined) {
      print.live(undefined)
      erased = tail
    }
    label = undefined
    tail = ""
  }

  const start = (text: string) => {
    stop()
    erased = ""
    label = text
    since = now()
    draw()
    timer = setInterval(draw, TICK_MS)
    timer.unref()
  }

  return {
    start,
    relabel: (text) => {
      if (label === undefined) return start(text)
      label = text
      draw()
    },
    output: (text) => {
      if (label === undefined) return
      // only the end matters: what is shown is the last few lines
      tail = (tail + text).slice(-4096)
      draw()
    },
    plan: (given) => {
      planLines = given ?? []
      if (label !== undefined) print.live(lines())
    },
    stop,
    erased: () => {
      const shown = outputLines(erased)
      erased = ""
      return shown
    }
  }
}
