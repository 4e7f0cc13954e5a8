import * as os from "node:os"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"

import type { Scope } from "../approvals/ApprovalScope"
import { defaultSettings, type SessionSettings } from "../approvals/SessionSettings"
import { type AgentConfig, AppConfig } from "../config/Config"
import { ResumeError, type StoreError } from "../domain/Errors"
import { emptySession, ERRORS_CAP, type Session, SESSION_VERSION, titleOf, withSystem } from "../domain/Session"
import { isSessionId, validateSessionId } from "../domain/SessionId"
import { resolveSessionRef, sessionRefProblem } from "../domain/SessionRef"
import type { Usage } from "../model/ModelClient"
import { ErrorLog, type ErrorLogShape, type Failure } from "./ErrorLog"
import { type SessionListing, SessionStore, type SessionStoreShape } from "./SessionStore"

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
interface Deps {
  readonly config: AgentConfig
  readonly store: SessionStoreShape
  readonly errorLog: ErrorLogShape
  /** With one store shared by every project (an absolute dir), a project sees only its own sessions. */
  readonly shared: boolean
}

// ---- where sessions live, and whose they are ----

const sessionsDir = (config: AgentConfig, cwd: string): string | undefined =>
  config.sessions.enabled ? path.resolve(cwd, expandHome(config.sessions.dir)) : undefined

const isSharedStore = (config: AgentConfig): boolean => path.isAbsolute(expandHome(config.sessions.dir))

const ofProject = (deps: Deps, cwd: string) => (entry: SessionListing) =>
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

/** A stored session continues under the agent's current system prompt. */
const underCurrentSystem = (config: AgentConfig, session: Session): Session => ({
  ...session,
  messages: withSystem(session.messages, config.system)
})

const sessionsOff = () =>
  new ResumeError({
    reason: "disabled",
    message: "sessions are off — set sessions.enabled: true in agent.yaml to keep and resume conversations",
    raw: ""
  })

// ---- what a person typed → a session id ----

const validId = (raw: unknown): Effect.Effect<string, ResumeError> =>
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
const idOfTyped = (deps: Deps, dir: string, cwd: string, typed: string): Effect.Effect<string, ResumeError> =>
  isSessionId(typed) || !looksLikeRef.test(typed) ? validId(typed) : resolveRefIn(deps, dir, cwd, typed)

/** `/resume` alone: the project's most recently updated session with a turn, other than this one. */
const latestOther = (deps: Deps, dir: string, cwd: string, currentId: string) =>
  Effect.gen(function*() {
    const listed = yield* deps.store.list(dir).pipe(Effect.mapError(resumeErrorOf))
    const candidates = listed.filter(ofProject(deps, cwd)).flatMap((entry) =>
      entry._tag === "Readable" && entry.summary.id !== currentId && entry.summary.turns > 0 ? [entry.summary] : []
    )
    if (candidates.length === 0) return undefined
    return candidates.reduce((best, s) => (s.updatedAt > best.updatedAt ? s : best)).id
  })

// ---- the conversation handle ----

const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms))

const stamp = (session: Session) => Effect.map(now, (date) => ({ ...session, updatedAt: date.toISOString() }))

/** What one conversation holds in memory; every change to it takes `lock`. */
interface Cells {
  readonly cwd: string
  /**
   * The terminal's id comes with its file, so a file that could not be created is tried again
   * at the next change, and a conflict moves this conversation to a new id. An editor already
   * holds its id: neither happens there.
   */
  readonly terminal: boolean
  readonly state: Ref.Ref<Session>
  readonly hasFile: Ref.Ref<boolean>
  readonly status: Ref.Ref<SaveStatus>
  readonly lock: Effect.Semaphore
  readonly allowed: Ref.Ref<ReadonlyArray<Scope>>
  readonly usage: Ref.Ref<Usage | undefined>
  readonly settings: Ref.Ref<SessionSettings>
  /** The `updatedAt` of the file as this conversation last read or wrote it. */
  readonly written: Ref.Ref<string | undefined>
}

interface Start {
  readonly cwd: string
  readonly session: Session
  /** Whether `session` was read from its file. */
  readonly onDisk: boolean
  readonly status: SaveStatus
  readonly terminal?: boolean
}

