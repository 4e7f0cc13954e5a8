import * as readline from "node:readline"

import { type History, makeHistory } from "./History"
import { CANCELLED, type Completer, type TerminalInput } from "./Input"

interface Key {
  readonly name?: string
  readonly ctrl?: boolean
  readonly meta?: boolean
  readonly shift?: boolean
  readonly sequence?: string
}

/** Two Ctrl-C at an empty prompt closer than this leave mm. */
const LEAVE_WINDOW_MS = 2000
/** After a one-key answer, keys closer together than this still belong to the burst that answered. */
const BURST_GAP_MS = 300

const BRACKETED_PASTE_ON = "\u001b[?2004h"
const BRACKETED_PASTE_OFF = "\u001b[?2004l"

/** Columns a string takes: wide East Asian characters and emoji count two. */
const columns = (text: string): number => {
  let width = 0
  for (const char of text) {
    const code = char.codePointAt(0)!
    if (code < 32 || (code >= 0x300 && code <= 0x36f) || code === 0x200d || (code >= 0xfe00 && code <= 0xfe0f)) continue
    width += (code >= 0x1100 && code <= 0x115f) ||
        (code >= 0x2e80 && code <= 0xa4cf) ||
        (code >= 0xac00 && code <= 0xd7a3) ||
        (code >= 0xf900 && code <= 0xfaff) ||
        (code >= 0xfe30 && code <= 0xfe4f) ||
        (code >= 0xff00 && code <= 0xff60) ||
        (code >= 0xffe0 && code <= 0xffe6) ||
        (code >= 0x1f300 && code <= 0x1faff) ||
        (code >= 0x20000 && code <= 0x3fffd)
      ? 2
      : 1
  }
  return width
}

const visible = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "")

const commonPrefix = (items: ReadonlyArray<string>): string => {
  if (items.length === 0) return ""
  let prefix = items[0]
  for (const item of items) while (!item.startsWith(prefix)) prefix = prefix.slice(0, -1)
  return prefix
}

/**
 * mm's own line editor over keypress events, for a terminal: questions of several lines
 * (a bracketed paste is one message; Alt-Enter, Ctrl-J or a line ending in `\` adds a line),
 * history kept across runs with Up/Down and Ctrl-R, Tab completion, and type-ahead: what is
 * typed while an answer streams is kept out of sight and shows on the next prompt.
 * Ctrl-C or Esc cancels a running turn; Ctrl-C twice at an empty prompt, or Ctrl-D, leaves.
 * Keys are listed in docs/reference/keys.md.
 */
