/**
 * The line editor's state and what each key does to it, with no terminal: a key and the state
 * give the next state and the effects the driver (LineEditor.ts) performs — drawing, handing a
 * line over, cancelling a turn, asking for completions. Keys are listed in docs/reference/keys.md.
 */

import { nextBoundary, previousBoundary } from "../text/Graphemes"

/** A keypress as node's readline reports it. */
export interface Key {
  readonly name?: string
  readonly ctrl?: boolean
  readonly meta?: boolean
  readonly shift?: boolean
  readonly sequence?: string
}

/** One key, what it typed, and when (ms): two Ctrl-C close together leave. */
interface Press {
  readonly key: Key
  readonly typed: string | undefined
  readonly now: number
}

/** Ctrl-R: the text searched for in history, the entry found (an index), the line typed before. */
export interface Search {
  readonly query: string
  readonly at: number
  readonly before: string
}

export interface LineState {
  /** The line being typed, shown or not; `cursor` is an index into it. */
  readonly text: string
  readonly cursor: number
  /** Inside a bracketed paste: Enter and Tab are typed, not obeyed. */
  readonly pasting: boolean
  /** The prompt shown while mm waits for a line; undefined while a turn runs (typing then is type-ahead). */
  readonly prompt: string | undefined
  /** The history entry shown by Up/Down, undefined on the line being typed. */
  readonly historyAt: number | undefined
  /** The line typed before Up went into history, given back by Down past the newest entry. */
  readonly draftBeforeHistory: string
  readonly search: Search | undefined
  /** When Ctrl-C was pressed at an empty prompt (ms). */
  readonly firstCtrlC: number
  /** Tab's round through several completions; any other key ends it. */
  readonly cycle: Cycle | undefined
}

/** Several completions of the text from `start` on, listed once; Tab puts in the next one. */
export interface Cycle {
  readonly start: number
  readonly items: ReadonlyArray<string>
  /** The one put in, ending at the cursor. */
  readonly index: number
}

/** What the driver does after a key, in order, against the new state. */
export type LineEffect =
  /** Draw the prompt and what the state shows again. */
  | { readonly _tag: "Draw" }
  /** Draw `line` once more after `prompt`, in the style of a question sent, and go below it. */
  | { readonly _tag: "Sent"; readonly prompt: string; readonly line: string }
  /** Go below the drawing of `prompt` and `text`, to a fresh line. */
  | { readonly _tag: "LeaveDrawing"; readonly prompt: string; readonly text: string }
  /** Hand a line to who waits for one (or keep it as type-ahead); undefined is leaving (Ctrl-D). */
  | { readonly _tag: "Deliver"; readonly line: string | undefined }
  /** Keep the line in history. */
  | { readonly _tag: "Remember"; readonly line: string }
  /** A line of output above the prompt. */
  | { readonly _tag: "Say"; readonly line: string }
  /** Write text where the cursor is. */
  | { readonly _tag: "Echo"; readonly text: string }
  /** Ctrl-C or Esc while a turn runs: the turn is cancelled. */
  | { readonly _tag: "Cancel" }
  /** Tab: ask for what completes `before` (the text before the cursor). */
  | { readonly _tag: "Complete"; readonly before: string }
  /** Ctrl-L: the screen is cleared (a Draw follows). */
  | { readonly _tag: "ClearScreen" }
  /** Shift-Tab: the next permission mode (the driver asks who configured it). */
  | { readonly _tag: "NextMode" }
  /** `/` typed on an empty line: the slash commands are shown under the prompt, each with what it does, until the next key. */
  | { readonly _tag: "CommandMenu" }

export interface Step {
  readonly state: LineState
  readonly effects: ReadonlyArray<LineEffect>
}

/** What Tab is offered: replacements of the text from `start` on. */
interface Offered {
  readonly start: number
  readonly items: ReadonlyArray<string>
}

/** Two Ctrl-C at an empty prompt closer than this leave mm. */
export const LEAVE_WINDOW_MS = 2000

export const LEAVE_HINT = "press Ctrl-C again or Ctrl-D to leave"