const makeCells = (start: Start): Effect.Effect<Cells> =>
  Effect.gen(function*() {
    return {
      cwd: start.cwd,
      terminal: start.terminal ?? false,
      state: yield* Ref.make(start.session),
      hasFile: yield* Ref.make(start.onDisk),
      status: yield* Ref.make<SaveStatus>(start.status),
      lock: yield* Effect.makeSemaphore(1),
      allowed: yield* Ref.make<ReadonlyArray<Scope>>([]),
      usage: yield* Ref.make<Usage | undefined>(undefined),
      settings: yield* Ref.make<SessionSettings>(defaultSettings),
      written: yield* Ref.make<string | undefined>(start.onDisk ? start.session.updatedAt : undefined)
    }
  })

/** A failed write: said once when saving stops working, and tried again at the next change. */
const failed = (cells: Cells, dir: string, error: StoreError) =>
  Effect.gen(function*() {
    const before = yield* Ref.get(cells.status)
    yield* Ref.set(cells.status, { _tag: "NotSaved", dir, reason: storeReason(error) })
    return before._tag === "Saving" ? `not saved (${storeReason(error)})` : undefined
  })

const succeeded = (cells: Cells, dir: string) =>
  Effect.gen(function*() {
    const before = yield* Ref.get(cells.status)
    yield* Ref.set(cells.status, { _tag: "Saving", dir })
    return before._tag === "NotSaved" ? `saved again under ${dir}` : undefined
  })

/**
 * Another process wrote this session's file since we last did. Nothing is overwritten:
 * the terminal carries on under a new id; an editor thread keeps its id (the editor owns
 * it), and the other version is kept under a new id instead.
 */
const resolveConflict = (deps: Deps, cells: Cells, dir: string) =>
  Effect.gen(function*() {
    const { state, written } = cells
    const session = yield* Ref.get(state)
    if (cells.terminal) {
      const forked = yield* deps.store.archive(dir, session)
      yield* Ref.set(state, forked)
      yield* Ref.set(written, forked.updatedAt)
      return `session ${session.id} was changed by another mm; this conversation continues as ${forked.id}`
    }
    const theirs = yield* deps.store.load(dir, session.id)
    const kept = yield* deps.store.archive(dir, theirs)
    yield* deps.store.save(dir, session)
    yield* Ref.set(written, session.updatedAt)
    return `session ${session.id} was changed by another mm; that version was kept as ${kept.id}`
  })

/** Rewrites the file, if there is one, with the conversation in memory. */
const saveNow = (deps: Deps, cells: Cells): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    const { state, written } = cells
    const current = yield* Ref.get(cells.status)
    if (current._tag === "Off" || !(yield* Ref.get(cells.hasFile))) return undefined
    const session = yield* Ref.get(state)
    const saved = yield* Effect.either(deps.store.save(current.dir, session, yield* Ref.get(written)))
    if (saved._tag === "Right") {
      yield* Ref.set(written, session.updatedAt)
      return yield* succeeded(cells, current.dir)
    }
    if (saved.left.reason === "newer-version" && cells.terminal && session.version <= SESSION_VERSION) {
      // a newer mm rewrote the file meanwhile: this mm cannot write it any more, so it goes on elsewhere
      const forked = yield* Effect.either(deps.store.archive(current.dir, session))
      if (forked._tag === "Left") return yield* failed(cells, current.dir, forked.left)
      yield* Ref.set(state, forked.right)
      yield* Ref.set(written, forked.right.updatedAt)
      return (
        (yield* succeeded(cells, current.dir)) ??
          `session ${session.id} was rewritten by a newer mm; this conversation continues as ${forked.right.id}`
      )
    }
    if (saved.left.reason !== "conflict") return yield* failed(cells, current.dir, saved.left)
    const resolved = yield* Effect.either(resolveConflict(deps, cells, current.dir))
    if (resolved._tag === "Left") return yield* failed(cells, current.dir, resolved.left)
    return (yield* succeeded(cells, current.dir)) ?? resolved.right
  })

/** Creates the file if the conversation has none yet (and may have one), then writes what it holds. */
const createNow = (deps: Deps, cells: Cells): Effect.Effect<string | undefined> =>
  Effect.gen(function*() {
    const { state } = cells
    const current = yield* Ref.get(cells.status)
    if (current._tag === "Off" || (yield* Ref.get(cells.hasFile))) return undefined
    if (current._tag === "NotSaved" && !cells.terminal) return undefined
    const created = yield* Effect.either(deps.store.createNew(current.dir, cells.cwd))
    if (created._tag === "Left") return yield* failed(cells, current.dir, created.left)
    const session = yield* Ref.get(state)
    yield* Ref.set(state, { ...session, id: created.right.id, createdAt: created.right.createdAt })
    yield* Ref.set(cells.written, created.right.updatedAt)
    yield* Ref.set(cells.hasFile, true)
    const again = yield* succeeded(cells, current.dir)
    // what happened before the file could be made is written now
    const held = yield* Ref.get(state)
    if (held.messages.length + held.errors.length === 0) return again
    return (yield* saveNow(deps, cells)) ?? again
  })

