import {
  HEAD,
  HEAD_END,
  type HeadKey,
  type HeadValue,
  LISTED,
  NUMBERING,
  type Part,
  partsOf,
  VERSION_AT
} from "./SessionHead"
import type { SessionSummary } from "./SessionStore"

/**
 * The head scanner: reads the summary fields from the beginning of a file without parsing
 * the rest, in one match of a regular expression when the file is laid out as mm writes it,
 * field by field otherwise; both are made from the head's description (SessionHead.ts). It
 * answers only when it is sure; anything unusual goes to the slow path (SessionCodec.ts) — a
 * head without this mm's `numbering` among them, whose `turns` may count the old way.
 */

export type HeadScan =
  | { readonly _tag: "Found"; readonly version: number; readonly fields: HeadFields }
  | { readonly _tag: "NeedMore" }
  | { readonly _tag: "Unsure" }

/** What the head of a file tells of a session; its id comes from the file's name. */
export type HeadFields = { -readonly [K in keyof Omit<SessionSummary, "id">]: SessionSummary[K] }

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

  /** A `fork` or `parent` value: an object with each of its `parts`, of its kind; anything else is for the slow path. */
  parts(parts: ReadonlyArray<Part>): Record<string, unknown> {
    const start = this.skipWs()
    if (start !== OPEN_BRACE) throw unsure
    const from = this.pos
    this.skipContainer()
    let value: Record<string, unknown>
    try {
      value = JSON.parse(this.text.slice(from, this.pos)) as Record<string, unknown>
    } catch {
      throw unsure
    }
    const read: Record<string, unknown> = {}
    for (const part of parts) {
      const one = value[part.key]
      if (typeof one !== (part.value === "text" ? "string" : "number")) throw unsure
      read[part.key] = one
    }
    return read
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

/**
 * The scan of a head whose fields were read, by their position in `HEAD`: its summary (every
 * listed field the file has) and its version.
 */
const found = (values: ReadonlyArray<unknown>): HeadScan => {
  const fields: Record<string, unknown> = {}
  for (const { at, key } of LISTED) {
    const value = values[at]
    if (value !== undefined) fields[key] = value
  }
  return { _tag: "Found", version: values[VERSION_AT] as number, fields: fields as unknown as HeadFields }
}

const HEAD_AT: ReadonlyMap<string, number> = new Map(HEAD.map((field, at) => [field.key, at]))

const readValue = (cursor: Cursor, value: HeadValue): unknown => {
  switch (value) {
    case "version":
    case "count":
      return cursor.number()
    case "numbering": {
      // another numbering: `turns` is not to be trusted from the head (nor without one: it is required)
      if (cursor.number() !== NUMBERING) throw unsure
      return NUMBERING
    }
    case "text":
      return cursor.string()
    case "fork":
    case "parent":
      return cursor.parts(partsOf(value)!)
    case "records":
      return cursor.countArray()
  }
}

const scanFields = (cursor: Cursor): HeadScan => {
  cursor.expect(OPEN_BRACE)
  const seen: Array<string> = []
  const values: Array<unknown> = []
  for (;;) {
    const key = cursor.string()
    if (seen.includes(key)) throw unsure
    seen.push(key)
    cursor.expect(COLON)
    if (key === HEAD_END) {
      if (cursor.skipWs() !== OPEN_BRACKET) throw unsure
      if (HEAD.some((field, at) => !field.optional && values[at] === undefined)) throw unsure
      return found(values)
    }
    const at = HEAD_AT.get(key)
    if (at === undefined) cursor.skipValue()
    else values[at] = readValue(cursor, HEAD[at].value)
    const c = cursor.skipWs()
    cursor.pos++
    if (c !== COMMA) throw unsure
  }
}

// ---- the layout mm writes, in one match ----

/** A string without a line break, its text captured (escaped or not: see `textOf`). */
const STRING_BODY = String.raw`[^"\\\n]*(?:\\[^\n][^"\\\n]*)*`
const STRING = `"(${STRING_BODY})"`
const SKIPPED_STRING = `"${STRING_BODY}"`
/** A whole number as JSON writes it. */
const COUNT = String.raw`(0|[1-9]\d*)`
/** Any number as JSON writes it. */
const NUMBER = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?`
/** A line break and the indent of `depth` levels, as `JSON.stringify(…, null, 2)` writes them. */
const line = (depth: number) => String.raw`\n` + "  ".repeat(depth)

/** A flat record (a value of `records`) as an element of a top-level array: strings, numbers and literals. */
const RECORD_LINE = `${line(3)}${SKIPPED_STRING}: (?:${SKIPPED_STRING}|${NUMBER}|true|false|null)`
const RECORD = String.raw`${line(2)}\{${RECORD_LINE}(?:,${RECORD_LINE})*${line(2)}\}`

/** The pattern of a top-level value of kind `value`, and how many groups it captures. */
const patternOf = (value: HeadValue): { readonly source: string; readonly groups: number } => {
  switch (value) {
    case "version":
    case "count":
      return { source: COUNT, groups: 1 }
    case "numbering":
      // this mm's alone: any other head is `scanFields`' to refuse
      return { source: String(NUMBERING), groups: 0 }
    case "text":
      return { source: STRING, groups: 1 }
    case "fork":
    case "parent": {
      const parts = partsOf(value)!
      const written = parts.map((part) => `${line(2)}"${part.key}": ${patternOf(part.value).source}`)
      return { source: String.raw`\{${written.join(",")}${line(1)}\}`, groups: parts.length }
    }
    case "records":
      // captured whole, `]` alone when there are none: their number is counted
      return { source: String.raw`\[(\]|${RECORD}(?:,${RECORD})*${line(1)}\])`, groups: 1 }
  }
}

/**
 * The head of a file exactly as mm writes it (`JSON.stringify` with a two-space indent, the
 * fields of `HEAD` in their order, each optional one there or not), up to the opening of
 * `messages`, made from `HEAD` as the module loads; with where each field's groups begin.
 */
const { GROUP_AT, LAYOUT } = (() => {
  let source = String.raw`^\{`
  let group = 1
  const groupAt: Array<number> = []
  for (const field of HEAD) {
    const { groups, source: value } = patternOf(field.value)
    const written = `${line(1)}"${field.key}": ${value},`
    source += field.optional ? `(?:${written})?` : written
    groupAt.push(group)
    group += groups
  }
  return { GROUP_AT: groupAt, LAYOUT: new RegExp(`${source}${line(1)}"${HEAD_END}": \\[`) }
})()

/** A string's text from what is between its quotes; `undefined` for an escape JSON has not. */
const textOf = (raw: string): string | undefined => {
  if (!raw.includes("\\")) return raw
  try {
    return JSON.parse(`"${raw}"`) as string
  } catch {
    return undefined
  }
}

/** The number of records in the captured text of a `records` value: each opens a line of its own. */
const RECORD_START = "\n    {"
const countRecords = (captured: string): number => {
  let count = 0
  for (let at = captured.indexOf(RECORD_START); at >= 0; at = captured.indexOf(RECORD_START, at + 1)) count++
  return count
}

/** Where the groups of field `key` (or of its part `part`) begin in a match of `LAYOUT`. */
const groupOf = (key: HeadKey, part?: string): number => {
  const at = HEAD_AT.get(key)!
  return GROUP_AT[at] + (part === undefined ? 0 : partsOf(HEAD[at].value)!.findIndex((one) => one.key === part))
}
// the fields are taken from the match by name rather than in a loop over `HEAD`, which took
// twice as long (about 2 ms more for 10,000 files); the tests hold them to `HEAD`
const VERSION = groupOf("version")
const ID = groupOf("id")
const CWD = groupOf("cwd")
const CREATED_AT = groupOf("createdAt")
const UPDATED_AT = groupOf("updatedAt")
const TITLE = groupOf("title")
const TURNS = groupOf("turns")
const FORK_ID = groupOf("forkedFrom", "id")
const FORK_TURN = groupOf("forkedFrom", "turn")
const PARENT_ID = groupOf("parent", "id")
const PARENT_TURN = groupOf("parent", "turn")
const PARENT_CALL = groupOf("parent", "callId")
const ARCHIVE_OF = groupOf("archiveOf")
const ERRORS = groupOf("errors")

/**
 * The summary of a head in mm's own layout, found by one regular expression in about a third
 * of the time `scanFields` takes; `undefined` for any other text, which `scanFields` then reads.
 * Where it answers, it answers what `scanFields` would (a property the tests hold it to).
 */
export const scanLayout = (head: string): HeadScan | undefined => {
  const match = LAYOUT.exec(head)
  if (match === null) return undefined
  const cwd = textOf(match[CWD])
  const createdAt = textOf(match[CREATED_AT])
  const updatedAt = textOf(match[UPDATED_AT])
  const title = textOf(match[TITLE])
  if (cwd === undefined || createdAt === undefined || updatedAt === undefined || title === undefined) return undefined
  // the id is the file's name, but an escape JSON has not is still the slow path's to refuse
  if (textOf(match[ID]) === undefined) return undefined
  const fields: HeadFields = { cwd, createdAt, updatedAt, title, turns: Number(match[TURNS]), errors: 0 }
  if (match[ERRORS] !== "]") fields.errors = countRecords(match[ERRORS])
  if (match[FORK_ID] !== undefined) {
    const id = textOf(match[FORK_ID])
    if (id === undefined) return undefined
    fields.forkedFrom = { id, turn: Number(match[FORK_TURN]) }
  }
  if (match[PARENT_ID] !== undefined) {
    const id = textOf(match[PARENT_ID])
    const callId = textOf(match[PARENT_CALL])
    if (id === undefined || callId === undefined) return undefined
    fields.parent = { id, turn: Number(match[PARENT_TURN]), callId }
  }
  if (match[ARCHIVE_OF] !== undefined) {
    const archiveOf = textOf(match[ARCHIVE_OF])
    if (archiveOf === undefined) return undefined
    fields.archiveOf = archiveOf
  }
  return { _tag: "Found", version: Number(match[VERSION]), fields }
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
