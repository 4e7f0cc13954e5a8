import { nodeReadline } from "../lib/NodeModules"
import { clipToWidth, wrapText } from "../text/Wrap"
import { choiceKey, choiceLines } from "./ChoiceList"
import { type History, makeHistory } from "./History"
import { CANCELLED, type Completer, ESC_ESC, type TerminalInput } from "./Input"
import { ERASE_DOWN, layout, leaving, redrawing } from "./LineDrawing"
import {
  ask,
  completed,
  initialLineState,
  type Key,
  leave,
  type LineEffect,
  type LineState,
  promptOf,
  shownOf,
  type Step,
  step
} from "./LineState"

/** After a one-key answer, keys closer together than this still belong to the burst that answered. */
const BURST_GAP_MS = 300

const BRACKETED_PASTE_ON = "\u001b[?2004h"
const BRACKETED_PASTE_OFF = "\u001b[?2004l"

/** Takes a key before the line does (a one-key question); true when it took it. */
type KeyWaiter = (key: Key, typed: string | undefined) => boolean

/** The raw-mode terminal under the line editor, and what the driver keeps besides the line's state. */
interface Driver {
  readonly stdin: NodeJS.ReadStream
  readonly stdout: NodeJS.WriteStream
  /** How a question is drawn once sent. */
  readonly sentStyle: ((line: string) => string) | undefined
  /** Shows what is typed ahead while no prompt is shown: the lines sent, then the line being typed. */
  readonly typeAhead: ((lines: ReadonlyArray<string>) => void) | undefined
  /** The type-ahead last shown, to draw it only when it changes. */
  typedAheadShown: string
  state: LineState
  history: History
  complete: Completer | undefined
  /** What `/` on an empty line shows: each slash command and what it does. */
  commandMenu: string | undefined
  /** Lines sent while no prompt was shown (type-ahead), oldest first; `undefined` is Ctrl-D. */
  readonly sent: Array<string | undefined>
  /** Who waits for the line, while the state's prompt is shown. */
  resolve: ((line: string | undefined) => void) | undefined
  /** Rows of the last drawing above the cursor, to go back to its first row. */
  rowsAbove: number
  /** Whether the terminal re-wraps its rows on a resize (most do). */
  readonly rewraps: boolean
  /** What the last drawing laid out, and at which width: after a resize, its rows are counted again. */
  drawn: { readonly prompt: string; readonly text: string; readonly at: number; readonly columns: number } | undefined
  closed: boolean
  readonly cancelHandlers: Set<() => void>
  keyWaiter: KeyWaiter | undefined
  /** Text the next prompt starts with (TerminalInput.offer). */
  offered: string | undefined
  /** Shift-Tab: moves to the next permission mode and gives the line that names it. */
  nextMode: (() => string) | undefined
  /** The last key was a lone Esc at an empty prompt: another one asks for the list of questions. */
  escaped: boolean
  /** Whether `keyWaiter` drops the rest of a one-key answer's burst (it ends when a prompt is drawn). */
  dropping: boolean
}

// drawing ------------------------------------------------------------------

const width = (d: Driver) => (d.stdout.columns > 0 ? d.stdout.columns : 80)

/**
 * Rows above the cursor in the last drawing, as the terminal holds them now. Resized, most
 * terminals re-wrap their rows: the line now takes the rows it would take drawn at the new width.
 */
const rowsAboveNow = (d: Driver): number => {
  const last = d.drawn
  if (last === undefined || last.columns === width(d) || !d.rewraps) return d.rowsAbove
  return layout(last.prompt, last.text, last.at, width(d)).cursorRow
}

/** Nothing drawn to go back to: the cursor is on a fresh line. */
const forgetDrawing = (d: Driver) => {
  d.rowsAbove = 0
  d.drawn = undefined
}

/** Draws `prompt` and `text` over the last drawing, the cursor at `at`. */
const paint = (d: Driver, prompt: string, text: string, at: number, style?: (line: string) => string) => {
  const laidOut = layout(prompt, text, at, width(d), style)
  d.stdout.write(redrawing(rowsAboveNow(d), laidOut))
  d.rowsAbove = laidOut.cursorRow
  d.drawn = { prompt, text, at, columns: width(d) }
}

const draw = (d: Driver) => {
  if (d.state.prompt === undefined || d.closed) return
  const shown = shownOf(d.state, d.history.entries())
  paint(d, shown.prompt, shown.text, shown.at)
}

