import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

import { rawText, StoreError } from "../domain/Errors"
import { emptySession, type Session, SESSION_VERSION } from "../domain/Session"
import { newSessionId } from "../domain/SessionId"
import * as Durable from "../lib/DurableFiles"
import { ensureProjectDir } from "../lib/ProjectDir"
import { Secrets } from "../lib/Secrets"
import { searchDir } from "./SearchFiles"
import { encodeSession, FILE_SUFFIX } from "./SessionCodec"
import {
  codeOf,
  errnoText,
  type Fs,
  makeReader,
  nearestExisting,
  placeExclusively,
  type Reader,
  readSessionText,
  replaceWith,
  stampOnDisk,
  writeTemp
} from "./SessionFileIO"
import { listDir, type ListingIndex, makeListingIndex, writeUnwritten } from "./SessionListingIndex"
import type { Matcher } from "./SessionSearch"
import { SessionStore, type SessionStoreShape } from "./SessionStore"
import { changedMeanwhile, decodeFile, notFound, notOverwritten, refuseNewer, validId } from "./StoreErrors"

export { INDEX_COLUMNS, INDEX_FILE } from "./ListingIndexFile"
export type { Fs } from "./SessionFileIO"

interface FileStoreOptions {
  /** The file system calls, replaceable to count or to fail them in tests. */
  readonly fs?: Fs
  /** The id maker (tests narrow it to force collisions). */
  readonly newId?: () => string
  /** Keep the listing cache in `<dir>/.index.json` across processes (default true). */
  readonly indexFile?: boolean
  /** Takes the known secrets out of a file's text before it is written (the production store's is the program's). */
  readonly redact?: (text: string) => string
}

const CREATE_ATTEMPTS = 100

/** One store's file calls, its reads, its listing caches and its id maker. */
interface Store {
  readonly fs: Fs
  readonly reader: Reader
  readonly index: ListingIndex
  readonly newId: () => string
  readonly encode: (session: Session) => string
}

const ioError = (what: string, id?: string) => (cause: unknown): StoreError =>
  cause instanceof StoreError
    ? cause
    : new StoreError({ reason: "io", id, message: `${what}: ${errnoText(cause)}`, raw: rawText(cause) })

const attempt = <A>(run: () => A, onError: (cause: unknown) => StoreError): Effect.Effect<A, StoreError> =>
  Effect.try({ try: run, catch: onError })

const fileOf = (dir: string, id: string) => NodePath.join(dir, id + FILE_SUFFIX)

/** A new file under a fresh id, retried while the id is taken (never overwrites). */
const createExclusively = (store: Store, dir: string, sessionOf: (id: string) => Session) =>
  attempt(() => {
    ensureProjectDir(dir, store.fs)
    for (let i = 0; i < CREATE_ATTEMPTS; i++) {
      const session = sessionOf(store.newId())
      if (placeExclusively(store.fs, dir, fileOf(dir, session.id), store.encode(session))) return session
    }
    throw new StoreError({
      reason: "exists",
      message: `cannot write ${dir}: no free session id after ${CREATE_ATTEMPTS} attempts`,
      raw: `every id tried already had a file`
    })
  }, ioError(`cannot write ${dir}`))

// ---- the port ----

/** Checks that sessions could be written there, creating nothing: the directory comes with the first file. */
const prepare = (store: Store) =>
  Effect.fn("FileSessionStore.prepare")(function*(dir: string) {
    yield* attempt(() => {
      Durable.unlinkQuietly(writeTemp(store.fs, nearestExisting(store.fs, dir), "probe", "", false), store.fs)
    }, ioError(`cannot write ${dir}`))
  })

const createNew = (store: Store) =>
  Effect.fn("FileSessionStore.createNew")(function*(dir: string, cwd: string) {
    const now = new Date()
    return yield* createExclusively(store, dir, (id) => emptySession(id, cwd, now))
  })

const saveAsNew = (store: Store) =>
  Effect.fn("FileSessionStore.saveAsNew")(function*(dir: string, session: Session) {
    yield* refuseNewer(session)
    return yield* createExclusively(store, dir, (id) => ({ ...session, version: SESSION_VERSION, id }))
  })