export const initialLineState: LineState = {
  text: "",
  cursor: 0,
  pasting: false,
  prompt: undefined,
  historyAt: undefined,
  draftBeforeHistory: "",
  search: undefined,
  firstCtrlC: 0,
  cycle: undefined
}

const DRAW: LineEffect = { _tag: "Draw" }

/** A step with nothing to do but change the state. */
const silent = (state: LineState): Step => ({ state, effects: [] })
/** A step that draws the new state. */
const drawn = (state: LineState): Step => ({ state, effects: [DRAW] })

/** mm waits for a line after `prompt`. */
export const ask = (state: LineState, prompt: string): LineState => ({ ...state, prompt })

// what is shown -----------------------------------------------------------------

/** The newest history entry at or before `from` holding `query`, or -1. */
const indexOfMatch = (history: ReadonlyArray<string>, query: string, from: number): number => {
  for (let i = Math.min(from, history.length - 1); i >= 0; i--) if (history[i].includes(query)) return i
  return -1
}

const matchOf = (history: ReadonlyArray<string>, query: string, from: number): string | undefined => {
  const at = indexOfMatch(history, query, from)
  return at === -1 ? undefined : history[at]
}

/** The prompt drawn: mm's, or the search's while Ctrl-R searches. */
export const promptOf = (state: LineState, history: ReadonlyArray<string>): string => {
  const search = state.search
  if (search === undefined) return state.prompt ?? ""
  const found = matchOf(history, search.query, search.at)
  return `(search${found === undefined && search.query !== "" ? ", nothing found" : ""}) ${
    JSON.stringify(search.query)
  }: `
}

/** What is drawn after the prompt, and where the cursor is in it: the line, or the entry a search found. */
export const shownOf = (
  state: LineState,
  history: ReadonlyArray<string>
): { readonly prompt: string; readonly text: string; readonly at: number } => {
  const search = state.search
  if (search === undefined) return { prompt: promptOf(state, history), text: state.text, at: state.cursor }
  const text = matchOf(history, search.query, search.at) ?? ""
  return { prompt: promptOf(state, history), text, at: text.length }
}

// editing -----------------------------------------------------------------------

const insert = (state: LineState, typed: string): LineState => ({
  ...state,
  text: state.text.slice(0, state.cursor) + typed + state.text.slice(state.cursor),
  cursor: state.cursor + typed.length,
  historyAt: undefined
})

const withText = (state: LineState, text: string): LineState => ({ ...state, text, cursor: text.length })

const lineStart = ({ cursor, text }: LineState) => text.lastIndexOf("\n", cursor - 1) + 1
const lineEnd = ({ cursor, text }: LineState) => {
  const end = text.indexOf("\n", cursor)
  return end === -1 ? text.length : end
}

/** Up/Down move between the lines of a question of several lines; undefined on its first/last line. */
const verticalMove = (state: LineState, direction: -1 | 1): LineState | undefined => {
  const { text } = state
  const start = lineStart(state)
  const column = state.cursor - start
  if (direction === -1) {
    if (start === 0) return undefined
    const prevStart = text.lastIndexOf("\n", start - 2) + 1
    return { ...state, cursor: Math.min(prevStart + column, start - 1) }
  }
  const end = lineEnd(state)
  if (end === text.length) return undefined
  const nextEnd = text.indexOf("\n", end + 1)
  return { ...state, cursor: Math.min(end + 1 + column, nextEnd === -1 ? text.length : nextEnd) }
}

/** Up/Down past the first/last line: the previous/next history entry, then back to the line typed. */
const historyMove = (state: LineState, direction: -1 | 1, history: ReadonlyArray<string>): LineState => {
  if (history.length === 0) return state
  let at = state.historyAt
  let draft = state.draftBeforeHistory
  if (at === undefined) {
    if (direction === 1) return state
    draft = state.text
    at = history.length
  }
  const next = at + direction
  if (next < 0) return state
  if (next >= history.length) return withText({ ...state, historyAt: undefined, draftBeforeHistory: draft }, draft)
  return withText({ ...state, historyAt: next, draftBeforeHistory: draft }, history[next])
}

