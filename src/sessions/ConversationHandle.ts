import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import type { Scope } from "../approvals/ApprovalScope"
import { defaultSettings, type SessionSettings } from "../approvals/SessionSettings"
import { ForkError, type StoreError } from "../domain/Errors"
import { emptySession, ERRORS_CAP, type Message, type Session, SESSION_VERSION, titleOf } from "../domain/Session"
import { cutProblem, forkOf, lastTurn, questionsIn } from "../domain/Turns"
import type { Usage } from "../model/ModelClient"
import { repointArchives } from "./Archives"
import type { Conversation, ForkReport, MovedReport, ResumeReport, SaveStatus } from "./Conversation"
import type { Failure } from "./ErrorLog"
import {
  type Deps,
  idOfTyped,
  latestOther,
  loadClosed,
  sessionsOff,
  storeReason,
  underCurrentSystem
} from "./SessionLookup"
import { repointSubAgents } from "./SubAgentLinks"

/**
 * The conversation handle: one conversation's cells in memory, and how each change to them
 * reaches its file (created when first needed, rewritten after every change, conflicts kept).
 */

export const now = Effect.map(Effect.clockWith((clock) => clock.currentTimeMillis), (ms) => new Date(ms))

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
  /** The question of a turn closed on load, until it is taken. */
  readonly interrupted: Ref.Ref<string | undefined>
}

interface Start {
  readonly cwd: string
  readonly session: Session
  /** Whether `session` was read from its file. */
  readonly onDisk: boolean
  readonly status: SaveStatus
  readonly terminal?: boolean
  /** The question of a turn mm stopped during, closed when `session` was loaded. */
  readonly interrupted?: string
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
      written: yield* Ref.make<string | undefined>(start.onDisk ? start.session.updatedAt : undefined),
      interrupted: yield* Ref.make<string | undefined>(start.interrupted)
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
      const forked = yield* deps.store.saveAsNew(dir, session)
      yield* Ref.set(state, forked)
      yield* Ref.set(written, forked.updatedAt)
      return `session ${session.id} was changed by another mm; this conversation continues as ${forked.id}`
    }
    const theirs = yield* deps.store.load(dir, session.id)
    const kept = yield* deps.store.saveAsNew(dir, theirs)
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
      const forked = yield* Effect.either(deps.store.saveAsNew(current.dir, session))
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
    // what happened before the file could be made (the first question, a failure) is its first
    // content: one durable write, not an empty file and then a rewrite
    const held = yield* Ref.get(state)
    const created = yield* Effect.either(
      held.messages.length + held.errors.length === 0
        ? deps.store.createNew(current.dir, cells.cwd)
        : deps.store.saveAsNew(current.dir, held)
    )
    if (created._tag === "Left") return yield* failed(cells, current.dir, created.left)
    const session = yield* Ref.get(state)
    yield* Ref.set(state, { ...session, id: created.right.id, createdAt: created.right.createdAt })
    yield* Ref.set(cells.written, created.right.updatedAt)
    yield* Ref.set(cells.hasFile, true)
    return yield* succeeded(cells, current.dir)
  })

const ensureFile = (deps: Deps, cells: Cells) => cells.lock.withPermits(1)(createNow(deps, cells))

const update = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.update")(function*(change: (session: Session) => Session) {
    const changed = yield* stamp(change(yield* Ref.get(cells.state)))
    yield* Ref.set(cells.state, changed)
    return yield* saveNow(deps, cells)
  }, cells.lock.withPermits(1))

/** An archive of `replaced`, the turns a compaction of `session` takes out of it. */
const archiveOfTurns = (session: Session, replaced: ReadonlyArray<Message>, at: Date): Session => ({
  version: SESSION_VERSION,
  id: "",
  cwd: session.cwd,
  createdAt: at.toISOString(),
  updatedAt: at.toISOString(),
  title: session.title,
  turns: questionsIn(replaced),
  archiveOf: session.id,
  messages: replaced,
  errors: []
})

