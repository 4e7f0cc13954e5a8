import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { AgentConfig } from "../config/Config"
import { ResumeError, type StoreError } from "../domain/Errors"
import { type Session, withSystem } from "../domain/Session"
import { isSessionId, validateSessionId } from "../domain/SessionId"
import { resolveSessionRef, sessionRefProblem } from "../domain/SessionRef"
import type { ErrorLogShape } from "./ErrorLog"
import { closeInterrupted, liveLine, liveWriter, wasInterrupted } from "./Interrupted"
import type { SessionListing, SessionStoreShape } from "./SessionStore"

/**
 * Finding the Keeper's sessions: where a project's sessions live, whose a stored one is, and
 * which one a person means by what they typed.
 */

const expandHome = (dir: string, home: string = os.homedir()): string =>
  dir === "~" ? home : dir.startsWith("~/") ? path.join(home, dir.slice(2)) : dir

/** What `/resume` may be given besides a full id: a prefix or suffix of one (digits, hex, dashes). */
const looksLikeRef = /^[0-9a-f-]{1,23}$/

export const storeReason = (error: StoreError): string => error.message

const resumeErrorOf = (error: StoreError): ResumeError =>
  new ResumeError({
    reason: error.reason === "bad-id"
      ? "bad-id"
      : error.reason === "not-found"
      ? "not-found"
      : error.reason === "newer-version"
      ? "newer-version"
      : "unreadable",
    message: error.reason === "not-found" && error.id !== undefined
      ? `no session ${error.id} in this project`
      : error.message,
    raw: error.raw
  })

/** The layer's services, as the functions below need them. */
export interface Deps {
  readonly config: AgentConfig
  readonly store: SessionStoreShape
  readonly errorLog: ErrorLogShape
  /** With one store shared by every project (an absolute dir), a project sees only its own sessions. */
  readonly shared: boolean
}

// ---- where sessions live, and whose they are ----

export const sessionsDir = (config: AgentConfig, cwd: string): string | undefined =>
  config.sessions.enabled ? path.resolve(cwd, expandHome(config.sessions.dir)) : undefined

export const isSharedStore = (config: AgentConfig): boolean => path.isAbsolute(expandHome(config.sessions.dir))

export const ofProject = (deps: Deps, cwd: string) => (entry: SessionListing) =>
  !deps.shared || entry._tag === "Unreadable" || path.resolve(entry.summary.cwd) === path.resolve(cwd)

/**
 * A session is bound to the project in its file: from a shared store, another project's is
 * refused (its tools would run here while its file says there). A project's own store holds
 * only its sessions, wherever the project has moved since.
 */
const ownedBy = (deps: Deps, cwd: string) => (session: Session): Effect.Effect<Session, ResumeError> =>
  !deps.shared || path.resolve(session.cwd) === path.resolve(cwd)
    ? Effect.succeed(session)
    : Effect.fail(
      new ResumeError({
        reason: "other-project",
        message: `session ${session.id} belongs to ${session.cwd}`,
        raw: `session cwd ${session.cwd}, asked from ${cwd}`
      })
    )

const loadOwned = (deps: Deps, dir: string, cwd: string, id: string): Effect.Effect<Session, ResumeError> =>
  deps.store.load(dir, id).pipe(Effect.mapError(resumeErrorOf), Effect.flatMap(ownedBy(deps, cwd)))

/** A stored session, and the question of the turn it was answering when mm stopped, if any. */
interface Loaded {
  readonly session: Session
  readonly interrupted: string | undefined
}

/** Refused: another mm is answering the session's turn (Interrupted.ts `liveWriter`). */
const answeredElsewhere = (session: Session, pid: number) =>
  new ResumeError({
    reason: "live",
    message: liveLine(session.id, pid),
    raw: `inProgress.by ${JSON.stringify(session.inProgress?.by)}`
  })

/**
 * A stored session of the project with a turn left in progress closed (Interrupted.ts), the
 * closed version written back so that the closing is recorded once. When that write fails,
 * the session is closed in memory only and written with the next change. A turn another mm
 * is still answering is refused, and nothing is written.
 */
