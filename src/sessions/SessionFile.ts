import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { StoreError } from "../domain/Errors"
import { Session, SESSION_VERSION } from "../domain/Session"
import { isSessionId, validateSessionId } from "../domain/SessionId"
import { redact } from "../lib/Secrets"
import type { SessionListing, SessionSummary } from "./SessionStore"

/**
 * The session file format shared by every store: how a session is written (summary fields
 * first, so a listing reads only the head of each file), read back, and summarised.
 */

export const FILE_SUFFIX = ".json"

/** `<id>.json` for a valid id; anything else in the directory is not a session. */
export const idOfFileName = (name: string): string | undefined => {
  if (name.length !== 29 || !name.endsWith(FILE_SUFFIX)) return undefined
  const id = name.slice(0, 24)
  return isSessionId(id) ? id : undefined
}

const SUMMARY_KEYS = [
  "version",
  "id",
  "cwd",
  "createdAt",
  "updatedAt",
  "title",
  "turns",
  "errors",
  "messages",
  "changes"
]
const MESSAGE_KEYS = ["role", "content", "tool_calls", "tool_call_id", "failed", "summary", "note"]
const ERROR_KEYS = ["kind", "at", "turns", "question", "line", "raw"]
const CHANGE_KEYS = ["turn", "at", "tool_call_id", "path", "before", "after", "kind", "question", "skipped"]

/** The record with its known fields first (decoding puts unknown ones first); usually itself. */
const knownFirst = (known: ReadonlyArray<string>) => <A extends object>(record: A): A => {
  for (const key in record) {
    if (key === known[0]) return record
    break
  }
  const fields = record as Record<string, unknown>
  const ordered: Record<string, unknown> = {}
  for (const key of known) if (key in fields) ordered[key] = fields[key]
  for (const key of Object.keys(fields)) if (!(key in ordered)) ordered[key] = fields[key]
  return ordered as A
}
const messageFirst = knownFirst(MESSAGE_KEYS)
const errorFirst = knownFirst(ERROR_KEYS)
const changeFirst = knownFirst(CHANGE_KEYS)

/**
 * The file's text: summary fields, then `errors`, then `messages`, then `changes` (when there
 * are any: after `messages`, so that a listing never reads them), then any unknown field.
 */
export const encodeSession = (session: Session): string => {
  const ordered: Record<string, unknown> = {
    version: SESSION_VERSION,
    id: session.id,
    cwd: session.cwd,
    createdAt: session.createdAt,
    updatedAt: session.updatedAt,
    title: session.title,
    turns: session.turns,
    errors: (session.errors ?? []).map(errorFirst),
    messages: session.messages.map(messageFirst)
  }
  if (session.changes !== undefined && session.changes.length > 0) ordered.changes = session.changes.map(changeFirst)
  for (const key of Object.keys(session)) {
    if (!SUMMARY_KEYS.includes(key)) ordered[key] = (session as Record<string, unknown>)[key]
  }
  // a secret that reached the history (a pasted key, an echoed error) is never written
  return redact(JSON.stringify(ordered, null, 2)) + "\n"
}

/** Why a text is not a session this mm can use. */
export type Rejection =
  | { readonly _tag: "Unreadable"; readonly detail: string }
  | { readonly _tag: "Newer"; readonly version: number }

export const newerVersionMessage = (id: string, version: number): string =>
  `session ${id} was written by a newer mm (version ${version}); this mm reads version ${SESSION_VERSION}`

export const rejectionText = (id: string, rejection: Rejection): string =>
  rejection._tag === "Newer" ? newerVersionMessage(id, rejection.version) : rejection.detail

const lowerFirst = (text: string) => text.charAt(0).toLowerCase() + text.slice(1)

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

const expectedText = (expected: string): string => {
  if (expected.startsWith("ReadonlyArray<")) return "an array"
  if (expected.startsWith("{") || expected.startsWith("Struct")) return "an object"
  if (expected === "string" || expected === "number" || expected === "boolean") {
    return `a ${expected}`
  }
  return expected.length > 40 ? `${expected.slice(0, 40)}…` : expected
}

const actualText = (actual: string): string => {
  if (actual.startsWith("[")) return "an array"
  if (actual.startsWith("{")) return "an object"
  return actual.length > 40 ? `${actual.slice(0, 40)}…` : actual
}

