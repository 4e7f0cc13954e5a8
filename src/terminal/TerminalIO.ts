import * as tty from "node:tty"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { Approval, type ApprovalRequest, Approver } from "../approvals/Approver"
import { AppConfig } from "../config/Config"
import { Secrets } from "../lib/Secrets"
import { escapesFor, rewrapsOnResize, type Style, styleFor, themeOf } from "../text/Style"
import { displayWidth } from "../text/Width"
import { clipToWidth, wrapText } from "../text/Wrap"
import { choiceKey, choicesOf, previewBlock, subAgentCallLine } from "./ApprovalPrompt"
import { CANCELLED, makePipedInput, type TerminalInput } from "./Input"
import { ERASE_DOWN } from "./LineDrawing"
import { makeLineEditor } from "./LineEditor"
import { viewInPager, viewTextInPager } from "./Pager"

/**
 * Where the terminal façade writes; it remembers whether the cursor sits at a line start.
 * Known secrets never reach the screen; text from outside is `sanitize`d by the caller
 * (mm's own colours pass through here).
 */
export interface Printer {
  readonly write: (text: string) => void
  /** Writes a whole line, first ending any line left open by streamed text; on a terminal, wrapped at word boundaries. */
  readonly line: (text: string) => void
  /** Ends a line left open by streamed text. */
  readonly endLine: () => void
  /**
   * A block of lines under everything printed (a status line, live tool output), redrawn in
   * place; `undefined` erases it. Any other output erases it first. Drawn only on a terminal,
   * and only while nobody holds the screen. Given as a function, the lines are asked for again
   * when the terminal is resized (they depend on its width).
   */
  readonly live: (lines: LiveLines | undefined) => void
  /** The terminal was resized: the live block is erased as the terminal now holds it, and drawn again at the new width. */
  readonly resized: () => void
  /** Keeps the live block away while a prompt waits on the screen; the returned function gives it back. */
  readonly hold: () => () => void
  /**
   * Lines drawn under the live block, kept there until replaced (`[]` removes them): what the
   * user types while a turn runs. Drawn again after each line printed.
   */
  readonly queued: (lines: ReadonlyArray<string>) => void
}

/** The live block's lines, or what gives them at the terminal's width of the moment. */
export type LiveLines = ReadonlyArray<string> | (() => ReadonlyArray<string>)

/**
 * Screen rows that lines of these widths take on a terminal `columns` wide. The live block is
 * drawn one row a line, but most terminals (tmux, VTE, kitty, iTerm2…) re-wrap their rows when
 * resized: made narrower, a line wider than the new width takes several rows, and erasing
 * only as many rows as were drawn would leave the top of the block behind.
 */
export const rowsAt = (widths: ReadonlyArray<number>, columns: number): number =>
  widths.reduce((rows, w) => rows + Math.max(1, Math.ceil(w / Math.max(1, columns))), 0)