export const loadClosed = (deps: Deps, dir: string, cwd: string, id: string): Effect.Effect<Loaded, ResumeError> =>
  Effect.gen(function*() {
    const loaded = yield* loadOwned(deps, dir, cwd, id)
    if (loaded.inProgress === undefined) return { session: loaded, interrupted: undefined }
    const live = liveWriter(loaded)
    if (live !== undefined) return yield* answeredElsewhere(loaded, live)
    const now = new Date(yield* Effect.clockWith((clock) => clock.currentTimeMillis))
    const closed = closeInterrupted(loaded, now)
    const saved = yield* Effect.either(deps.store.save(dir, closed.session, loaded.updatedAt))
    const session = saved._tag === "Right" ? closed.session : { ...closed.session, updatedAt: loaded.updatedAt }
    return { session, interrupted: closed.question }
  })

/** A stored session continues under the agent's current system prompt. */
export const underCurrentSystem = (config: AgentConfig, session: Session): Session => ({
  ...session,
  messages: withSystem(session.messages, config.system)
})

export const sessionsOff = () =>
  new ResumeError({
    reason: "disabled",
    message: "sessions are off (sessions.enabled: false): no conversation is kept",
    raw: ""
  })

// ---- what a person typed → a session id ----

export const validId = (raw: unknown): Effect.Effect<string, ResumeError> =>
  validateSessionId(raw).pipe(
    Effect.mapError((e) => new ResumeError({ reason: "bad-id", message: e.message, raw: String(raw).slice(0, 200) }))
  )

/** A unique prefix or 8-hex suffix of an id of this project, among its listed sessions, newest update first. */
const resolveRefIn = (deps: Deps, dir: string, cwd: string, typed: string) =>
  Effect.gen(function*() {
    const listed = yield* deps.store.list(dir).pipe(Effect.mapError(resumeErrorOf))
    const ids = listed
      .filter(ofProject(deps, cwd))
      .flatMap((entry) => (entry._tag === "Readable" ? [entry.summary] : []))
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1))
      .map((s) => s.id)
    const ref = resolveSessionRef(typed, ids)
    if (ref._tag === "Found") return ref.id
    return yield* new ResumeError({
      reason: ref._tag === "Ambiguous" ? "ambiguous" : "not-found",
      message: sessionRefProblem(ref),
      raw: ""
    })
  })

/** A full id is checked as it is; anything shaped like part of one is looked up among the project's sessions. */
export const idOfTyped = (deps: Deps, dir: string, cwd: string, typed: string): Effect.Effect<string, ResumeError> =>
  isSessionId(typed) || !looksLikeRef.test(typed) ? validId(typed) : resolveRefIn(deps, dir, cwd, typed)

/** Whether the stored session's last turn was interrupted (Interrupted.ts); an unreadable one was not. */
const interruptedOnDisk = (deps: Deps, dir: string, id: string): Effect.Effect<boolean> =>
  Effect.map(
    Effect.either(deps.store.load(dir, id)),
    (loaded) => loaded._tag === "Right" && wasInterrupted(loaded.right)
  )

/**
 * `/resume` alone, `--continue`: the project's most recently updated session with a turn, other
 * than this one and other than a sub-agent's. A session whose only question mm stopped during counts too (the question left
 * `messages` if no tool ran), so that it is the one continued; one whose only question failed,
 * or that was never asked one, does not. Only sessions newer than the newest with a turn, and
 * titled by a question, are read to tell.
 */
export const latestOther = (deps: Deps, dir: string, cwd: string, currentId: string) =>
  Effect.gen(function*() {
    const listed = yield* deps.store.list(dir).pipe(Effect.mapError(resumeErrorOf))
    // a sub-agent's conversation is part of its parent's: never the one continued
    const others = listed.filter(ofProject(deps, cwd)).flatMap((entry) =>
      entry._tag === "Readable" && entry.summary.id !== currentId && entry.summary.parent === undefined
        ? [entry.summary]
        : []
    )
    const withTurn = others.filter((s) => s.turns > 0)
    const best = withTurn.length === 0
      ? undefined
      : withTurn.reduce((newest, s) => (s.updatedAt > newest.updatedAt ? s : newest))
    const newer = others
      .filter((s) => s.turns === 0 && s.title !== "" && (best === undefined || s.updatedAt > best.updatedAt))
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : -1))
    for (const summary of newer) {
      if (yield* interruptedOnDisk(deps, dir, summary.id)) return summary.id
    }
    return best?.id
  })