const ensureFile = (deps: Deps, cells: Cells) => cells.lock.withPermits(1)(createNow(deps, cells))

const update = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.update")(function*(change: (session: Session) => Session) {
    const changed = yield* stamp(change(yield* Ref.get(cells.state)))
    yield* Ref.set(cells.state, changed)
    return yield* saveNow(deps, cells)
  }, cells.lock.withPermits(1))

const record = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.record")(function*(failure: Failure) {
    const { state } = cells
    // a failed /resume alone leaves no file: its record waits for the conversation that goes on
    if (cells.terminal && failure.kind === "resume" && !(yield* Ref.get(cells.hasFile))) {
      yield* Ref.set(state, yield* stamp(yield* deps.errorLog.append(yield* Ref.get(state), failure)))
      return undefined
    }
    const created = yield* createNow(deps, cells)
    const withRecord = yield* deps.errorLog.append(yield* Ref.get(state), failure)
    // a first question that failed still names the session
    const titled = withRecord.title === "" && failure.kind === "generation"
      ? { ...withRecord, title: titleOf(failure.question) }
      : withRecord
    yield* Ref.set(state, yield* stamp(titled))
    return created ?? (yield* saveNow(deps, cells))
  }, cells.lock.withPermits(1))

const detach = (cells: Cells) =>
  cells.lock.withPermits(1)(
    Effect.gen(function*() {
      const held = (yield* Ref.get(cells.hasFile)) ? [] : (yield* Ref.get(cells.state)).errors
      yield* Ref.set(cells.state, { ...emptySession("", cells.cwd, yield* now), errors: held })
      yield* Ref.set(cells.hasFile, false)
      yield* Ref.set(cells.allowed, [])
      yield* Ref.set(cells.usage, undefined)
    })
  )

const archiveAndReset = (deps: Deps, cells: Cells) =>
  cells.lock.withPermits(1)(
    Effect.gen(function*() {
      const current = yield* Ref.get(cells.status)
      const session = yield* Ref.get(cells.state)
      let archived: string | undefined
      if (
        current._tag === "Saving" && (yield* Ref.get(cells.hasFile)) &&
        session.messages.length + session.errors.length > 0
      ) {
        archived = (yield* deps.store.archive(current.dir, session)).id
      }
      const fresh = { ...emptySession(session.id, cells.cwd, yield* now) }
      yield* Ref.set(cells.state, fresh)
      yield* Ref.set(cells.usage, undefined)
      yield* saveNow(deps, cells)
      return archived
    })
  )

/** This conversation becomes the stored one `loaded`. */
const adopt = (deps: Deps, cells: Cells, loaded: Session) =>
  cells.lock.withPermits(1)(
    Effect.gen(function*() {
      const { state } = cells
      // records of failures before this launch had a file go on with the resumed conversation
      const held = (yield* Ref.get(cells.hasFile)) ? [] : (yield* Ref.get(state)).errors
      yield* Ref.set(state, {
        ...underCurrentSystem(deps.config, loaded),
        errors: [...loaded.errors, ...held].slice(-ERRORS_CAP)
      })
      yield* Ref.set(cells.written, loaded.updatedAt)
      yield* Ref.set(cells.hasFile, true)
      yield* Ref.set(cells.usage, undefined)
      yield* Ref.set(cells.allowed, [])
      if (held.length === 0) return
      // a failed save is said and tried again at the next change
      yield* Ref.set(state, yield* stamp(yield* Ref.get(state)))
      yield* saveNow(deps, cells)
    })
  )

const reportOf = (loaded: Session): ResumeReport => ({
  id: loaded.id,
  messages: loaded.messages.filter((m) => m.role !== "system").length,
  title: loaded.title,
  errors: loaded.errors.length
})