const compacted = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.compacted")(
    function*(messages: ReadonlyArray<Message>, replaced: ReadonlyArray<Message>) {
      const current = yield* Ref.get(cells.status)
      const session = yield* Ref.get(cells.state)
      let archives = session.archives ?? []
      let warning: string | undefined
      if (current._tag === "Saving" && (yield* Ref.get(cells.hasFile)) && replaced.length > 0) {
        // the turns are on disk under their own id before the file stops holding them
        const archived = yield* Effect.either(
          deps.store.saveAsNew(current.dir, archiveOfTurns(session, replaced, yield* now))
        )
        if (archived._tag === "Right") archives = [...archives, archived.right.id]
        else {warning = `the compacted turns could not be archived (${
            storeReason(archived.left)
          }); only the summary keeps them`}
      }
      const changed = yield* stamp({ ...session, messages, ...(archives.length > 0 ? { archives } : {}) })
      yield* Ref.set(cells.state, changed)
      return (yield* saveNow(deps, cells)) ?? warning
    },
    cells.lock.withPermits(1)
  )

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
      let archived: MovedReport | undefined
      if (
        current._tag === "Saving" && (yield* Ref.get(cells.hasFile)) &&
        session.messages.length + session.errors.length > 0
      ) {
        const moved = (yield* deps.store.saveAsNew(current.dir, session)).id
        // its archives and its sub-agents' sessions go with it: they name the id it lives under
        // now, which this thread leaves
        const archives = yield* repointArchives(deps.store, current.dir, session.archives ?? [], session.id, moved)
        const subAgents = yield* repointSubAgents(deps.store, current.dir, session.id, moved)
        archived = { id: moved, warnings: [...archives, ...subAgents] }
      }
      // the editor's mode and model stay with its thread
      const fresh = {
        ...emptySession(session.id, cells.cwd, yield* now),
        ...(session.settings === undefined ? {} : { settings: session.settings })
      }
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

const reportOf = (loaded: Session, interrupted: string | undefined): ResumeReport => {
  const report: ResumeReport = {
    id: loaded.id,
    messages: loaded.messages.filter((m) => m.role !== "system").length,
    title: loaded.title,
    errors: loaded.errors.length,
    ...(loaded.plan === undefined || loaded.plan.entries.length === 0 ? {} : { plan: loaded.plan.entries })
  }
  return interrupted === undefined ? report : { ...report, interrupted }
}

const resume = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.resume")(
    function*(requested: string | undefined) {
      const current = yield* Ref.get(cells.status)
      if (current._tag === "Off") return yield* sessionsOff()
      const id = requested === undefined
        ? yield* latestOther(deps, current.dir, cells.cwd, (yield* Ref.get(cells.state)).id)
        : yield* idOfTyped(deps, current.dir, cells.cwd, requested)
      if (id === undefined) return undefined
      const loaded = yield* loadClosed(deps, current.dir, cells.cwd, id)
      yield* adopt(deps, cells, loaded.session)
      return reportOf(loaded.session, loaded.interrupted)
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

/** The conversation goes on as a fork of itself cut after `turn`; its file (if any) stays as it is. */
const fork = (deps: Deps, cells: Cells) =>
  Effect.fn("Conversation.fork")(function*(requested: number | undefined) {
    const source = yield* Ref.get(cells.state)
    const last = lastTurn(source)
    if (last === 0) {
      return yield* new ForkError({ reason: "nothing", message: "nothing to fork yet: no question was asked", raw: "" })
    }
    const turn = requested ?? last
    const problem = cutProblem(source, turn)
    if (problem !== undefined) return yield* new ForkError({ reason: "bad-turn", message: problem, raw: "" })
    const forked = forkOf(source, turn, yield* now)
    yield* Ref.set(cells.state, forked)
    yield* Ref.set(cells.hasFile, false)
    yield* Ref.set(cells.written, undefined)
    yield* Ref.set(cells.usage, undefined)
    yield* Ref.set(cells.allowed, [])
    const warning = yield* createNow(deps, cells)
    const id = (yield* Ref.get(cells.state)).id
    const report: ForkReport = { id, from: source.id, turn, left: last - turn }
    return warning === undefined ? report : { ...report, warning }
  }, cells.lock.withPermits(1))

export const makeConversation = (deps: Deps, start: Start): Effect.Effect<Conversation> =>
  Effect.map(
    makeCells(start),
    (cells): Conversation => ({
      cwd: cells.cwd,
      snapshot: Ref.get(cells.state),
      id: Effect.map(Ref.get(cells.state), (s) => s.id),
      status: Ref.get(cells.status),
      ensureFile: ensureFile(deps, cells),
      update: update(deps, cells),
      compacted: compacted(deps, cells),
      record: record(deps, cells),
      detach: detach(cells),
      archiveAndReset: archiveAndReset(deps, cells),
      resume: resume(deps, cells),
      takeInterrupted: Ref.getAndSet(cells.interrupted, undefined),
      fork: fork(deps, cells),
      allowed: cells.allowed,
      usage: cells.usage,
      settings: cells.settings
    })
  )