const deleteAt = (state: LineState): LineState => ({
  ...state,
  text: state.text.slice(0, state.cursor) + state.text.slice(nextBoundary(state.text, state.cursor))
})

/** The start of the word before the cursor (with the blanks after it), or -1. */
const wordBefore = (state: LineState) => state.text.slice(0, state.cursor).search(/\S+\s*$/)

/** Editing keys by name (`C-` Ctrl, `M-` Alt): the new state, or undefined when nothing is done and nothing drawn. */
const EDITS: Record<string, (state: LineState, history: ReadonlyArray<string>) => LineState | undefined> = {
  "backspace": (s) => {
    const start = previousBoundary(s.text, s.cursor)
    return { ...s, text: s.text.slice(0, start) + s.text.slice(s.cursor), cursor: start }
  },
  "delete": deleteAt,
  "left": (s) => ({ ...s, cursor: previousBoundary(s.text, s.cursor) }),
  "right": (s) => ({ ...s, cursor: nextBoundary(s.text, s.cursor) }),
  "home": (s) => ({ ...s, cursor: lineStart(s) }),
  "end": (s) => ({ ...s, cursor: lineEnd(s) }),
  "C-u": (s) => ({ ...s, text: s.text.slice(0, lineStart(s)) + s.text.slice(s.cursor), cursor: lineStart(s) }),
  "C-k": (s) => ({ ...s, text: s.text.slice(0, s.cursor) + s.text.slice(lineEnd(s)) }),
  "C-w": (s) => {
    const start = wordBefore(s)
    return start === -1 ? undefined : { ...s, text: s.text.slice(0, start) + s.text.slice(s.cursor), cursor: start }
  },
  "C-left": (s) => {
    const before = wordBefore(s)
    return { ...s, cursor: before === -1 ? 0 : before }
  },
  "C-right": (s) => {
    const after = s.text.slice(s.cursor).search(/\s\S|$/)
    return { ...s, cursor: Math.min(s.text.length, s.cursor + after + 1) }
  },
  "up": (s, history) => verticalMove(s, -1) ?? historyMove(s, -1, history),
  "down": (s, history) => verticalMove(s, 1) ?? historyMove(s, 1, history)
}

/** Other names of the same keys, Emacs's among them. */
const SYNONYMS: Record<string, string> = {
  "C-h": "backspace",
  "C-b": "left",
  "C-f": "right",
  "C-a": "home",
  "C-e": "end",
  "M-backspace": "C-w",
  "M-b": "C-left",
  "M-f": "C-right",
  "C-p": "up",
  "C-n": "down"
}

const editingKey = (state: LineState, key: Key, history: ReadonlyArray<string>): Step | undefined => {
  const name = key.ctrl === true ? `C-${key.name}` : key.meta === true ? `M-${key.name}` : key.name
  if (name === undefined) return undefined
  if (name === "C-l") return { state, effects: [{ _tag: "ClearScreen" }, DRAW] }
  const edit = Object.hasOwn(EDITS, name)
    ? EDITS[name]
    : Object.hasOwn(SYNONYMS, name)
    ? EDITS[SYNONYMS[name]]
    : undefined
  if (edit === undefined) return undefined
  const next = edit(state, history)
  return next === undefined ? silent(state) : drawn(next)
}

// lines handed over ---------------------------------------------------------------

/** Enter: the line is sent — drawn once more as sent, kept in history, handed over. */
const submit = (state: LineState): Step => {
  const line = state.text
  const effects: Array<LineEffect> = []
  if (state.prompt !== undefined) effects.push({ _tag: "Sent", prompt: state.prompt, line })
  if (line.trim() !== "") effects.push({ _tag: "Remember", line })
  effects.push({ _tag: "Deliver", line })
  return { state: { ...state, text: "", cursor: 0, historyAt: undefined, prompt: undefined }, effects }
}

/** Ctrl-D on an empty line, a second Ctrl-C, or the end of input: mm is left. */
export const leave = (state: LineState, history: ReadonlyArray<string>): Step => {
  const effects: Array<LineEffect> = []
  if (state.prompt !== undefined) {
    effects.push({ _tag: "LeaveDrawing", prompt: promptOf(state, history), text: state.text })
  }
  effects.push({ _tag: "Deliver", line: undefined })
  return { state: { ...state, text: "", cursor: 0, prompt: undefined }, effects }
}