const resume = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.resume")(
    function*(requested: string | undefined) {
      const current = yield* Ref.get(cells.status)
      if (current._tag === "Off") return yield* sessionsOff()
      const id = requested === undefined
        ? yield* latestOther(deps, current.dir, cells.cwd, (yield* Ref.get(cells.state)).id)
        : yield* idOfTyped(deps, current.dir, cells.cwd, requested)
      if (id === undefined) return undefined
      const loaded = yield* loadOwned(deps, current.dir, cells.cwd, id)
      yield* adopt(deps, cells, loaded)
      return reportOf(loaded)
    },
    (effect, requested) =>
      Effect.tapError(effect, (error) =>
        record(deps, cells)({
          kind: "resume",
          line: error.message,
          raw: error.raw,
          question: `/resume${requested === undefined ? "" : ` ${requested}`}`
        }))
  )

const makeConversation = (deps: Deps, start: Start): Effect.Effect<Conversation> =>
  Effect.map(
    makeCells(start),
    (cells): Conversation => ({
      cwd: cells.cwd,
      snapshot: Ref.get(cells.state),
      id: Effect.map(Ref.get(cells.state), (s) => s.id),
      status: Ref.get(cells.status),
      ensureFile: ensureFile(deps, cells),
      update: update(deps, cells),
      record: record(deps, cells),
      detach: detach(cells),
      archiveAndReset: archiveAndReset(deps, cells),
      resume: resume(deps, cells),
      allowed: cells.allowed,
      usage: cells.usage,
      settings: cells.settings
    })
  )

// ---- the service's methods ----

const open = (deps: Deps) =>
  Effect.fn("Keeper.open")(function*(cwd: string, options: { readonly createFile: "now" | "later" }) {
    const dir = sessionsDir(deps.config, cwd)
    const fresh = emptySession("", cwd, yield* now)
    if (dir === undefined) {
      return yield* makeConversation(deps, { cwd, session: fresh, onDisk: false, status: { _tag: "Off" } })
    }
    const prepared = yield* Effect.either(deps.store.prepare(dir))
    const retryCreate = options.createFile === "later"
    if (prepared._tag === "Left") {
      const status: SaveStatus = { _tag: "NotSaved", dir, reason: storeReason(prepared.left) }
      return yield* makeConversation(deps, { cwd, session: fresh, onDisk: false, status, terminal: retryCreate })
    }
    const conversation = yield* makeConversation(deps, {
      cwd,
      session: fresh,
      onDisk: false,
      status: { _tag: "Saving", dir },
      terminal: retryCreate
    })
    if (options.createFile === "now") yield* conversation.ensureFile
    return conversation
  })

const load = (deps: Deps) =>
  Effect.fn("Keeper.load")(function*(cwd: string, rawId: unknown) {
    const id = yield* validId(rawId)
    const dir = sessionsDir(deps.config, cwd)
    if (dir === undefined) {
      return yield* new ResumeError({
        reason: "disabled",
        message: "sessions are off (sessions.enabled: false)",
        raw: ""
      })
    }
    const loaded = yield* loadOwned(deps, dir, cwd, id)
    return yield* makeConversation(deps, {
      cwd,
      session: underCurrentSystem(deps.config, loaded),
      onDisk: true,
      status: { _tag: "Saving", dir }
    })
  })

const list = (deps: Deps) =>
  Effect.fn("Keeper.list")(function*(cwd: string) {
    const dir = sessionsDir(deps.config, cwd)
    if (dir === undefined) return { _tag: "Off" } as const
    return yield* deps.store.list(dir).pipe(
      Effect.map((entries): Listing => ({ _tag: "Listed", dir, entries: entries.filter(ofProject(deps, cwd)) })),
      Effect.catchAll((error) => Effect.succeed<Listing>({ _tag: "Failed", dir, reason: storeReason(error) }))
    )
  })

/** The command line's `--resume ID`, `mm sessions show|rm ID`: nothing is recorded anywhere. */
const resolve = (deps: Deps) =>
  Effect.fn("Keeper.resolve")(function*(cwd: string, typed: string) {
    const dir = sessionsDir(deps.config, cwd)
    if (dir === undefined) return yield* sessionsOff()
    return yield* idOfTyped(deps, dir, cwd, typed.trim())
  })

export const KeeperLive = Layer.effect(
  Keeper,
  Effect.gen(function*() {
    const { config } = yield* AppConfig
    const deps: Deps = {
      config,
      store: yield* SessionStore,
      errorLog: yield* ErrorLog,
      shared: isSharedStore(config)
    }
    return {
      dirFor: (cwd) => sessionsDir(config, cwd),
      open: open(deps),
      load: load(deps),
      list: list(deps),
      resolve: resolve(deps)
    }
  })
)
