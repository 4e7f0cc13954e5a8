import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { type Session, SESSION_VERSION, sessionSchemas } from "../domain/Session"
import { isSessionId } from "../domain/SessionId"
import { withNumbering } from "../domain/Turns"
import { type HeadScan, scanHead, scanStamp, type Stamp } from "./HeadScanner"
import { HEAD, HEAD_END, type HeadField, LISTED, NUMBERING, partsOf } from "./SessionHead"
import type { SessionListing, SessionSummary } from "./SessionStore"

/**
 * The session file format shared by every store: how a session is written (the head's fields
 * first, as SessionHead.ts lists them, so a listing reads only the head of each file), read
 * back, and summarised.
 */

export const FILE_SUFFIX = ".json"

/** `<id>.json` for a valid id; anything else in the directory is not a session. */
export const idOfFileName = (name: string): string | undefined => {
  if (name.length !== 29 || !name.endsWith(FILE_SUFFIX)) return undefined
  const id = name.slice(0, 24)
  return isSessionId(id) ? id : undefined
}

/** The fields written after `messages`, when the session has them: a listing never reads them. */
const TAIL_KEYS = ["changes", "archives", "inProgress"]
/** Every field mm knows at the top level, in the order it writes them; any other comes last. */
const KNOWN_KEYS: ReadonlySet<string> = new Set([...HEAD.map((field) => field.key), HEAD_END, ...TAIL_KEYS])
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

/** The value `field` of the head is written with, `undefined` when the session has none. */
const headValue = (session: Session, field: HeadField): unknown => {
  const value = (session as Record<string, unknown>)[field.key]
  switch (field.value) {
    case "version":
      return SESSION_VERSION
    case "numbering":
      // a session in memory is always numbered as this mm numbers turns (`withNumbering` on read)
      return NUMBERING
    case "count":
    case "text":
      return value
    case "fork":
    case "parent": {
      if (value === undefined) return undefined
      const written: Record<string, unknown> = {}
      for (const part of partsOf(field.value)!) written[part.key] = (value as Record<string, unknown>)[part.key]
      return written
    }
    case "records":
      // the head's records are the session's `errors`
      return ((value ?? []) as Session["errors"]).map(errorFirst)
  }
}

/**
 * The file's text: the head's fields in their order (SessionHead.ts), then `messages`, then
 * `changes`, `archives` and `inProgress` (when there are any: after `messages`, so that a
 * listing never reads them), then any unknown field.
 */
export const encodeSession = (session: Session, redact: (text: string) => string = (text) => text): string => {
  const ordered: Record<string, unknown> = {}
  for (const field of HEAD) {
    const value = headValue(session, field)
    if (value !== undefined) ordered[field.key] = value
  }
  ordered[HEAD_END] = session.messages.map(messageFirst)
  if (session.changes !== undefined && session.changes.length > 0) ordered.changes = session.changes.map(changeFirst)
  if (session.archives !== undefined && session.archives.length > 0) ordered.archives = session.archives
  if (session.inProgress !== undefined) ordered.inProgress = session.inProgress
  for (const key of Object.keys(session)) {
    if (!KNOWN_KEYS.has(key)) ordered[key] = (session as Record<string, unknown>)[key]
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

const rejectionText = (id: string, rejection: Rejection): string =>
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
const shapeProblem = (error: ParseResult.ParseError): string => {
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

/** The decoder and the check, made at the first file read back (see `sessionSchemas`). */
const makeCheckers = () => {
  const { Session } = sessionSchemas()
  return {
    decodeSession: Schema.decodeUnknownEither(Session, { onExcessProperty: "preserve" }),
    isSession: Schema.is(Session)
  }
}

let checkers: ReturnType<typeof makeCheckers> | undefined

/**
 * Checking a well-formed file is several times faster than decoding it (no copy is made);
 * the full decode runs only when the check fails, to say precisely what is wrong.
 */
const acceptOrDecode = (json: unknown): Either.Either<Session, ParseResult.ParseError> => {
  const { decodeSession, isSession } = (checkers ??= makeCheckers())
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
const MAX_NESTING = 256

/** Whether the JSON text nests arrays and objects deeper than `max` levels (strings skipped). */
const nestsDeeperThan = (text: string, max: number): boolean => {
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
const fieldsProblem = (
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
    // a file written before cancelled turns counted is numbered as they are now (domain/Turns.ts)
    Either.map((session) => withNumbering(withoutMark(session.id === id ? session : { ...session, id })))
  )
}

/** The session without the file's `numbering` (decoding keeps it as an unknown field): the encoder writes it. */
const withoutMark = (session: Session): Session => {
  if (!("numbering" in session)) return session
  const { numbering: _numbering, ...rest } = session as Session & { readonly numbering?: unknown }
  return rest
}

/** What a listing shows of a decoded session: its listed head fields, a records field as its number. */
export const summaryOf = (session: Session): SessionSummary => {
  const summary: Record<string, unknown> = { id: session.id }
  for (const field of LISTED) {
    const value = field.value === "records"
      ? ((session as Record<string, unknown>)[field.key] as ReadonlyArray<unknown> | undefined ?? []).length
      : headValue(session, field)
    if (value !== undefined) summary[field.key] = value
  }
  return summary as unknown as SessionSummary
}

/** Whether a listing is of an archive (never listed as a conversation). */
export const isArchiveListing = (listing: SessionListing): boolean =>
  listing._tag === "Readable" && listing.summary.archiveOf !== undefined

/**
 * Whether a listing is of a sub-agent's conversation (`parent`): left out of what `/sessions`,
 * a bare `/resume`, `--continue` and ACP `session/list` offer, shown under its parent elsewhere.
 */
export const isSubAgentListing = (listing: SessionListing): boolean =>
  listing._tag === "Readable" && listing.summary.parent !== undefined

const readable = (summary: SessionSummary): SessionListing => ({ _tag: "Readable", summary })
export const unreadable = (id: string, reason: string): SessionListing => ({ _tag: "Unreadable", id, reason })

/** The listing of a whole file's text (the slow path: full parse and decode). */
export const listingOfText = (id: string, text: string): SessionListing =>
  Either.match(parseSession(text, id), {
    onLeft: (rejection) => unreadable(id, rejectionText(id, rejection)),
    onRight: (session) => readable(summaryOf(session))
  })

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

/**
 * The fewest bytes a question takes in a file, `{"role":"user"},`: a file of `size` bytes holds
 * at most `size / 16` of them.
 */
const QUESTION_BYTES = 16

/**
 * The listing of a file of `size` bytes from its head scan, or `undefined` when the slow path
 * must decide: as the scan says, or a head whose `turns` is more than such a file can hold (an
 * edit by hand; or a compacted conversation, whose archives hold the rest, in a small file), as
 * the file read whole says.
 */
export const listingOfScan = (id: string, scan: HeadScan, size: number): SessionListing | undefined => {
  if (scan._tag !== "Found") return undefined
  if (scan.version > SESSION_VERSION) return unreadable(id, newerVersionMessage(id, scan.version))
  if (scan.fields.turns * QUESTION_BYTES > size) return undefined
  const problem = fieldsProblem(scan.fields)
  if (problem !== undefined) return unreadable(id, problem)
  return readable({ id, ...scan.fields })
}

/** The listing of a whole text, fast when its head is in the usual order. */
export const listingOf = (id: string, text: string): SessionListing =>
  // `text.length` counts no more than its bytes, and a question takes as many characters as bytes
  (endsLikeObject(text) ? listingOfScan(id, scanHead(text, true), text.length) : undefined) ??
    listingOfText(id, text)

const CLOSE_BRACE = 125

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