export const makePrinter = (
  out: NodeJS.WritableStream,
  options: {
    readonly live?: boolean
    readonly columns?: () => number
    /** Takes the known secrets out of what is printed (the terminal's printers use the program's). */
    readonly redact?: (text: string) => string
    /** Whether the terminal re-wraps its rows on a resize (`rewrapsOnResize`; yes unless told). */
    readonly rewraps?: boolean
  } = {}
): Printer => {
  const redact = options.redact ?? ((text: string) => text)
  const columns = () => (options.columns?.() ?? 80) || 80
  let atLineStart = true
  let holds = 0
  let liveLines: LiveLines = []
  let queuedLines: ReadonlyArray<string> = []
  /** The live block on the screen: each row's width, and the terminal's width then. */
  let drawn: { readonly widths: ReadonlyArray<number>; readonly columns: number } | undefined
  const erase = () => {
    if (drawn === undefined) return
    // a terminal that cuts its rows (xterm) holds them as they were drawn
    const rows = rowsAt(drawn.widths, options.rewraps === false ? drawn.columns : columns())
    out.write(`\r${rows > 1 ? `\u001b[${rows - 1}A` : ""}${ERASE_DOWN}`)
    drawn = undefined
  }
  const drawLive = () => {
    erase()
    const live = typeof liveLines === "function" ? liveLines() : liveLines
    const lines = queuedLines.length === 0 ? live : [...live, ...queuedLines]
    if (lines.length === 0 || holds > 0 || !atLineStart) return
    // one screen row each: a wrapped line would leave rows behind when erased
    const width = Math.max(columns(), 20) - 1
    const clipped = lines.map((line) => clipToWidth(line, width))
    out.write(redact(clipped.join("\n")))
    drawn = { widths: clipped.map(displayWidth), columns: columns() }
  }
  const write = (text: string) => {
    if (text === "") return
    erase()
    liveLines = []
    out.write(redact(text))
    atLineStart = text.endsWith("\n")
    if (queuedLines.length > 0) drawLive()
  }
  const endLine = () => {
    erase()
    if (!atLineStart) write("\n")
  }
  const live = (lines: LiveLines | undefined) => {
    if (options.live !== true) return
    liveLines = lines ?? []
    drawLive()
  }
  const queued = (lines: ReadonlyArray<string>) => {
    if (options.live !== true || (lines.length === 0 && queuedLines.length === 0)) return
    queuedLines = lines
    drawLive()
  }
  const hold = () => {
    erase()
    holds++
    let released = false
    return () => {
      if (!released) holds--
      released = true
    }
  }
  // on a terminal a line is wrapped at word boundaries, not cut by the terminal mid-word
  const fitted = (text: string) => {
    const columns = options.columns?.() ?? 0
    return options.live === true && columns > 0 ? wrapText(text, Math.max(columns, 20) - 1) : text
  }
  const resized = () => {
    if (options.live === true) drawLive()
  }
  return { write, endLine, line: (text) => (endLine(), write(`${fitted(text)}\n`)), live, hold, queued, resized }
}

export class TerminalIO extends Context.Tag("mm/TerminalIO")<
  TerminalIO,
  {
    readonly input: TerminalInput
    /** Answers and what commands print: stdout. */
    readonly print: Printer
    /** The banner, tool lines, notices and red lines: the same printer on a terminal, stderr when stdin is piped. */
    readonly info: Printer
    readonly style: Style
    /**
     * One permit: held by an approval question for as long as it waits on the screen (its pager
     * and its follow-up line too), and taken by the turn's view for each event it draws — what
     * the turn does meanwhile (a sub-agent ending) is drawn once the question is answered.
     */
    readonly questions: Effect.Semaphore
  }
>() {}

/** The keyboard and the screen, released (the input closed) with the scope. */
export const makeTerminalIO = Effect.acquireRelease(
  Effect.map(Effect.all([Secrets, AppConfig]), ([{ redact }, { config }]) => {
    // stdin's own stream is made at first use (`process.stdin` makes it): a file descriptor is asked instead
    const onTty = tty.isatty(0)
    // TERM=dumb: not one escape sequence — no line editor, no live status line, no colour
    const escapes = escapesFor(process.stdout, process.env)
    const rewraps = rewrapsOnResize(process.env)
    const print = makePrinter(process.stdout, {
      live: escapes,
      columns: () => process.stdout.columns,
      redact,
      rewraps
    })
    const style = styleFor(process.stdout, process.env, themeOf(config.theme, process.env))
    // the live block (status line, an answer's rows not complete yet) is drawn again at the new width
    process.stdout.on("resize", print.resized)
    return {
      // made before the banner: keys typed from here on reach the line editor in raw mode
      input: onTty && !escapes
        ? makePipedInput(process.stdin, process.stdout, { interactive: true })
        : onTty
        ? makeLineEditor(process.stdin, process.stdout, {
          sentStyle: style.bold,
          rewraps,
          typeAhead: (lines) => print.queued(lines.map((line) => style.dim(`queued › ${line}`)))
        })
        : makePipedInput(process.stdin, process.stderr),
      print,
      // piped, stdout holds only the answers (`echo q | mm > answer.txt`)
      info: onTty ? print : makePrinter(process.stderr, { live: false, columns: () => process.stderr.columns, redact }),
      style,
      questions: Effect.unsafeMakeSemaphore(1)
    }
  }),
  (io) =>
    Effect.sync(() => {
      process.stdout.off("resize", io.print.resized)
      io.input.close()
    })
)

/** `v`: the change too large to diff, or the command too long for the screen, whole in the pager; then the question again. */
const viewThenAsk = (request: ApprovalRequest, ask: (request: ApprovalRequest) => Effect.Effect<Approval>) =>
  Effect.suspend(() => {
    if (request.preview._tag === "FileChange") {
      viewInPager(request.preview.path, request.preview.before ?? "", request.preview.after ?? "")
    } else if (request.preview._tag === "Command") {
      viewTextInPager(request.preview.command)
    }
    return ask(request)
  })

/**
 * The terminal's approval: the core's preview, then one key — y (yes), n (no), a (always,
 * in the scope the line names), s (the exact command, for this conversation only), p (every
 * edit in the project), t (no, and a line of what to do instead), v (a change too large to
 * diff, or a command too long for the screen, in the pager). With no terminal to ask (stdin
 * piped) nothing is read: the call is refused.
 */
export const TerminalApprover = Layer.effect(
  Approver,
  Effect.map(Effect.all([TerminalIO, Secrets]), ([{ info, input, print, questions, style }, { redact }]) => {
    const ask = (request: ApprovalRequest): Effect.Effect<Approval> => {
      if (!input.interactive) return Effect.succeed(Approval.noOneToAsk)
      // one size for the block and the keys: whether a long command is cut depends on it
      const columns = (process.stdout.columns ?? 0) > 0 ? process.stdout.columns : 80
      const rows = process.stdout.rows ?? 0
      const choices = choicesOf(request, columns, rows)
      return Effect.flatMap(
        Effect.promise(() => {
          print.endLine()
          info.endLine()
          // no status line over the preview and the question while it waits
          const release = print.hold()
          // a sub-agent's call: its own lines are the task's output, so the question says what it is
          if (request.agent !== undefined) print.write(`${subAgentCallLine(request, style)}\n`)
          print.write(previewBlock(request, style, columns, rows))
          // the follow-up line of "t" is part of the question: the status line stays away until it is sent
          const answered = async (): Promise<{ readonly key: string | undefined; readonly text?: string }> => {
            const key = await input.key(style.yellow(redact(choices.line)), choices.keys, { thenLine: ["t"] })
            if (key !== "t") return { key }
            return { key, text: await input.question(style.yellow("tell mm what to do instead: ")) }
          }
          return answered().finally(release)
        }),
        ({ key: answer, text }): Effect.Effect<Approval> => {
          switch (answer) {
            // on Ctrl-C the turn is being cancelled: its call is closed as cancelled, not refused
            case CANCELLED:
              return Effect.never
            case "y":
              return Effect.succeed(Approval.once)
            case "v":
              return viewThenAsk(request, ask)
            case "a":
            case "s":
            case "p": {
              const chosen = request.always.find((choice) => choiceKey(choice) === answer)
              return Effect.succeed(chosen === undefined ? Approval.deny : Approval.chose(chosen))
            }
            case "t":
              return Effect.succeed(
                text === undefined || text.trim() === "" ? Approval.deny : Approval.denyWith(text)
              )
            default:
              return Effect.succeed(Approval.deny)
          }
        }
      )
    }
    // the turn's events wait while the question is on the screen: it does not scroll away (a Ctrl-C interrupts it, and frees them)
    return { ask: (request) => questions.withPermits(1)(ask(request)) }
  })
)