/** Below what is drawn, the cursor on a fresh line: the prompt is left as the transcript shows it. */
const leaveDrawing = (d: Driver, prompt: string, text: string) => {
  d.stdout.write(leaving(rowsAboveNow(d), layout(prompt, text, text.length, width(d))))
  forgetDrawing(d)
}

const say = (d: Driver, said: string) => {
  const line = d.stdout.columns > 0 ? wrapText(said, width(d) - 1) : said
  if (d.state.prompt === undefined) return void d.stdout.write(`${line}\n`)
  leaveDrawing(d, promptOf(d.state, d.history.entries()), d.state.text)
  // cleared below: the command menu may be there
  d.stdout.write(`${ERASE_DOWN}${line}\n`)
  draw(d)
}

/**
 * The slash commands under the prompt, one screen row each, the cursor put back on the
 * prompt: the next drawing (any key) erases them, so they never stay in the scrollback.
 */
const showMenu = (d: Driver) => {
  draw(d)
  if (d.commandMenu === undefined || d.state.prompt === undefined) return
  const lines = d.commandMenu.split("\n").map((line) => clipToWidth(line, width(d) - 1))
  const shown = shownOf(d.state, d.history.entries())
  const { cursorCol, cursorRow, rows } = layout(shown.prompt, shown.text, shown.at, width(d))
  const down = rows - 1 - cursorRow
  d.stdout.write(
    `${down > 0 ? `\u001b[${down}B` : ""}\r\n${lines.join("\r\n")}\u001b[${lines.length + down}A\r${
      cursorCol > 0 ? `\u001b[${cursorCol}C` : ""
    }`
  )
}

// effects ------------------------------------------------------------------

const cancel = (d: Driver) => {
  for (const handler of [...d.cancelHandlers]) handler()
}

const deliver = (d: Driver, line: string | undefined) => {
  const resolve = d.resolve
  if (resolve === undefined) return void d.sent.push(line)
  d.resolve = undefined
  resolve(line)
}

const completeNow = async (d: Driver, before: string) => {
  if (d.complete === undefined) return
  const offered = await d.complete(before)
  run(d, completed(d.state, before, offered))
}

const perform = (d: Driver, effect: LineEffect) => {
  switch (effect._tag) {
    case "Draw":
      return draw(d)
    case "Sent":
      paint(d, effect.prompt, effect.line, effect.line.length, d.sentStyle)
      return leaveDrawing(d, effect.prompt, effect.line)
    case "LeaveDrawing":
      return leaveDrawing(d, effect.prompt, effect.text)
    case "Deliver":
      return deliver(d, effect.line)
    case "Remember":
      return d.history.add(effect.line)
    case "Say":
      return say(d, effect.line)
    case "Echo":
      return void d.stdout.write(effect.text)
    case "Cancel":
      return cancel(d)
    case "Complete":
      return void completeNow(d, effect.before)
    case "CommandMenu":
      return showMenu(d)
    case "ClearScreen":
      d.stdout.write("\u001b[2J\u001b[H")
      forgetDrawing(d)
      return
    case "NextMode":
      return d.nextMode === undefined ? undefined : say(d, d.nextMode())
  }
}

/** The line's next state, then what it asks for, in order. */
const run = (d: Driver, next: Step) => {
  d.state = next.state
  for (const effect of next.effects) perform(d, effect)
  if (d.state.prompt === undefined && d.resolve === undefined) showTypeAhead(d)
}

/** While a turn runs: what is typed ahead, on lines of its own under the live output. */
const showTypeAhead = (d: Driver) => {
  if (d.typeAhead === undefined || d.closed) return
  const lines = [...d.sent, d.state.text]
    .filter((line): line is string => line !== undefined && line !== "")
    .map((line) => line.replace(/\n/g, " ⏎ "))
  const key = lines.join("\n")
  if (key === d.typedAheadShown) return
  d.typedAheadShown = key
  d.typeAhead(lines)
}

// keys and questions ----------------------------------------------------------

/** Esc Esc at an empty prompt: the prompt is left as drawn, and `ESC_ESC` is the line. */
const escEsc = (d: Driver, k: Key): boolean => {
  const { prompt, search, text } = d.state
  const atEmptyPrompt = k.name === "escape" && prompt !== undefined && text === "" && search === undefined
  const second = atEmptyPrompt && (k.sequence === ESC_ESC || d.escaped)
  d.escaped = atEmptyPrompt && !second
  if (!second) return false
  d.state = { ...d.state, prompt: undefined }
  leaveDrawing(d, prompt!, "")
  deliver(d, ESC_ESC)
  return true
}

const onKey = (d: Driver, typed: string | undefined, key: Key | undefined) => {
  if (d.closed) return
  const k: Key = key ?? { sequence: typed }
  if (d.keyWaiter !== undefined && d.keyWaiter(k, typed)) return
  if (escEsc(d, k)) return
  run(d, step(d.state, { key: k, typed, now: Date.now() }, d.history.entries()))
}

/** A list drawn below, chosen from with the keys of ChoiceList.ts; the chosen line stays on screen. */
const choose = (d: Driver, title: string, items: ReadonlyArray<string>, start: number) =>
  new Promise<number | undefined>((resolve) => {
    let at = start
    let rows = 0
    const show = (lines: ReadonlyArray<string>) => {
      d.stdout.write(`${rows > 0 ? `\u001b[${rows}A` : ""}\r\u001b[J${lines.join("\r\n")}\r\n`)
      rows = lines.length
    }
    const lines = () => choiceLines(title, items, at, width(d), (line) => `\u001b[7m${line}\u001b[27m`)
    show(lines())
    d.keyWaiter = (key) => {
      const next = choiceKey(at, items.length, key)
      if (next._tag === "Move") {
        at = next.at
        show(lines())
      } else if (next._tag === "Done") {
        d.keyWaiter = undefined
        show(next.at === undefined ? [title] : [`${title} ${items[next.at]}`])
        resolve(next.at)
      }
      return true
    }
  })

const question = (d: Driver, prompt: string, draft?: string): Promise<string | undefined> => {
  // the type-ahead shown under the turn goes: it is on the prompt now
  if (d.typedAheadShown !== "") {
    d.typedAheadShown = ""
    d.typeAhead?.([])
  }
  if (d.sent.length > 0) {
    // a line sent ahead is shown after its prompt, as if typed now
    const line = d.sent.shift()
    if (line !== undefined) d.stdout.write(`${prompt}${line.replace(/\n/g, "\n  ")}\n`)
    return Promise.resolve(line)
  }
  if (d.closed) return Promise.resolve(undefined)
  // a one-key answer's burst ends once the next prompt is on screen: what is typed now is a new line
  if (d.dropping) endBurst(d)
  return new Promise((resolve) => {
    d.resolve = resolve
    d.state = ask(d.state, prompt)
    // a draft given by the caller wins; else what TerminalInput.offer left for this prompt
    const offered = draft ?? d.offered
    d.offered = undefined
    if (offered !== undefined && d.state.text === "") d.state = { ...d.state, text: offered, cursor: offered.length }
    forgetDrawing(d)
    draw(d)
  })
}

/**
 * The editor's keypress listener, listening. The first read after raw mode is set holds what
 * was typed before it, if anything was: the terminal's line discipline had turned each Enter
 * in it into a line feed (a later read holding one only waits for a key, which comes alone).
 * A line feed of that first read sends the line, as the Enter it was; after it, a line feed
 * is Ctrl-J, a new line in the question. Inside a bracketed paste both are text anyway.
 */
const listenForKeys = (d: Driver, stdin: NodeJS.ReadStream) => {
  let firstRead = true
  const keypress = (typed: string | undefined, key: Key | undefined) =>
    onKey(d, typed, firstRead && key?.name === "enter" ? { ...key, name: "return" } : key)
  stdin.on("keypress", keypress)
  // after the keypress events of the first read (their listener came with the "keypress" one)
  stdin.once("data", () => (firstRead = false))
  return keypress
}

const endBurst = (d: Driver) => {
  d.keyWaiter = undefined
  d.dropping = false
}

/** After a one-key answer: the typing of the same burst is dropped, until a pause, Enter or the next prompt. */
const burstDropper = (d: Driver): KeyWaiter => {
  let quietUntil = Date.now() + BURST_GAP_MS
  d.dropping = true
  return (key) => {
    const now = Date.now()
    // only typing is dropped: Ctrl-C, Ctrl-D and Esc always count
    if (now > quietUntil || key.ctrl === true || key.name === "escape") {
      endBurst(d)
      return false
    }
    // the `es⏎` of `yes⏎`: dropped, and Enter ends the burst
    if (key.name === "return" || key.name === "enter") endBurst(d)
    quietUntil = now + BURST_GAP_MS
    return true
  }
}

/** One key among `keys`; see TerminalInput.key. The line typed so far waits, unseen. */
const oneKey = (
  d: Driver,
  prompt: string,
  keys: ReadonlyArray<string>,
  options?: { readonly thenLine?: ReadonlyArray<string> }
) =>
  new Promise<string | undefined>((resolve) => {
    d.stdout.write(prompt)
    const finish = (answer: string | undefined, dropBurst: boolean) => {
      // the key that answered stays on the question's line
      d.stdout.write(answer !== undefined && keys.includes(answer) ? `${answer}\n` : "\n")
      d.dropping = false
      d.keyWaiter = dropBurst ? burstDropper(d) : undefined
      resolve(answer)
    }
    d.dropping = false
    d.keyWaiter = (key, typed) => {
      if ((key.ctrl === true && key.name === "c") || key.name === "escape") {
        finish(CANCELLED, false)
        cancel(d)
        return true
      }
      if (key.ctrl === true && key.name === "d") {
        finish(undefined, false)
        return true
      }
      const pressed = (typed ?? "").toLowerCase()
      if (!keys.includes(pressed)) return true
      finish(pressed, options?.thenLine?.includes(pressed) !== true)
      return true
    }
  })

/**
 * mm's own line editor over keypress events, for a terminal: questions of several lines
 * (a bracketed paste is one message; Alt-Enter, Ctrl-J or a line ending in `\` adds a line),
 * history kept across runs with Up/Down and Ctrl-R, Tab completion, and type-ahead: what is
 * typed while an answer streams is shown dim under it, marked as queued, and is on the next prompt.
 * Ctrl-C or Esc cancels a running turn; Ctrl-C twice at an empty prompt, or Ctrl-D, leaves.
 * What each key does is LineState.ts; this is the terminal under it. Keys are listed in
 * docs/reference/keys.md.
 */
export const makeLineEditor = (
  stdin: NodeJS.ReadStream,
  stdout: NodeJS.WriteStream,
  options: {
    /** How a question is drawn once sent, so that questions stand apart from answers (bold, with colours). */
    readonly sentStyle?: (line: string) => string
    /** Shows the lines typed ahead while a turn runs (`[]`: none any more). */
    readonly typeAhead?: (lines: ReadonlyArray<string>) => void
    /** Whether the terminal re-wraps its rows on a resize (`rewrapsOnResize`; yes unless told). */
    readonly rewraps?: boolean
  } = {}
): TerminalInput => {
  nodeReadline().emitKeypressEvents(stdin)
  stdin.setRawMode(true)
  stdin.resume()
  stdout.write(BRACKETED_PASTE_ON)

  const d: Driver = {
    stdin,
    stdout,
    sentStyle: options.sentStyle,
    typeAhead: options.typeAhead,
    typedAheadShown: "",
    state: initialLineState,
    history: makeHistory(undefined),
    complete: undefined,
    commandMenu: undefined,
    sent: [],
    resolve: undefined,
    rowsAbove: 0,
    rewraps: options.rewraps !== false,
    drawn: undefined,
    closed: false,
    cancelHandlers: new Set(),
    keyWaiter: undefined,
    offered: undefined,
    nextMode: undefined,
    escaped: false,
    dropping: false
  }
  const keypress = listenForKeys(d, stdin)
  const onEnd = () => {
    if (d.closed) return
    run(d, leave(d.state, d.history.entries()))
  }
  // the line being edited drawn again at the terminal's new width
  const onResize = () => draw(d)
  stdin.on("end", onEnd)
  stdout.on("resize", onResize)

  return {
    interactive: true,
    question: (prompt, draft) => question(d, prompt, draft),
    choose: (title, items, at) => choose(d, title, items, at),
    key: (prompt, keys, options) => oneKey(d, prompt, keys, options),
    watchCancel: (onCancel) => {
      d.cancelHandlers.add(onCancel)
      return () => void d.cancelHandlers.delete(onCancel)
    },
    configure: (options) => {
      if (options.historyFile !== undefined || options.history === "memory") {
        d.history = makeHistory(options.historyFile)
      }
      if (options.complete !== undefined) d.complete = options.complete
      if (options.nextMode !== undefined) d.nextMode = options.nextMode
      if (options.commandMenu !== undefined) d.commandMenu = options.commandMenu
    },
    offer: (text) => void (d.offered = text),
    close: () => {
      if (d.closed) return
      d.closed = true
      stdin.off("keypress", keypress)
      stdin.off("end", onEnd)
      stdout.off("resize", onResize)
      stdout.write(BRACKETED_PASTE_OFF)
      if (stdin.isTTY) stdin.setRawMode(false)
      stdin.pause()
    }
  }
}
