import type { SessionSummary } from "./SessionStore"

/**
 * The head scanner: reads the summary fields from the beginning of a file without parsing
 * the rest. It answers only when it is sure; anything unusual goes to the slow path
 * (SessionCodec.ts).
 */

export type HeadScan =
  | { readonly _tag: "Found"; readonly version: number; readonly fields: HeadFields }
  | { readonly _tag: "NeedMore" }
  | { readonly _tag: "Unsure" }

/** What the head of a file tells of a session; its id comes from the file's name. */
export type HeadFields = Omit<SessionSummary, "id">

const NEED_MORE: HeadScan = { _tag: "NeedMore" }
const UNSURE: HeadScan = { _tag: "Unsure" }

class Stop {
  constructor(readonly scan: HeadScan) {}
}
const needMore = new Stop(NEED_MORE)
const unsure = new Stop(UNSURE)

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const COLON = 58
const OPEN_BRACE = 123
const CLOSE_BRACE = 125
const OPEN_BRACKET = 91
const CLOSE_BRACKET = 93

const numberPattern = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/
const literalPattern = /true|false|null/y

class Cursor {
  pos = 0
  constructor(
    readonly text: string,
    readonly complete: boolean
  ) {}

  private end(): never {
    throw this.complete ? unsure : needMore
  }

  skipWs(): number {
    const text = this.text
    let pos = this.pos
    for (;;) {
      const c = text.charCodeAt(pos)
      if (c === 32 || c === 10 || c === 13 || c === 9) pos++
      else break
    }
    this.pos = pos
    if (pos >= text.length) this.end()
    return text.charCodeAt(pos)
  }

  expect(code: number): void {
    if (this.skipWs() !== code) throw unsure
    this.pos++
  }

  /** The end of the string starting at `pos` (a quote), past its closing quote. */
  private stringEnd(): number {
    const text = this.text
    let from = this.pos + 1
    for (;;) {
      const close = text.indexOf("\"", from)
      if (close < 0) this.end()
      let slashes = 0
      while (text.charCodeAt(close - 1 - slashes) === BACKSLASH) slashes++
      if (slashes % 2 === 0) return close + 1
      from = close + 1
    }
  }

  string(): string {
    if (this.skipWs() !== QUOTE) throw unsure
    const start = this.pos
    const end = this.stringEnd()
    this.pos = end
    const raw = this.text.slice(start + 1, end - 1)
    if (!raw.includes("\\")) return raw
    try {
      return JSON.parse(this.text.slice(start, end)) as string
    } catch {
      throw unsure
    }
  }

  number(): number {
    this.skipWs()
    const text = this.text
    const start = this.pos
    let pos = start
    for (;;) {
      const c = text.charCodeAt(pos)
      if ((c >= 48 && c <= 57) || c === 45 || c === 43 || c === 46 || c === 101 || c === 69) pos++
      else break
    }
    if (pos >= text.length) this.end()
    const raw = text.slice(start, pos)
    if (!numberPattern.test(raw)) throw unsure
    this.pos = pos
    return Number(raw)
  }

  skipValue(): void {
    const c = this.skipWs()
    if (c === QUOTE) {
      this.pos = this.stringEnd()
      return
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      this.skipContainer()
      return
    }
    if (c === 45 || (c >= 48 && c <= 57)) {
      this.number()
      return
    }
    literalPattern.lastIndex = this.pos
    const match = literalPattern.exec(this.text)
    if (match === null) {
      if (this.text.length - this.pos < 5) this.end()
      throw unsure
    }
    this.pos += match[0].length
  }

  private skipContainer(): void {
    const text = this.text
    let depth = 0
    let pos = this.pos
    for (;;) {
      if (pos >= text.length) this.end()
      const c = text.charCodeAt(pos)
      if (c === QUOTE) {
        this.pos = pos
        pos = this.stringEnd()
        continue
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        depth--
        if (depth === 0) {
          this.pos = pos + 1
          return
        }
      }
      pos++
    }
  }