const orList = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`

/** One line saying where the shape is wrong, e.g. `messages: expected an array, got "x"`. */
export const shapeProblem = (error: ParseResult.ParseError): string => {
  const issues = ParseResult.ArrayFormatter.formatErrorSync(error)
  const first = issues[0]
  if (first === undefined) return "not a session"
  const where = pathText(first.path)
  const prefix = where === "" ? "" : `${where}: `
  if (first._tag === "Missing") return `${prefix}missing`
  const same = issues.filter((issue) => pathText(issue.path) === where && issue._tag === first._tag)
  const expected: Array<string> = []
  let actual = ""
  for (const issue of same) {
    const match = /^Expected ([\s\S]*), actual ([\s\S]*)$/.exec(issue.message)
    if (match === null) continue
    const text = expectedText(match[1])
    if (!expected.includes(text)) expected.push(text)
    actual = actualText(match[2])
  }
  if (expected.length === 0) return `${prefix}${first.message}`
  const wanted = where === "" ? "a JSON object" : orList(expected)
  return `${prefix}expected ${wanted}, got ${actual}`
}

const decodeSession = Schema.decodeUnknownEither(Session, { onExcessProperty: "preserve" })
const isSession = Schema.is(Session)

/**
 * Checking a well-formed file is several times faster than decoding it (no copy is made);
 * the full decode runs only when the check fails, to say precisely what is wrong.
 */
const acceptOrDecode = (json: unknown): Either.Either<Session, ParseResult.ParseError> => {
  if (typeof json === "object" && json !== null && !Array.isArray(json)) {
    const candidate = "errors" in json ? json : { ...json, errors: [] }
    if (isSession(candidate)) return Either.right(candidate)
  }
  return decodeSession(json)
}

const versionOf = (value: unknown): number | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  const version = (value as { version?: unknown }).version
  return typeof version === "number" ? version : undefined
}

/** Deeper than any session mm writes (about 6 levels) by far; deeper still would exhaust the stack when decoded. */
export const MAX_NESTING = 256

/** Whether the JSON text nests arrays and objects deeper than `max` levels (strings skipped). */
export const nestsDeeperThan = (text: string, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x5c) i++ // backslash: the next character is escaped
      else if (c === 0x22) inString = false
    } else if (c === 0x22) inString = true
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true
    } else if (c === 0x5d || c === 0x7d) depth--
  }
  return false
}

/** Why summary fields that have the right type are still not a session's (`turns: -5`). */
export const fieldsProblem = (
  fields: { readonly turns: number; readonly createdAt: string; readonly updatedAt: string }
): string | undefined => {
  if (!Number.isSafeInteger(fields.turns) || fields.turns < 0) {
    return `turns: expected a whole number of 0 or more, got ${fields.turns}`
  }
  for (const key of ["createdAt", "updatedAt"] as const) {
    if (Number.isNaN(Date.parse(fields[key]))) {
      return `${key}: expected a date, got ${JSON.stringify(fields[key].slice(0, 40))}`
    }
  }
  return undefined
}

/**
 * The session a file holds, or why it holds none. A newer `version` is checked before the
 * shape (a newer mm may have changed it). The file's name is the session's id.
 */
export const parseSession = (text: string, id: string): Either.Either<Session, Rejection> => {
  if (text.trim() === "") return Either.left({ _tag: "Unreadable", detail: "empty file" })
  if (nestsDeeperThan(text, MAX_NESTING)) {
    return Either.left({
      _tag: "Unreadable",
      detail: `nested deeper than ${MAX_NESTING} levels; not a session mm wrote`
    })
  }
  try {
    return parseShallow(text, id)
  } catch (cause) {
    // whatever else a hostile file does to the decoder, it is one unreadable file
    return Either.left({
      _tag: "Unreadable",
      detail: lowerFirst(cause instanceof Error ? cause.message : String(cause))
    })
  }
}

const parseShallow = (text: string, id: string): Either.Either<Session, Rejection> => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (cause) {
    return Either.left({
      _tag: "Unreadable",
      detail: lowerFirst(cause instanceof Error ? cause.message : String(cause))
    })
  }
  const version = versionOf(json)
  if (version !== undefined && version > SESSION_VERSION) return Either.left({ _tag: "Newer", version })
  return acceptOrDecode(json).pipe(
    Either.mapLeft((error): Rejection => ({ _tag: "Unreadable", detail: shapeProblem(error) })),
    Either.flatMap((session): Either.Either<Session, Rejection> => {
      const problem = fieldsProblem(session)
      return problem === undefined ? Either.right(session) : Either.left({ _tag: "Unreadable", detail: problem })
    }),
    Either.map((session) => (session.id === id ? session : { ...session, id }))
  )
}

export const summaryOf = (session: Session): SessionSummary => ({
  id: session.id,
  cwd: session.cwd,
  createdAt: session.createdAt,
  updatedAt: session.updatedAt,
  title: session.title,
  turns: session.turns,
  errors: session.errors.length
})

export const readable = (summary: SessionSummary): SessionListing => ({ _tag: "Readable", summary })
export const unreadable = (id: string, reason: string): SessionListing => ({ _tag: "Unreadable", id, reason })

/** The listing of a whole file's text (the slow path: full parse and decode). */
export const listingOfText = (id: string, text: string): SessionListing =>
  Either.match(parseSession(text, id), {
    onLeft: (rejection) => unreadable(id, rejectionText(id, rejection)),
    onRight: (session) => readable(summaryOf(session))
  })

// ---------------------------------------------------------------------------------------
// The head scanner: reads the summary fields from the beginning of a file without parsing
// the rest. It answers only when it is sure; anything unusual goes to the slow path.

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
        strings[key] = cursor.string()
        break
      case "errors":
        errors = cursor.countArray()
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
        return { _tag: "Found", version, fields: { cwd, createdAt, updatedAt, title, turns, errors } }
      }
      default:
        cursor.skipValue()
    }
    const c = cursor.skipWs()
    cursor.pos++
    if (c !== COMMA) throw unsure
  }
}

/**
 * Reads the summary fields from `head`, the first bytes of a file (`complete` when it is the
 * whole file). `NeedMore`: the fields go on past the head; `Unsure`: parse the whole file.
 */
export const scanHead = (head: string, complete: boolean): HeadScan => {
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

/** The stamp of a whole file's text: from its head, else by parsing it. */
export const stampOfText = (text: string): Stamp => {
  const found = scanStamp(text)
  if (found.version !== undefined && found.updatedAt !== undefined) return found
  try {
    const json = JSON.parse(text) as unknown
    const updatedAt = typeof json === "object" && json !== null
      ? (json as { updatedAt?: unknown }).updatedAt
      : undefined
    return { version: versionOf(json), updatedAt: typeof updatedAt === "string" ? updatedAt : undefined }
  } catch {
    return found
  }
}

/** The `version` a whole file's text claims, if any: from its head, else by parsing it. */
export const versionOfText = (text: string): number | undefined => stampOfText(text).version

/** Whether the text ends like a JSON object (a file cut short does not). */
export const endsLikeObject = (tail: string): boolean => {
  let end = tail.length - 1
  while (end >= 0 && /\s/.test(tail[end])) end--
  // mm writes with a two-space indent, so only the top-level object closes at column 0;
  // a file cut after some inner `}` does not end this way and gets a full parse.
  return end >= 1 && tail.charCodeAt(end) === CLOSE_BRACE && tail[end - 1] === "\n"
}

/** The listing of a file from its head scan, or `undefined` when the slow path must decide. */
export const listingOfScan = (id: string, scan: HeadScan): SessionListing | undefined => {
  if (scan._tag !== "Found") return undefined
  if (scan.version > SESSION_VERSION) return unreadable(id, newerVersionMessage(id, scan.version))
  const problem = fieldsProblem(scan.fields)
  if (problem !== undefined) return unreadable(id, problem)
  return readable({ id, ...scan.fields })
}

/** The listing of a whole text, fast when its head is in the usual order. */
export const listingOf = (id: string, text: string): SessionListing =>
  (endsLikeObject(text) ? listingOfScan(id, scanHead(text, true)) : undefined) ?? listingOfText(id, text)

// ---------------------------------------------------------------------------------------
// The store's errors, worded the same whichever store raises them.

export const validId = (id: unknown): Effect.Effect<string, StoreError> =>
  validateSessionId(id).pipe(
    Effect.mapError((error) =>
      new StoreError({ reason: "bad-id", id: error.id, message: error.message, raw: error.message })
    )
  )

export const notFound = (dir: string, id: string): StoreError =>
  new StoreError({
    reason: "not-found",
    id,
    message: `no session ${id} in ${dir}`,
    raw: `${dir}: no ${id}${FILE_SUFFIX}`
  })

export const newerSession = (id: string, version: number): StoreError =>
  new StoreError({
    reason: "newer-version",
    id,
    message: newerVersionMessage(id, version),
    raw: `version ${version} > ${SESSION_VERSION}`
  })

/** A session held in memory that claims a newer version is not written either. */
export const refuseNewer = (session: Session): Effect.Effect<void, StoreError> =>
  session.version > SESSION_VERSION ? Effect.fail(newerSession(session.id, session.version)) : Effect.void

/** Another writer replaced the file since this one last read or wrote it. */
export const changedMeanwhile = (id: string, expected: string, found: string | undefined): StoreError =>
  new StoreError({
    reason: "conflict",
    id,
    message: `session ${id} was changed by another mm since it was loaded`,
    raw: `expected updatedAt ${expected}, found ${found ?? "none"}`
  })

export const rejected = (id: string, rejection: Rejection): StoreError =>
  rejection._tag === "Newer"
    ? newerSession(id, rejection.version)
    : new StoreError({
      reason: "unreadable",
      id,
      message: `session ${id} is unreadable: ${rejection.detail}`,
      raw: rejection.detail
    })

export const notOverwritten = (id: string, version: number): StoreError =>
  new StoreError({
    reason: "newer-version",
    id,
    message:
      `session ${id} was written by a newer mm (version ${version}); this mm reads version ${SESSION_VERSION} and leaves it as it is`,
    raw: `version ${version} > ${SESSION_VERSION}`
  })

export const decodeFile = (text: string, id: string): Effect.Effect<Session, StoreError> =>
  Either.match(parseSession(text, id), {
    onLeft: (rejection) => Effect.fail(rejected(id, rejection)),
    onRight: Effect.succeed
  })
