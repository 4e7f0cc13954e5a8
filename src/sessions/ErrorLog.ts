import * as Clock from "effect/Clock"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { appendError, type ErrorKind, type ErrorRecord, type Session } from "../domain/Session"
import { firstLine } from "../lib/OneLine"

/** What a red line was about: the failure shown, and the question being answered then. */
export interface Failure {
  readonly kind: ErrorKind
  readonly line: string
  readonly raw: string
  readonly question: string
}

export interface ErrorLogShape {
  /** The session with one more record in `errors` (capped, oldest out first). */
  readonly append: (session: Session, failure: Failure) => Effect.Effect<Session>
}

export class ErrorLog extends Context.Tag("mm/ErrorLog")<ErrorLog, ErrorLogShape>() {}

const makeRecord = (session: Session, failure: Failure, at: Date): ErrorRecord => {
  const record: { -readonly [K in keyof ErrorRecord]: ErrorRecord[K] } = {
    kind: failure.kind,
    at: at.toISOString(),
    turns: session.turns,
    question: firstLine(failure.question),
    line: failure.line
  }
  if (saysMore(failure.raw, failure.line)) record.raw = failure.raw
  return record
}

/** A raw error is kept only when it says more than the line shown (not the line again, with or without an error name). */
export const saysMore = (raw: string, line: string): boolean => {
  const core = raw.trim().replace(/^[A-Za-z]*Error:\s*/, "")
  return core !== "" && !line.includes(core)
}

/** Appends a failure to a session's capped `errors`. */
export const errorLog = ErrorLog.of({
  append: (session, failure) =>
    Effect.map(Clock.currentTimeMillis, (now) => ({
      ...session,
      errors: appendError(session.errors, makeRecord(session, failure, new Date(now)))
    }))
})