  /** A `forkedFrom` object, `{id, turn}`; anything else is for the slow path. */
  forkedFrom(): { readonly id: string; readonly turn: number } {
    const start = this.skipWs()
    if (start !== OPEN_BRACE) throw unsure
    const from = this.pos
    this.skipContainer()
    try {
      const value = JSON.parse(this.text.slice(from, this.pos)) as { id?: unknown; turn?: unknown }
      if (typeof value.id === "string" && typeof value.turn === "number") return { id: value.id, turn: value.turn }
    } catch {
      // not JSON after all
    }
    throw unsure
  }

  /** Counts the elements of the array at `pos`. */
  countArray(): number {
    this.expect(OPEN_BRACKET)
    if (this.skipWs() === CLOSE_BRACKET) {
      this.pos++
      return 0
    }
    let count = 0
    for (;;) {
      this.skipValue()
      count++
      const c = this.skipWs()
      this.pos++
      if (c === CLOSE_BRACKET) return count
      if (c !== COMMA) throw unsure
    }
  }
}

const scanFields = (cursor: Cursor): HeadScan => {
  cursor.expect(OPEN_BRACE)
  const seen: Array<string> = []
  let version: number | undefined
  let turns: number | undefined
  let errors: number | undefined
  let forkedFrom: HeadFields["forkedFrom"]
  const strings: Record<string, string> = {}
  for (;;) {
    const key = cursor.string()
    if (seen.includes(key)) throw unsure
    seen.push(key)
    cursor.expect(COLON)
    switch (key) {
      case "version":
        version = cursor.number()
        break
      case "turns":
        turns = cursor.number()
        break
      case "id":
      case "cwd":
      case "createdAt":
      case "updatedAt":
      case "title":
      case "archiveOf":
        strings[key] = cursor.string()
        break
      case "errors":
        errors = cursor.countArray()
        break
      case "forkedFrom":
        forkedFrom = cursor.forkedFrom()
        break
      case "messages": {
        if (cursor.skipWs() !== OPEN_BRACKET) throw unsure
        const { cwd, createdAt, updatedAt, title, id } = strings
        if (
          version === undefined || turns === undefined || errors === undefined || id === undefined ||
          cwd === undefined || createdAt === undefined || updatedAt === undefined || title === undefined
        ) {
          throw unsure
        }
        const base: HeadFields = { cwd, createdAt, updatedAt, title, turns, errors }
        const archived = strings.archiveOf === undefined ? base : { ...base, archiveOf: strings.archiveOf }
        return { _tag: "Found", version, fields: forkedFrom === undefined ? archived : { ...archived, forkedFrom } }
      }
      default:
        cursor.skipValue()
    }
    const c = cursor.skipWs()
    cursor.pos++
    if (c !== COMMA) throw unsure
  }
}

// ---- the layout mm writes, in one match ----

/** A string without an escape or a line break in it (anything else is for `scanFields`). */
const PLAIN_STRING = String.raw`"([^"\\\n]*)"`
/** A whole number as JSON writes it. */
const COUNT = String.raw`(0|[1-9]\d*)`

/**
 * The head of a file exactly as mm writes it (`JSON.stringify` with a two-space indent, the
 * summary fields in their order, no error recorded), up to the opening of `messages`.
 */
const LAYOUT = new RegExp(
  String.raw`^\{\n  "version": ${COUNT},\n  "id": ${PLAIN_STRING},\n  "cwd": ${PLAIN_STRING},` +
    String.raw`\n  "createdAt": ${PLAIN_STRING},\n  "updatedAt": ${PLAIN_STRING},\n  "title": ${PLAIN_STRING},` +
    String
      .raw`\n  "turns": ${COUNT},(?:\n  "forkedFrom": \{\n    "id": ${PLAIN_STRING},\n    "turn": ${COUNT}\n  \},)?` +
    String.raw`(?:\n  "archiveOf": ${PLAIN_STRING},)?\n  "errors": \[\],\n  "messages": \[`
)