/** Ctrl-C: cancels a running turn; at a prompt, drops the line; on an empty prompt, twice, leaves. */
const interrupt = (state: LineState, now: number, history: ReadonlyArray<string>): Step => {
  if (state.prompt === undefined) return { state, effects: [{ _tag: "Cancel" }] }
  if (state.text !== "") {
    const next = { ...state, text: "", cursor: 0 }
    return {
      state: next,
      effects: [{ _tag: "Echo", text: "^C" }, { _tag: "LeaveDrawing", prompt: promptOf(next, history), text: "" }, DRAW]
    }
  }
  if (now - state.firstCtrlC < LEAVE_WINDOW_MS) return leave(state, history)
  return { state: { ...state, firstCtrlC: now }, effects: [{ _tag: "Say", line: LEAVE_HINT }] }
}

// keys ----------------------------------------------------------------------------

const isEnter = (key: Key) => key.name === "return" || key.name === "enter"
const isControl = (typed: string) => /[\u0000-\u001f]/.test(typed)

/** Inside a bracketed paste everything is text: Enter is a new line, Tab a tab. */
const pastedKey = (state: LineState, { key, typed }: Press): Step => {
  if (isEnter(key)) return silent(insert(state, "\n"))
  if (key.name === "tab") return silent(insert(state, "\t"))
  if (typed !== undefined && !isControl(typed)) return silent(insert(state, typed))
  return silent(state)
}

/** Ctrl-R's keys: Ctrl-R an older match, typing narrows, Enter sends the match, Ctrl-G/Esc gives the line back. */
const searchKey = (state: LineState, search: Search, { key, typed }: Press, history: ReadonlyArray<string>): Step => {
  if (key.ctrl === true && key.name === "r") {
    const at = indexOfMatch(history, search.query, search.at - 1)
    return drawn(at === -1 ? state : { ...state, search: { ...search, at } })
  }
  const ended = { ...state, search: undefined }
  if ((key.ctrl === true && (key.name === "c" || key.name === "g")) || key.name === "escape") {
    return drawn(withText(ended, search.before))
  }
  if (key.name === "backspace") {
    return drawn({ ...state, search: { ...search, query: search.query.slice(0, -1), at: history.length - 1 } })
  }
  const found = matchOf(history, search.query, search.at)
  if (isEnter(key)) return submit(withText(ended, found ?? search.before))
  if (typed !== undefined && key.ctrl !== true && key.meta !== true && typed.length >= 1 && !isControl(typed)) {
    const query = search.query + typed
    const at = indexOfMatch(history, query, search.at)
    return drawn({ ...state, search: { ...search, query, at: at === -1 ? search.at : at } })
  }
  // any other key takes the match into the line for editing
  return drawn(withText(ended, found ?? search.before))
}

/** The keys that are not editing: Ctrl-C, Esc, Ctrl-D, Enter and its kin, Ctrl-R, Tab. */
const commandKey = (state: LineState, { key, now }: Press, history: ReadonlyArray<string>): Step | undefined => {
  if (key.ctrl === true && key.name === "c") return interrupt(state, now, history)
  if (key.name === "escape") return { state, effects: state.prompt === undefined ? [{ _tag: "Cancel" }] : [] }
  if (key.ctrl === true && key.name === "d") return state.text === "" ? leave(state, history) : drawn(deleteAt(state))
  if (key.name === "return" && key.meta !== true) {
    // a line ending in `\` asks for another line
    if (state.cursor === state.text.length && state.text.endsWith("\\")) {
      return drawn(withText(state, `${state.text.slice(0, -1)}\n`))
    }
    return submit(state)
  }
  if ((key.name === "return" && key.meta === true) || key.name === "enter" || (key.ctrl === true && key.name === "j")) {
    return drawn(insert(state, "\n"))
  }
  if (key.ctrl === true && key.name === "r") {
    return drawn({ ...state, search: { query: "", at: history.length - 1, before: state.text } })
  }
  if (key.name === "tab" && key.shift === true) return { state, effects: [{ _tag: "NextMode" }] }
  if (key.name === "tab") return { state, effects: [{ _tag: "Complete", before: state.text.slice(0, state.cursor) }] }
  return undefined
}