export const makeLineEditor = (
  stdin: NodeJS.ReadStream,
  stdout: NodeJS.WriteStream,
  options: {
    /** How a question is drawn once sent, so that questions stand apart from answers (bold, with colours). */
    readonly sentStyle?: (line: string) => string
  } = {}
): TerminalInput => {
  readline.emitKeypressEvents(stdin)
  stdin.setRawMode(true)
  stdin.resume()
  stdout.write(BRACKETED_PASTE_ON)

  let history: History = makeHistory(undefined)
  let complete: Completer | undefined

  /** The line being typed, shown or not; `cursor` is an index into it. */
  let text = ""
  let cursor = 0
  let pasting = false
  /** Lines sent while no prompt was shown (type-ahead), oldest first; `undefined` is Ctrl-D. */
  const sent: Array<string | undefined> = []

  /** The prompt being shown, when mm waits for a line. */
  let reading: { readonly prompt: string; readonly resolve: (line: string | undefined) => void } | undefined
  /** Rows of the last drawing above the cursor, to go back to its first row. */
  let rowsAbove = 0
  let historyAt: number | undefined
  let draftBeforeHistory = ""
  let search: { query: string; at: number; before: string } | undefined
  let firstCtrlC = 0
  let closed = false
  /** While the line just sent is drawn the last time, in `sentStyle`. */
  let sending = false

  const cancelHandlers = new Set<() => void>()
  let keyWaiter: ((key: Key, typed: string | undefined) => boolean) | undefined

  // drawing ------------------------------------------------------------------

  const promptText = (): string => {
    if (search === undefined) return reading?.prompt ?? ""
    const found = matchOf(search.query, search.at)
    return `(search${found === undefined && search.query !== "" ? ", nothing found" : ""}) ${
      JSON.stringify(search.query)
    }: `
  }

  /** Where each character of `prompt + text` falls, with continuation lines indented under the prompt. */
  const layout = (prompt: string, body: string, at: number) => {
    const width = stdout.columns > 0 ? stdout.columns : 80
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
      drawn.push(head + (sending && options.sentStyle !== undefined && line !== "" ? options.sentStyle(line) : line))
      row += Math.max(1, Math.ceil((headCols + columns(line)) / width))
      offset += line.length + 1
    }
    return { drawn: drawn.join("\r\n"), rows: row, cursorRow, cursorCol }
  }

  const draw = () => {
    if (reading === undefined || closed) return
    const shown = search === undefined ? text : (matchOf(search.query, search.at) ?? "")
    const at = search === undefined ? cursor : shown.length
    const { drawn, rows, cursorRow, cursorCol } = layout(promptText(), shown, at)
    let out = rowsAbove > 0 ? `\u001b[${rowsAbove}A` : ""
    out += `\r\u001b[J${drawn}`
    // the cursor is after the last character drawn: back to where it belongs
    const lastRow = rows - 1
    if (lastRow > cursorRow) out += `\u001b[${lastRow - cursorRow}A`
    out += `\r${cursorCol > 0 ? `\u001b[${cursorCol}C` : ""}`
    stdout.write(out)
    rowsAbove = cursorRow
  }

  /** Below what is drawn, the cursor on a fresh line: the prompt is left as the transcript shows it. */
  const leaveDrawing = () => {
    const { rows } = layout(promptText(), text, text.length)
    const down = rows - 1 - rowsAbove
    stdout.write(`${down > 0 ? `\u001b[${down}B` : ""}\r\n`)
    rowsAbove = 0
  }

  const say = (line: string) => {
    if (reading === undefined) return void stdout.write(`${line}\n`)
    leaveDrawing()
    stdout.write(`${line}\n`)
    draw()
  }

  // editing -------------------------------------------------------------------

  const insert = (typed: string) => {
    text = text.slice(0, cursor) + typed + text.slice(cursor)
    cursor += typed.length
    historyAt = undefined
  }

  const setText = (value: string) => {
    text = value
    cursor = value.length
  }

  const matchOf = (query: string, from: number): string | undefined => {
    const entries = history.entries()
    for (let i = Math.min(from, entries.length - 1); i >= 0; i--) if (entries[i].includes(query)) return entries[i]
    return undefined
  }

  const indexOfMatch = (query: string, from: number): number => {
    const entries = history.entries()
    for (let i = Math.min(from, entries.length - 1); i >= 0; i--) if (entries[i].includes(query)) return i
    return -1
  }

  const lineStart = () => text.lastIndexOf("\n", cursor - 1) + 1
  const lineEnd = () => {
    const end = text.indexOf("\n", cursor)
    return end === -1 ? text.length : end
  }

  /** Up/Down move between the lines of a question of several lines, then through history. */
  const verticalMove = (direction: -1 | 1): boolean => {
    const start = lineStart()
    const column = cursor - start
    if (direction === -1) {
      if (start === 0) return false
      const prevStart = text.lastIndexOf("\n", start - 2) + 1
      cursor = Math.min(prevStart + column, start - 1)
      return true
    }
    const end = lineEnd()
    if (end === text.length) return false
    const nextEnd = text.indexOf("\n", end + 1)
    cursor = Math.min(end + 1 + column, nextEnd === -1 ? text.length : nextEnd)
    return true
  }

  const historyMove = (direction: -1 | 1) => {
    const entries = history.entries()
    if (entries.length === 0) return
    if (historyAt === undefined) {
      if (direction === 1) return
      draftBeforeHistory = text
      historyAt = entries.length
    }
    const next = historyAt + direction
    if (next < 0) return
    if (next >= entries.length) {
      historyAt = undefined
      setText(draftBeforeHistory)
      return
    }
    historyAt = next
    setText(entries[next])
  }

  const submit = () => {
    const line = text
    if (reading !== undefined) {
      cursor = text.length
      sending = true
      draw()
      sending = false
      leaveDrawing()
    }
    text = ""
    cursor = 0
    historyAt = undefined
    if (line.trim() !== "") history.add(line)
    deliver(line)
  }

  const deliver = (line: string | undefined) => {
    if (reading === undefined) return void sent.push(line)
    const { resolve } = reading
    reading = undefined
    resolve(line)
  }

  const leave = () => {
    if (reading !== undefined) leaveDrawing()
    text = ""
    cursor = 0
    deliver(undefined)
  }

  const completeNow = async () => {
    if (complete === undefined) return
    const before = text.slice(0, cursor)
    const offered = await complete(before)
    if (offered === undefined || offered.items.length === 0) return
    if (text.slice(0, cursor) !== before) return
    const typed = before.slice(offered.start)
    const prefix = commonPrefix(offered.items)
    if (offered.items.length === 1) {
      const [item] = offered.items
      const ending = item.endsWith("/") ? "" : " "
      text = before.slice(0, offered.start) + item + ending + text.slice(cursor)
      cursor = offered.start + item.length + ending.length
    } else if (prefix.length > typed.length) {
      text = before.slice(0, offered.start) + prefix + text.slice(cursor)
      cursor = offered.start + prefix.length
    } else {
      const shown = offered.items.slice(0, 40).join("  ")
      say(offered.items.length > 40 ? `${shown}  … ${offered.items.length - 40} more` : shown)
      return
    }
    draw()
  }

  // keys ----------------------------------------------------------------------

  const onSearchKey = (typed: string | undefined, key: Key) => {
    const s = search!
    if (key.ctrl === true && key.name === "r") {
      const at = indexOfMatch(s.query, s.at - 1)
      if (at !== -1) s.at = at
      return draw()
    }
    if ((key.ctrl === true && (key.name === "c" || key.name === "g")) || key.name === "escape") {
      search = undefined
      setText(s.before)
      return draw()
    }
    if (key.name === "backspace") {
      s.query = s.query.slice(0, -1)
      s.at = history.entries().length - 1
      return draw()
    }
    const found = matchOf(s.query, s.at)
    if (key.name === "return" || key.name === "enter") {
      search = undefined
      setText(found ?? s.before)
      return submit()
    }
    if (
      typed !== undefined && key.ctrl !== true && key.meta !== true && typed.length >= 1 &&
      !/[\u0000-\u001f]/.test(typed)
    ) {
      s.query += typed
      const at = indexOfMatch(s.query, s.at)
      if (at !== -1) s.at = at
      return draw()
    }
    // any other key takes the match into the line for editing
    search = undefined
    setText(found ?? s.before)
    draw()
  }

  const onKey = (typed: string | undefined, key: Key | undefined) => {
    if (closed) return
    const k: Key = key ?? { sequence: typed }
    if (keyWaiter !== undefined && keyWaiter(k, typed)) return
    if (k.name === "paste-start") return void (pasting = true)
    if (k.name === "paste-end") {
      pasting = false
      return draw()
    }
    if (pasting) {
      if (k.name === "return" || k.name === "enter") insert("\n")
      else if (k.name === "tab") insert("\t")
      else if (typed !== undefined && !/[\u0000-\u001f]/.test(typed)) insert(typed)
      return
    }
    if (search !== undefined) return onSearchKey(typed, k)

    if (k.ctrl === true && k.name === "c") {
      if (reading === undefined) {
        for (const handler of [...cancelHandlers]) handler()
        return
      }
      if (text !== "") {
        text = ""
        cursor = 0
        stdout.write("^C")
        leaveDrawing()
        return draw()
      }
      const now = Date.now()
      if (now - firstCtrlC < LEAVE_WINDOW_MS) return leave()
      firstCtrlC = now
      return say("press Ctrl-C again or Ctrl-D to leave")
    }
    if (k.name === "escape") {
      if (reading === undefined) { for (const handler of [...cancelHandlers]) handler() }
      return
    }
    if (k.ctrl === true && k.name === "d") {
      if (text === "") return leave()
      text = text.slice(0, cursor) + text.slice(cursor + 1)
      return draw()
    }
    if (k.name === "return" && k.meta !== true) {
      // a line ending in `\` asks for another line
      if (cursor === text.length && text.endsWith("\\")) {
        text = `${text.slice(0, -1)}\n`
        cursor = text.length
        return draw()
      }
      return submit()
    }
    if ((k.name === "return" && k.meta === true) || k.name === "enter" || (k.ctrl === true && k.name === "j")) {
      insert("\n")
      return draw()
    }
    if (k.ctrl === true && k.name === "r") {
      search = { query: "", at: history.entries().length - 1, before: text }
      return draw()
    }
    if (k.name === "tab") return void completeNow()
    switch (k.ctrl === true ? `C-${k.name}` : k.meta === true ? `M-${k.name}` : k.name) {
      case "backspace":
      case "C-h":
        if (cursor > 0) {
          text = text.slice(0, cursor - 1) + text.slice(cursor)
          cursor--
        }
        return draw()
      case "delete":
        text = text.slice(0, cursor) + text.slice(cursor + 1)
        return draw()
      case "left":
      case "C-b":
        cursor = Math.max(0, cursor - 1)
        return draw()
      case "right":
      case "C-f":
        cursor = Math.min(text.length, cursor + 1)
        return draw()
      case "home":
      case "C-a":
        cursor = lineStart()
        return draw()
      case "end":
      case "C-e":
        cursor = lineEnd()
        return draw()
      case "C-u":
        text = text.slice(0, lineStart()) + text.slice(cursor)
        cursor = lineStart()
        return draw()
      case "C-k":
        text = text.slice(0, cursor) + text.slice(lineEnd())
        return draw()
      case "C-w":
      case "M-backspace": {
        const start = text.slice(0, cursor).search(/\S+\s*$/)
        if (start === -1) return
        text = text.slice(0, start) + text.slice(cursor)
        cursor = start
        return draw()
      }
      case "C-left":
      case "M-b": {
        const before = text.slice(0, cursor).search(/\S+\s*$/)
        cursor = before === -1 ? 0 : before
        return draw()
      }
      case "C-right":
      case "M-f": {
        const after = text.slice(cursor).search(/\s\S|$/)
        cursor = Math.min(text.length, cursor + after + 1)
        return draw()
      }
      case "C-l":
        stdout.write("\u001b[2J\u001b[H")
        rowsAbove = 0
        return draw()
      case "up":
      case "C-p":
        if (!verticalMove(-1)) historyMove(-1)
        return draw()
      case "down":
      case "C-n":
        if (!verticalMove(1)) historyMove(1)
        return draw()
    }
    if (typed === undefined || k.ctrl === true || k.meta === true) return
    if (/[\u0000-\u001f\u007f]/.test(typed)) return
    insert(typed)
    draw()
  }

  stdin.on("keypress", onKey)
  const onEnd = () => {
    if (closed) return
    leave()
  }
  stdin.on("end", onEnd)

  const question = (prompt: string): Promise<string | undefined> => {
    if (sent.length > 0) {
      // a line sent ahead is shown after its prompt, as if typed now
      const line = sent.shift()
      if (line !== undefined) stdout.write(`${prompt}${line.replace(/\n/g, "\n  ")}\n`)
      return Promise.resolve(line)
    }
    if (closed) return Promise.resolve(undefined)
    return new Promise((resolve) => {
      reading = { prompt, resolve }
      rowsAbove = 0
      draw()
    })
  }

  /** One key among `keys`; see TerminalInput.key. The line typed so far waits, unseen. */
  const oneKey = (
    prompt: string,
    keys: ReadonlyArray<string>,
    options?: { readonly thenLine?: ReadonlyArray<string> }
  ) =>
    new Promise<string | undefined>((resolve) => {
      stdout.write(prompt)
      let quietUntil = 0
      const finish = (answer: string | undefined, dropBurst: boolean) => {
        // the key that answered stays on the question's line
        stdout.write(answer !== undefined && keys.includes(answer) ? `${answer}\n` : "\n")
        keyWaiter = dropBurst
          ? (key) => {
            const now = Date.now()
            // only typing is dropped: Ctrl-C, Ctrl-D and Esc always count
            if (now > quietUntil || key.ctrl === true || key.name === "escape") {
              keyWaiter = undefined
              return false
            }
            // the `es⏎` of `yes⏎`: dropped, and Enter ends the burst
            if (key.name === "return" || key.name === "enter") keyWaiter = undefined
            quietUntil = now + BURST_GAP_MS
            return true
          }
          : undefined
        quietUntil = Date.now() + BURST_GAP_MS
        resolve(answer)
      }
      keyWaiter = (key, typed) => {
        if ((key.ctrl === true && key.name === "c") || key.name === "escape") {
          finish(CANCELLED, false)
          for (const handler of [...cancelHandlers]) handler()
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

  return {
    interactive: true,
    question,
    key: oneKey,
    watchCancel: (onCancel) => {
      cancelHandlers.add(onCancel)
      return () => void cancelHandlers.delete(onCancel)
    },
    configure: (options) => {
      if (options.historyFile !== undefined || options.history === "memory") history = makeHistory(options.historyFile)
      if (options.complete !== undefined) complete = options.complete
    },
    close: () => {
      if (closed) return
      closed = true
      stdin.off("keypress", onKey)
      stdin.off("end", onEnd)
      stdout.write(BRACKETED_PASTE_OFF)
      if (stdin.isTTY) stdin.setRawMode(false)
      stdin.pause()
    }
  }
}