/**
 * The summary of a head in mm's own layout, found by one regular expression in about a third
 * of the time `scanFields` takes; `undefined` for any other text, which `scanFields` then reads.
 * Where it answers, it answers what `scanFields` would (a property the tests hold it to).
 */
export const scanLayout = (head: string): HeadScan | undefined => {
  const match = LAYOUT.exec(head)
  if (match === null) return undefined
  const [, version, , cwd, createdAt, updatedAt, title, turns, fromId, fromTurn, archiveOf] = match
  const base: HeadFields = { cwd, createdAt, updatedAt, title, turns: Number(turns), errors: 0 }
  const archived = archiveOf === undefined ? base : { ...base, archiveOf }
  return {
    _tag: "Found",
    version: Number(version),
    fields: fromId === undefined ? archived : { ...archived, forkedFrom: { id: fromId, turn: Number(fromTurn) } }
  }
}

/**
 * Reads the summary fields from `head`, the first bytes of a file (`complete` when it is the
 * whole file). `NeedMore`: the fields go on past the head; `Unsure`: parse the whole file.
 */
export const scanHead = (head: string, complete: boolean): HeadScan =>
  scanLayout(head) ?? scanHeadByField(head, complete)

/** `scanHead` without its one-match path: each field read in turn, in any order and layout. */
export const scanHeadByField = (head: string, complete: boolean): HeadScan => {
  try {
    return scanFields(new Cursor(head, complete))
  } catch (stop) {
    if (stop instanceof Stop) return stop.scan
    throw stop
  }
}

/** What a writer checks before replacing a file: the version it claims and when it was last written. */
export interface Stamp {
  readonly version: number | undefined
  readonly updatedAt: string | undefined
}

/** `version` and `updatedAt` from the head of a file, when it says them plainly before anything else stops the scan. */
export const scanStamp = (head: string): Stamp => {
  const cursor = new Cursor(head, false)
  let version: number | undefined
  let updatedAt: string | undefined
  try {
    cursor.expect(OPEN_BRACE)
    while (version === undefined || updatedAt === undefined) {
      const key = cursor.string()
      cursor.expect(COLON)
      cursor.skipWs()
      if (key === "version") version = cursor.number()
      else if (key === "updatedAt") updatedAt = cursor.string()
      else cursor.skipValue()
      if (cursor.skipWs() !== COMMA) break
      cursor.pos++
    }
  } catch (stop) {
    if (!(stop instanceof Stop)) throw stop
  }
  return { version, updatedAt }
}

/** The top-level `version` of a file, when its head says it plainly. */
export const scanVersion = (head: string): number | undefined => scanStamp(head).version

/**
 * `endsLikeObject` of the first `length` bytes of `bytes` (UTF-8), read as bytes while they are
 * ASCII, which spares decoding them; from a byte of another character on, the text decides.
 */
export const bytesEndLikeObject = (bytes: Uint8Array, length: number): boolean => {
  let end = length - 1
  // the ASCII characters `\s` matches: tab, line feed, vertical tab, form feed, return, space
  while (end >= 0 && (bytes[end] === 32 || (bytes[end] >= 9 && bytes[end] <= 13))) end--
  if (end >= 0 && bytes[end] >= 0x80) return endsLikeObject(new TextDecoder().decode(bytes.subarray(0, length)))
  return end >= 1 && bytes[end] === CLOSE_BRACE && bytes[end - 1] === 10
}

/** Whether the text ends like a JSON object (a file cut short does not). */
export const endsLikeObject = (tail: string): boolean => {
  let end = tail.length - 1
  while (end >= 0 && /\s/.test(tail[end])) end--
  // mm writes with a two-space indent, so only the top-level object closes at column 0;
  // a file cut after some inner `}` does not end this way and gets a full parse.
  return end >= 1 && tail.charCodeAt(end) === CLOSE_BRACE && tail[end - 1] === "\n"
}