/** What a key does to the line, and what the driver must do then. `history` is oldest first. */
export const step = (before: LineState, press: Press, history: ReadonlyArray<string>): Step => {
  const { key, typed } = press
  // a Tab round lasts while Tab is pressed
  const state = before.cycle !== undefined && key.name !== "tab" ? { ...before, cycle: undefined } : before
  if (key.name === "paste-start") return silent({ ...state, pasting: true })
  if (key.name === "paste-end") return drawn({ ...state, pasting: false })
  if (state.pasting) return pastedKey(state, press)
  if (state.search !== undefined) return searchKey(state, state.search, press, history)
  if (key.name === "tab" && state.cycle !== undefined) return nextInCycle(state, state.cycle)
  const done = commandKey(state, press, history) ?? editingKey(state, key, history)
  if (done !== undefined) return done
  if (typed === undefined || key.ctrl === true || key.meta === true) return silent(state)
  if (/[\u0000-\u001f\u007f]/.test(typed)) return silent(state)
  if (typed === "/" && state.text === "" && state.prompt !== undefined) {
    return { state: insert(state, typed), effects: [{ _tag: "CommandMenu" }] }
  }
  return drawn(insert(state, typed))
}

/** Tab again in a round: the next completion replaces the one put in (after the last, the first). */
const nextInCycle = (state: LineState, cycle: Cycle): Step => {
  const end = cycle.start + cycle.items[cycle.index].length
  const index = (cycle.index + 1) % cycle.items.length
  const item = cycle.items[index]
  const text = state.text.slice(0, cycle.start) + item + state.text.slice(end)
  return drawn({ ...state, text, cursor: cycle.start + item.length, cycle: { ...cycle, index } })
}

// completion ----------------------------------------------------------------------

const commonPrefix = (items: ReadonlyArray<string>): string => {
  if (items.length === 0) return ""
  let prefix = items[0]
  for (const item of items) while (!item.startsWith(prefix)) prefix = prefix.slice(0, -1)
  return prefix
}

/** How many completions are listed at most. */
const LISTED = 40

/**
 * What Tab was offered for `before`, once it came: one item is put in (with a space after it,
 * unless it is a folder), several are completed to their common prefix, or, when there is none
 * longer than what is typed, listed once and the first put in: each Tab after it puts in the
 * next. The list is not shown for a lone `/`, whose menu is on screen already. Nothing is done
 * when the line changed meanwhile.
 */
export const completed = (state: LineState, before: string, offered: Offered | undefined): Step => {
  if (offered === undefined || offered.items.length === 0) return silent(state)
  const { cursor, text } = state
  if (text.slice(0, cursor) !== before) return silent(state)
  const typed = before.slice(offered.start)
  const prefix = commonPrefix(offered.items)
  if (offered.items.length === 1) {
    const [item] = offered.items
    const ending = item.endsWith("/") ? "" : " "
    const next = before.slice(0, offered.start) + item + ending + text.slice(cursor)
    return drawn({ ...state, text: next, cursor: offered.start + item.length + ending.length })
  }
  if (prefix.length > typed.length) {
    const next = before.slice(0, offered.start) + prefix + text.slice(cursor)
    return drawn({ ...state, text: next, cursor: offered.start + prefix.length })
  }
  const shown = offered.items.slice(0, LISTED).join("  ")
  const line = offered.items.length > LISTED ? `${shown}  … ${offered.items.length - LISTED} more` : shown
  const [first] = offered.items
  const next = {
    ...state,
    text: before.slice(0, offered.start) + first + text.slice(cursor),
    cursor: offered.start + first.length,
    cycle: { start: offered.start, items: offered.items, index: 0 }
  }
  return { state: next, effects: before === "/" ? [DRAW] : [{ _tag: "Say", line }, DRAW] }
}