const save = (store: Store) =>
  Effect.fn("FileSessionStore.save")(function*(dir: string, session: Session, expectedUpdatedAt?: string) {
    const id = yield* validId(session.id)
    yield* refuseNewer(session)
    const path = fileOf(dir, id)
    yield* attempt(() => {
      ensureProjectDir(dir, store.fs)
      const onDisk = stampOnDisk(store.reader, path)
      if (onDisk?.version !== undefined && onDisk.version > SESSION_VERSION) throw notOverwritten(id, onDisk.version)
      if (onDisk !== undefined && expectedUpdatedAt !== undefined && onDisk.updatedAt !== expectedUpdatedAt) {
        throw changedMeanwhile(id, expectedUpdatedAt, onDisk.updatedAt)
      }
      replaceWith(store.fs, dir, path, store.encode(session))
    }, ioError(`cannot write ${path}`, id))
  })

const load = (store: Store) =>
  Effect.fn("FileSessionStore.load")(function*(dir: string, id: string) {
    const valid = yield* validId(id)
    const path = fileOf(dir, valid)
    const text = yield* attempt(
      () => readSessionText(store.fs, path, valid),
      (cause) =>
        codeOf(cause) === "ENOENT"
          ? notFound(dir, valid)
          : codeOf(cause) === "ELOOP"
          ? new StoreError({
            reason: "unreadable",
            id: valid,
            message: `session ${valid} is unreadable: ${errnoText(cause)}`,
            raw: path
          })
          : ioError(`cannot read ${path}`, valid)(cause)
    )
    return yield* decodeFile(text, valid)
  })

const list = (store: Store) =>
  Effect.fn("FileSessionStore.list")(function*(dir: string) {
    return yield* attempt(() => listDir(store.index, dir), ioError(`cannot list ${dir}`))
  })

const remove = (store: Store) =>
  Effect.fn("FileSessionStore.remove")(function*(dir: string, id: string) {
    const valid = yield* validId(id)
    const path = fileOf(dir, valid)
    yield* attempt(
      () => store.fs.unlinkSync(path),
      (cause) => (codeOf(cause) === "ENOENT" ? notFound(dir, valid) : ioError(`cannot delete ${path}`, valid)(cause))
    )
  })

const search = (dir: string, matcher: Matcher) =>
  Stream.fromAsyncIterable(searchDir(dir, matcher), ioError(`cannot search ${dir}`))

const storeOf = (options: FileStoreOptions): Store => {
  const fs = options.fs ?? NodeFs
  const reader = makeReader(fs)
  return {
    fs,
    reader,
    index: makeListingIndex(reader, options.indexFile ?? true),
    newId: options.newId ?? (() => newSessionId()),
    encode: (session) => encodeSession(session, options.redact)
  }
}

const shapeOf = (store: Store): SessionStoreShape => ({
  prepare: prepare(store),
  createNew: createNew(store),
  saveAsNew: saveAsNew(store),
  save: save(store),
  load: load(store),
  list: list(store),
  remove: remove(store),
  search
})

/**
 * A session store over one JSON file per session; see docs/reference/session-file.md. Outside
 * a scope: its listing index is written only soon after a listing (benches, tests).
 */
export const make = (options: FileStoreOptions = {}): SessionStoreShape => shapeOf(storeOf(options))

/**
 * The store, in a scope whose end writes the listing index files still to be written (a
 * listing just before mm ends, sooner than the write that follows it).
 */
export const makeScoped = (options: FileStoreOptions = {}): Effect.Effect<SessionStoreShape, never, Scope.Scope> =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => storeOf(options)),
      (store) => Effect.sync(() => writeUnwritten(store.index))
    ),
    shapeOf
  )

export const layerWith = (options: FileStoreOptions): Layer.Layer<SessionStore> =>
  Layer.scoped(SessionStore, makeScoped(options))

/** A store that writes secrets as they are (tests of the store itself). */
export const layer: Layer.Layer<SessionStore> = layerWith({})

/** The production store: no known secret reaches a session file. */
export const fileSessionStore: Effect.Effect<SessionStoreShape, never, Secrets | Scope.Scope> = Effect.flatMap(
  Secrets,
  (secrets) => makeScoped({ redact: secrets.redact })
)
