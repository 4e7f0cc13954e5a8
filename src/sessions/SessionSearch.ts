import type { Session } from "../domain/Session"
import { turnOfMessages } from "../domain/Turns"

/**
 * What `mm sessions search` and `/sessions search` look for, and where in a session they find
 * it: each line of a question, an answer or a tool's output that matches, with its turn.
 * The files are read by the stores (SearchFiles.ts for the file store).
 */

export interface SearchQuery {
  readonly pattern: string
  /** A JavaScript regular expression rather than plain text. */
  readonly regex: boolean
  /** Any case (`-i`): slower, since every file is then decoded before it is looked at. */
  readonly ignoreCase?: boolean
}

/** One matching line. `role` is the message's: user (a question), assistant (an answer), tool (a tool's output). */
export interface SearchHit {
  readonly turn: number
  readonly role: "user" | "assistant" | "tool"
  readonly line: string
}

/** The hits of one session file, newest session first. */
export interface SessionHits {
  readonly id: string
  readonly cwd: string
  readonly updatedAt: string
  readonly title: string
  /** Set when the file is a compaction's archive: the id of the session it was taken from. */
  readonly archiveOf?: string
  /** Set when the file is a sub-agent's conversation: the `task` call that ran it. */
  readonly parent?: { readonly id: string; readonly turn: number; readonly callId: string }
  readonly hits: ReadonlyArray<SearchHit>
}

/**
 * A compiled query: `mayMatch` looks at a file's raw bytes and says no quickly (plain text is
 * looked for as the file spells it, escapes and all); `test` decides on each line.
 */
export interface Matcher {
  readonly mayMatch: (raw: Buffer) => boolean
  readonly test: (line: string) => boolean
  /** Where the match starts in a matching line, to cut the line around it. */
  readonly at: (line: string) => number
}

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** How text stands inside a JSON string, as mm writes it. */
const asInJson = (text: string) => JSON.stringify(text).slice(1, -1)

const isAscii = (text: string) => /^[\u0000-\u007f]*$/.test(text)

/**
 * Plain text is looked for as written, in the raw bytes of each file (the fast path); with
 * `ignoreCase`, in any case. A regular expression is taken as written (`ignoreCase` adds the
 * `i` flag). An invalid one is the reason, in one line.
 */
export const compileQuery = (query: SearchQuery): Matcher | string => {
  const matcher = (m: Matcher): Matcher => m
  if (query.pattern === "") return "nothing to search for: give a word or a phrase"
  if (query.regex) {
    let regex: RegExp
    try {
      regex = new RegExp(query.pattern, query.ignoreCase === true ? "iu" : "u")
    } catch (cause) {
      return `not a regular expression: ${cause instanceof Error ? cause.message : String(cause)}`
    }
    // a pattern may match escaped text in many ways: every file is read whole
    return matcher({
      mayMatch: () => true,
      test: (line) => regex.test(line),
      at: (line) => Math.max(0, line.search(regex))
    })
  }
  const pattern = query.pattern
  if (query.ignoreCase !== true) {
    const bytes = Buffer.from(asInJson(pattern), "utf8")
    return matcher({
      mayMatch: (raw) => raw.indexOf(bytes) >= 0,
      test: (line) => line.includes(pattern),
      at: (line) => line.indexOf(pattern)
    })
  }
  const inLine = new RegExp(escapeRegex(pattern), "iu")
  const inFile = new RegExp(escapeRegex(asInJson(pattern)), isAscii(pattern) ? "i" : "iu")
  const encoding = isAscii(pattern) ? "latin1" : "utf8"
  return matcher({
    mayMatch: (raw) => inFile.test(raw.toString(encoding)),
    test: (line) => inLine.test(line),
    at: (line) => Math.max(0, line.search(inLine))
  })
}

/** How much of a long line is shown around the match. */
const SHOWN = 160

/** The matching line, trimmed, cut around the match when long (`…` where cut). */
export const excerpt = (line: string, at: number): string => {
  const start = line.length - line.trimStart().length
  const text = line.trim()
  const from = Math.max(0, at - start)
  if (text.length <= SHOWN) return text
  const begin = Math.max(0, Math.min(from - 40, text.length - SHOWN))
  const cut = text.slice(begin, begin + SHOWN)
  return `${begin > 0 ? "…" : ""}${cut}${begin + SHOWN < text.length ? "…" : ""}`
}

/** The lines of a session that match, oldest first (the system prompt is not searched). */
const hitsOf = (session: Session, matcher: Matcher): ReadonlyArray<SearchHit> => {
  const turns = turnOfMessages(session)
  const hits: Array<SearchHit> = []
  session.messages.forEach((message, index) => {
    if (message.role === "system" || message.content === null || message.content === "") return
    for (const line of message.content.split("\n")) {
      if (matcher.test(line)) {
        hits.push({ turn: turns[index], role: message.role, line: excerpt(line, matcher.at(line)) })
      }
    }
  })
  return hits
}

/** A session's hits with what is shown beside them; undefined when nothing matched. */
export const sessionHits = (session: Session, matcher: Matcher): SessionHits | undefined => {
  const hits = hitsOf(session, matcher)
  if (hits.length === 0) return undefined
  const archiveOf = (session as { archiveOf?: unknown }).archiveOf
  return {
    id: session.id,
    cwd: session.cwd,
    updatedAt: session.updatedAt,
    title: session.title,
    ...(typeof archiveOf === "string" ? { archiveOf } : {}),
    ...(session.parent === undefined ? {} : { parent: session.parent }),
    hits
  }
}
