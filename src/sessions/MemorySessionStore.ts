import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

import { StoreError } from "../domain/Errors"
import { emptySession, type Session, SESSION_VERSION } from "../domain/Session"
import { newSessionId } from "../domain/SessionId"
import {
  encodeSession,
  FILE_SUFFIX,
  idOfFileName,
  isArchiveListing,
  listingOf,
  parseSession,
  stampOfText
} from "./SessionCodec"
import { type Matcher, sessionHits } from "./SessionSearch"
import { type SessionListing, SessionStore, type SessionStoreShape } from "./SessionStore"
import { changedMeanwhile, decodeFile, notFound, notOverwritten, refuseNewer, validId } from "./StoreErrors"

interface MemoryStoreOptions {
  /** Directories where every write fails, as an unwritable project would. */
  readonly readOnlyDirs?: Iterable<string>
  readonly newId?: () => string
}

/** What a test can do to the store behind the port's back. */
interface MemoryStoreControls {
  /** Puts any text under a file name, as someone editing the directory by hand would. */
  readonly writeRaw: (dir: string, name: string, text: string) => void
  readonly readRaw: (dir: string, name: string) => string | undefined
  readonly remove: (dir: string, name: string) => void
  readonly names: (dir: string) => ReadonlyArray<string>
  readonly setReadOnly: (dir: string, readOnly: boolean) => void
}

interface MemoryStore {
  readonly store: SessionStoreShape
  readonly controls: MemoryStoreControls
}

/** What the store holds: each directory's files, by name, as the text they would hold. */
interface Held {
  readonly dirs: Map<string, Map<string, string>>
  readonly readOnly: Set<string>
  readonly newId: () => string
}

const filesOf = (held: Held, dir: string) => {
  let files = held.dirs.get(dir)
  if (files === undefined) {
    files = new Map()
    held.dirs.set(dir, files)
  }
  return files
}

const writable = (held: Held, dir: string) =>
  held.readOnly.has(dir)
    ? Effect.fail(
      new StoreError({
        reason: "io",
        message: `cannot write ${dir}: permission denied`,
        raw: `EACCES: permission denied (read-only in memory)`
      })
    )
    : Effect.succeed(filesOf(held, dir))

const createExclusively = (held: Held, dir: string, sessionOf: (id: string) => Session) =>
  Effect.gen(function*() {
    const files = yield* writable(held, dir)
    for (let i = 0; i < 100; i++) {
      const session = sessionOf(held.newId())
      const name = session.id + FILE_SUFFIX
      if (files.has(name)) continue
      files.set(name, encodeSession(session))
      return session
    }
    return yield* new StoreError({
      reason: "exists",
      message: `cannot write ${dir}: no free session id after 100 attempts`,
      raw: "every id tried already had a file"
    })
  })

const save = (held: Held) =>
  Effect.fn("MemorySessionStore.save")(function*(dir: string, session: Session, expectedUpdatedAt?: string) {
    const id = yield* validId(session.id)
    yield* refuseNewer(session)
    const files = yield* writable(held, dir)
    const existing = files.get(id + FILE_SUFFIX)
    const onDisk = existing === undefined ? undefined : stampOfText(existing)
    if (onDisk?.version !== undefined && onDisk.version > SESSION_VERSION) {
      return yield* notOverwritten(id, onDisk.version)
    }
    if (onDisk !== undefined && expectedUpdatedAt !== undefined && onDisk.updatedAt !== expectedUpdatedAt) {
      return yield* changedMeanwhile(id, expectedUpdatedAt, onDisk.updatedAt)
    }
    files.set(id + FILE_SUFFIX, encodeSession(session))
  })

const list = (held: Held) =>
  Effect.fn("MemorySessionStore.list")(function*(dir: string) {
    const listings: Array<SessionListing> = []
    for (const [name, text] of held.dirs.get(dir) ?? []) {
      const id = idOfFileName(name)
      const listing = id === undefined ? undefined : listingOf(id, text)
      if (listing !== undefined && !isArchiveListing(listing)) listings.push(listing)
    }
    const idOf = (listing: SessionListing) => (listing._tag === "Readable" ? listing.summary.id : listing.id)
    return listings.sort((a, b) => (idOf(a) < idOf(b) ? 1 : idOf(a) > idOf(b) ? -1 : 0))
  })

/** What the file store's search finds, from the texts held. */
const search = (held: Held) => (dir: string, matcher: Matcher) =>
  Stream.fromIterable(
    [...(held.dirs.get(dir) ?? [])]
      .filter(([name]) => idOfFileName(name) !== undefined)
      .sort(([a], [b]) => (a < b ? 1 : -1))
  ).pipe(
    Stream.filterMap(([name, text]) => {
      const parsed = matcher.mayMatch(Buffer.from(text, "utf8")) ? parseSession(text, name.slice(0, 24)) : undefined
      const found = parsed !== undefined && Either.isRight(parsed) ? sessionHits(parsed.right, matcher) : undefined
      return found === undefined ? Option.none() : Option.some(found)
    })
  )

const storeOf = (held: Held): SessionStoreShape => ({
  prepare: Effect.fn("MemorySessionStore.prepare")(function*(dir: string) {
    yield* writable(held, dir)
  }),
  createNew: Effect.fn("MemorySessionStore.createNew")(function*(dir: string, cwd: string) {
    const now = new Date()
    return yield* createExclusively(held, dir, (id) => emptySession(id, cwd, now))
  }),
  saveAsNew: Effect.fn("MemorySessionStore.saveAsNew")(function*(dir: string, session: Session) {
    yield* refuseNewer(session)
    return yield* createExclusively(held, dir, (id) => ({ ...session, version: SESSION_VERSION, id }))
  }),
  save: save(held),
  load: Effect.fn("MemorySessionStore.load")(function*(dir: string, id: string) {
    const valid = yield* validId(id)
    const text = held.dirs.get(dir)?.get(valid + FILE_SUFFIX)
    if (text === undefined) return yield* notFound(dir, valid)
    return yield* decodeFile(text, valid)
  }),
  remove: Effect.fn("MemorySessionStore.remove")(function*(dir: string, id: string) {
    const valid = yield* validId(id)
    const files = yield* writable(held, dir)
    if (!files.delete(valid + FILE_SUFFIX)) return yield* notFound(dir, valid)
  }),
  list: list(held),
  search: search(held)
})

const controlsOf = (held: Held): MemoryStoreControls => ({
  writeRaw: (dir, name, text) => void filesOf(held, dir).set(name, text),
  readRaw: (dir, name) => held.dirs.get(dir)?.get(name),
  remove: (dir, name) => void held.dirs.get(dir)?.delete(name),
  names: (dir) => [...(held.dirs.get(dir)?.keys() ?? [])].sort(),
  setReadOnly: (dir, value) => void (value ? held.readOnly.add(dir) : held.readOnly.delete(dir))
})

/**
 * The store in memory, with the file store's semantics: each session is kept as the text its
 * file would hold, so nothing a caller holds can change what is stored.
 */
export const make = (options: MemoryStoreOptions = {}): MemoryStore => {
  const held: Held = {
    dirs: new Map(),
    readOnly: new Set(options.readOnlyDirs ?? []),
    newId: options.newId ?? (() => newSessionId())
  }
  return { store: storeOf(held), controls: controlsOf(held) }
}

export const layer = (options: MemoryStoreOptions = {}): Layer.Layer<SessionStore> =>
  Layer.sync(SessionStore, () => make(options).store)
