import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import * as os from "node:os"
import * as path from "node:path"
import type { Scope } from "./ApprovalScope"
import { AppConfig } from "./Config"
import { ResumeError, type StoreError } from "./Domain/Errors"
import { emptySession, ERRORS_CAP, type Session, SESSION_VERSION, titleOf, withSystem } from "./Domain/Session"
import { isSessionId, validateSessionId } from "./Domain/SessionId"
import { resolveSessionRef, sessionRefProblem } from "./Domain/SessionRef"
import { ErrorLog, type Failure } from "./ErrorLog"
import type { Usage } from "./ModelClient"
import { defaultSettings, type SessionSettings } from "./SessionSettings"
import { type SessionListing, SessionStore } from "./SessionStore"

export type SaveStatus =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Saving"; readonly dir: string }
  | { readonly _tag: "NotSaved"; readonly dir: string; readonly reason: string }

export interface ResumeReport {
  readonly id: string
  readonly messages: number
  readonly title: string
  readonly errors: number
}

/**
 * The current session of a façade: the conversation in memory, written whole to its file
 * after every change when sessions are on. A failed write never stops the conversation.
 */
export interface Conversation {
  readonly cwd: string
  readonly snapshot: Effect.Effect<Session>
  /** The session's id; "" while the terminal has not asked its first question. */
  readonly id: Effect.Effect<string>
  readonly status: Effect.Effect<SaveStatus>
  /** Creates the file if it does not exist yet; returns a "not saved" warning the first time saving fails. */
  readonly ensureFile: Effect.Effect<string | undefined>
  /** Changes the session in memory, then rewrites its file; returns a warning the first time saving fails. */
  readonly update: (change: (session: Session) => Session) => Effect.Effect<string | undefined>
  /** Keeps one error record beside the conversation (creating the file if needed), then saves. */
  readonly record: (failure: Failure) => Effect.Effect<string | undefined>
  /** Terminal `/new`: the file stays as it is; the next question opens a new one. */
  readonly detach: Effect.Effect<void>
  /** ACP `/new`: the conversation so far moves to a new id, then this id starts over empty. */
  readonly archiveAndReset: Effect.Effect<string | undefined, StoreError>
  /** Terminal `/resume [id]`: this conversation becomes the stored one. Failures are recorded here. */
  readonly resume: (id: string | undefined) => Effect.Effect<ResumeReport | undefined, ResumeError>
  /** What the user allowed for the rest of this session ("always"), as scopes (ApprovalScope.ts). */
  readonly allowed: Ref.Ref<ReadonlyArray<Scope>>
  /** The last token usage the server reported, for compaction estimates. */
  readonly usage: Ref.Ref<Usage | undefined>
  /** The editor's choices for this session (approval mode, model); in memory only. */
  readonly settings: Ref.Ref<SessionSettings>
}

export type Listing =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Failed"; readonly dir: string; readonly reason: string }
  | { readonly _tag: "Listed"; readonly dir: string; readonly entries: ReadonlyArray<SessionListing> }

export interface KeeperShape {
  /** Where the sessions of a project live, or undefined when sessions are off. */
  readonly dirFor: (cwd: string) => string | undefined
  /** A new conversation. `createFile: "now"` (ACP) writes its file at once; "later" (terminal) at the first question. */
  readonly open: (cwd: string, options: { readonly createFile: "now" | "later" }) => Effect.Effect<Conversation>
  /** A stored conversation, under the current system prompt (ACP `session/load` and `session/resume`). */
  readonly load: (cwd: string, id: unknown) => Effect.Effect<Conversation, ResumeError>
  readonly list: (cwd: string) => Effect.Effect<Listing>
  /** What a person typed (full id, unique prefix, unique 8-hex suffix) → the id of one of this project's sessions. */
  readonly resolve: (cwd: string, typed: string) => Effect.Effect<string, ResumeError>
}

export class Keeper extends Context.Tag("mm/Keeper")<Keeper, KeeperShape>() {}

export const expandHome = (dir: string, home: string = os.homedir()): string =>
  dir === "~" ? home : dir.startsWith("~/") ? path.join(home, dir.slice(2)) : dir

/** What `/resume` may be given besides a full id: a prefix or suffix of one (digits, hex, dashes). */
const looksLikeRef = /^[0-9a-f-]{1,23}$/

const storeReason = (error: StoreError): string => error.message

const resumeErrorOf = (error: StoreError): ResumeError =>
  new ResumeError({
    reason:
      error.reason === "bad-id"
        ? "bad-id"
        : error.reason === "not-found"
          ? "not-found"
          : error.reason === "newer-version"
            ? "newer-version"
            : "unreadable",
    message:
      error.reason === "not-found" && error.id !== undefined ? `no session ${error.id} in this project` : error.message,
    raw: error.raw
  })

export const KeeperLive = Layer.effect(
  Keeper,
  Effect.gen(function* () {
    const { config } = yield* AppConfig
    const store = yield* SessionStore
    const errorLog = yield* ErrorLog

    const dirFor = (cwd: string): string | undefined =>
      config.sessions.enabled ? path.resolve(cwd, expandHome(config.sessions.dir)) : undefined

    /** With one store shared by every project (an absolute dir), a project sees only its own sessions. */
    const shared = path.isAbsolute(expandHome(config.sessions.dir))
    const ofProject = (cwd: string) => (entry: SessionListing) =>
      !shared || entry._tag === "Unreadable" || path.resolve(entry.summary.cwd) === path.resolve(cwd)

    /**
     * A session is bound to the project in its file: from a shared store, another project's is
     * refused (its tools would run here while its file says there). A project's own store holds
     * only its sessions, wherever the project has moved since.
     */
    const ownedBy = (cwd: string) => (session: Session): Effect.Effect<Session, ResumeError> =>
      !shared || path.resolve(session.cwd) === path.resolve(cwd)
        ? Effect.succeed(session)
        : Effect.fail(
            new ResumeError({
              reason: "other-project",
              message: `session ${session.id} belongs to ${session.cwd}`,
              raw: `session cwd ${session.cwd}, asked from ${cwd}`
            })
          )

    /** A stored session continues under the agent's current system prompt. */
    const underCurrentSystem = (session: Session): Session => ({
      ...session,
      messages: withSystem(session.messages, config.system)
    })

    /** A unique prefix or 8-hex suffix of an id of this project, among its listed sessions, newest update first. */
    const resolveRefIn = (dir: string, cwd: string, typed: string) =>
      Effect.gen(function* () {
        const listed = yield* store.list(dir).pipe(Effect.mapError(resumeErrorOf))
        const ids = listed
          .filter(ofProject(cwd))
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

    const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms))

    /**
     * `terminal`: the terminal's id comes with its file, so a file that could not be created is
     * tried again at the next change, and a conflict moves this conversation to a new id. An
     * editor already holds its id: neither happens there.
     */
    const make = (cwd: string, initial: Session, exists: boolean, initialStatus: SaveStatus, terminal = false) =>
      Effect.gen(function* () {
        const state = yield* Ref.make(initial)
        const hasFile = yield* Ref.make(exists)
        const status = yield* Ref.make<SaveStatus>(initialStatus)
        const lock = yield* Effect.makeSemaphore(1)
        const allowed = yield* Ref.make<ReadonlyArray<Scope>>([])
        const usage = yield* Ref.make<Usage | undefined>(undefined)
        const settings = yield* Ref.make<SessionSettings>(defaultSettings)
        /** The `updatedAt` of the file as this conversation last read or wrote it. */
        const written = yield* Ref.make<string | undefined>(exists ? initial.updatedAt : undefined)

        /** A failed write: said once when saving stops working, and tried again at the next change. */
        const failed = (dir: string, error: StoreError) =>
          Effect.gen(function* () {
            const before = yield* Ref.get(status)
            yield* Ref.set(status, { _tag: "NotSaved", dir, reason: storeReason(error) })
            return before._tag === "Saving" ? `not saved (${storeReason(error)})` : undefined
          })

        const succeeded = (dir: string) =>
          Effect.gen(function* () {
            const before = yield* Ref.get(status)
            yield* Ref.set(status, { _tag: "Saving", dir })
            return before._tag === "NotSaved" ? `saved again under ${dir}` : undefined
          })

        const forkOnConflict = terminal

        const createNow: Effect.Effect<string | undefined> = Effect.gen(function* () {
          const current = yield* Ref.get(status)
          if (current._tag === "Off" || (yield* Ref.get(hasFile))) return undefined
          if (current._tag === "NotSaved" && !terminal) return undefined
          const created = yield* Effect.either(store.createNew(current.dir, cwd))
          if (created._tag === "Left") return yield* failed(current.dir, created.left)
          const session = yield* Ref.get(state)
          yield* Ref.set(state, { ...session, id: created.right.id, createdAt: created.right.createdAt })
          yield* Ref.set(written, created.right.updatedAt)
          yield* Ref.set(hasFile, true)
          const again = yield* succeeded(current.dir)
          // what happened before the file could be made is written now
          const held = yield* Ref.get(state)
          if (held.messages.length + held.errors.length === 0) return again
          return (yield* saveNow) ?? again
        })

        /**
         * Another process wrote this session's file since we last did. Nothing is overwritten:
         * the terminal carries on under a new id; an editor thread keeps its id (the editor owns
         * it), and the other version is kept under a new id instead.
         */
        const resolveConflict = (dir: string) =>
          Effect.gen(function* () {
            const session = yield* Ref.get(state)
            if (forkOnConflict) {
              const forked = yield* store.archive(dir, session)
              yield* Ref.set(state, forked)
              yield* Ref.set(written, forked.updatedAt)
              return `session ${session.id} was changed by another mm; this conversation continues as ${forked.id}`
            }
            const theirs = yield* store.load(dir, session.id)
            const kept = yield* store.archive(dir, theirs)
            yield* store.save(dir, session)
            yield* Ref.set(written, session.updatedAt)
            return `session ${session.id} was changed by another mm; that version was kept as ${kept.id}`
          })

        const saveNow: Effect.Effect<string | undefined> = Effect.gen(function* () {
          const current = yield* Ref.get(status)
          if (current._tag === "Off" || !(yield* Ref.get(hasFile))) return undefined
          const session = yield* Ref.get(state)
          const saved = yield* Effect.either(store.save(current.dir, session, yield* Ref.get(written)))
          if (saved._tag === "Right") {
            yield* Ref.set(written, session.updatedAt)
            return yield* succeeded(current.dir)
          }
          if (saved.left.reason === "newer-version" && forkOnConflict && session.version <= SESSION_VERSION) {
            // a newer mm rewrote the file meanwhile: this mm cannot write it any more, so it goes on elsewhere
            const forked = yield* Effect.either(store.archive(current.dir, session))
            if (forked._tag === "Left") return yield* failed(current.dir, forked.left)
            yield* Ref.set(state, forked.right)
            yield* Ref.set(written, forked.right.updatedAt)
            return (
              (yield* succeeded(current.dir)) ??
              `session ${session.id} was rewritten by a newer mm; this conversation continues as ${forked.right.id}`
            )
          }
          if (saved.left.reason !== "conflict") return yield* failed(current.dir, saved.left)
          const resolved = yield* Effect.either(resolveConflict(current.dir))
          if (resolved._tag === "Left") return yield* failed(current.dir, resolved.left)
          return (yield* succeeded(current.dir)) ?? resolved.right
        })

        const stamp = (session: Session) => Effect.map(now, (date) => ({ ...session, updatedAt: date.toISOString() }))

        const update = (change: (session: Session) => Session) =>
          lock.withPermits(1)(
            Effect.gen(function* () {
              const changed = yield* stamp(change(yield* Ref.get(state)))
              yield* Ref.set(state, changed)
              return yield* saveNow
            })
          )

        const ensureFile = lock.withPermits(1)(createNow)

        const record = (failure: Failure) =>
          lock.withPermits(1)(
            Effect.gen(function* () {
              // a failed /resume alone leaves no file: its record waits for the conversation that goes on
              if (terminal && failure.kind === "resume" && !(yield* Ref.get(hasFile))) {
                yield* Ref.set(state, yield* stamp(yield* errorLog.append(yield* Ref.get(state), failure)))
                return undefined
              }
              const created = yield* createNow
              const withRecord = yield* errorLog.append(yield* Ref.get(state), failure)
              // a first question that failed still names the session
              const titled =
                withRecord.title === "" && failure.kind === "generation" ? { ...withRecord, title: titleOf(failure.question) } : withRecord
              yield* Ref.set(state, yield* stamp(titled))
              return created ?? (yield* saveNow)
            })
          )

        const detach = lock.withPermits(1)(
          Effect.gen(function* () {
            const held = (yield* Ref.get(hasFile)) ? [] : (yield* Ref.get(state)).errors
            yield* Ref.set(state, { ...emptySession("", cwd, yield* now), errors: held })
            yield* Ref.set(hasFile, false)
            yield* Ref.set(allowed, [])
            yield* Ref.set(usage, undefined)
          })
        )

        const archiveAndReset = lock.withPermits(1)(
          Effect.gen(function* () {
            const current = yield* Ref.get(status)
            const session = yield* Ref.get(state)
            let archived: string | undefined
            if (current._tag === "Saving" && (yield* Ref.get(hasFile)) && session.messages.length + session.errors.length > 0) {
              archived = (yield* store.archive(current.dir, session)).id
            }
            const fresh = { ...emptySession(session.id, cwd, yield* now) }
            yield* Ref.set(state, fresh)
            yield* Ref.set(usage, undefined)
            yield* saveNow
            return archived
          })
        )

        const resolveRef = (dir: string, typed: string) => resolveRefIn(dir, cwd, typed)

        const resume = (requested: string | undefined): Effect.Effect<ResumeReport | undefined, ResumeError> =>
          Effect.gen(function* () {
            const current = yield* Ref.get(status)
            if (current._tag === "Off") {
              return yield* new ResumeError({
                reason: "disabled",
                message: "sessions are off — set sessions.enabled: true in agent.yaml to keep and resume conversations",
                raw: ""
              })
            }
            const dir = current.dir
            const currentId = (yield* Ref.get(state)).id
            let id: string
            if (requested === undefined) {
              const listed = yield* Effect.either(store.list(dir))
              if (listed._tag === "Left") return yield* resumeErrorOf(listed.left)
              const candidates = listed.right.filter(ofProject(cwd)).flatMap((entry) =>
                entry._tag === "Readable" && entry.summary.id !== currentId && entry.summary.turns > 0 ? [entry.summary] : []
              )
              if (candidates.length === 0) return undefined
              id = candidates.reduce((best, s) => (s.updatedAt > best.updatedAt ? s : best)).id
            } else if (isSessionId(requested) || !looksLikeRef.test(requested)) {
              id = yield* validateSessionId(requested).pipe(
                Effect.mapError((e) => new ResumeError({ reason: "bad-id", message: e.message, raw: requested.slice(0, 200) }))
              )
            } else {
              id = yield* resolveRef(dir, requested)
            }
            const loaded = yield* store.load(dir, id).pipe(Effect.mapError(resumeErrorOf), Effect.flatMap(ownedBy(cwd)))
            yield* lock.withPermits(1)(
              Effect.gen(function* () {
                // records of failures before this launch had a file go on with the resumed conversation
                const held = (yield* Ref.get(hasFile)) ? [] : (yield* Ref.get(state)).errors
                yield* Ref.set(state, { ...underCurrentSystem(loaded), errors: [...loaded.errors, ...held].slice(-ERRORS_CAP) })
                yield* Ref.set(written, loaded.updatedAt)
                yield* Ref.set(hasFile, true)
                yield* Ref.set(usage, undefined)
                yield* Ref.set(allowed, [])
                if (held.length === 0) return
                // a failed save is said and tried again at the next change
                yield* Ref.set(state, yield* stamp(yield* Ref.get(state)))
                yield* saveNow
              })
            )
            return {
              id: loaded.id,
              messages: loaded.messages.filter((m) => m.role !== "system").length,
              title: loaded.title,
              errors: loaded.errors.length
            }
          }).pipe(
            Effect.tapError((error) =>
              record({ kind: "resume", line: error.message, raw: error.raw, question: `/resume${requested === undefined ? "" : ` ${requested}`}` })
            )
          )

        const conversation: Conversation = {
          cwd,
          snapshot: Ref.get(state),
          id: Effect.map(Ref.get(state), (s) => s.id),
          status: Ref.get(status),
          ensureFile,
          update,
          record,
          detach,
          archiveAndReset,
          resume,
          allowed,
          usage,
          settings
        }
        return conversation
      })

    const open = (cwd: string, options: { readonly createFile: "now" | "later" }) =>
      Effect.gen(function* () {
        const dir = dirFor(cwd)
        const fresh = emptySession("", cwd, yield* now)
        if (dir === undefined) return yield* make(cwd, fresh, false, { _tag: "Off" })
        const prepared = yield* Effect.either(store.prepare(dir))
        const retryCreate = options.createFile === "later"
        if (prepared._tag === "Left") {
          return yield* make(cwd, fresh, false, { _tag: "NotSaved", dir, reason: storeReason(prepared.left) }, retryCreate)
        }
        const conversation = yield* make(cwd, fresh, false, { _tag: "Saving", dir }, retryCreate)
        if (options.createFile === "now") yield* conversation.ensureFile
        return conversation
      })

    const load = (cwd: string, rawId: unknown) =>
      Effect.gen(function* () {
        const id = yield* validateSessionId(rawId).pipe(
          Effect.mapError((e) => new ResumeError({ reason: "bad-id", message: e.message, raw: String(rawId).slice(0, 200) }))
        )
        const dir = dirFor(cwd)
        if (dir === undefined) {
          return yield* new ResumeError({ reason: "disabled", message: "sessions are off (sessions.enabled: false)", raw: "" })
        }
        const loaded = yield* store.load(dir, id).pipe(Effect.mapError(resumeErrorOf), Effect.flatMap(ownedBy(cwd)))
        return yield* make(cwd, underCurrentSystem(loaded), true, { _tag: "Saving", dir })
      })

    const list = (cwd: string): Effect.Effect<Listing> => {
      const dir = dirFor(cwd)
      if (dir === undefined) return Effect.succeed({ _tag: "Off" })
      return store.list(dir).pipe(
        Effect.map((entries): Listing => ({ _tag: "Listed", dir, entries: entries.filter(ofProject(cwd)) })),
        Effect.catchAll((error) => Effect.succeed<Listing>({ _tag: "Failed", dir, reason: storeReason(error) }))
      )
    }

    /** The command line's `--resume ID`, `mm sessions show|rm ID`: nothing is recorded anywhere. */
    const resolve = (cwd: string, typed: string): Effect.Effect<string, ResumeError> =>
      Effect.gen(function* () {
        const dir = dirFor(cwd)
        if (dir === undefined) {
          return yield* new ResumeError({
            reason: "disabled",
            message: "sessions are off — set sessions.enabled: true in agent.yaml to keep and resume conversations",
            raw: ""
          })
        }
        const text = typed.trim()
        if (isSessionId(text as unknown) || !looksLikeRef.test(text)) {
          return yield* validateSessionId(text).pipe(
            Effect.mapError((e) => new ResumeError({ reason: "bad-id", message: e.message, raw: text.slice(0, 200) }))
          )
        }
        return yield* resolveRefIn(dir, cwd, text)
      })

    return { dirFor, open, load, list, resolve }
  })
)
