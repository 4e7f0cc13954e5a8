import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"
import * as NodePath from "node:path"
import * as Durable from "./DurableFiles"
import { rawText, StoreError } from "./Domain/Errors"
import { emptySession, type Session, SESSION_VERSION } from "./Domain/Session"
import { newSessionId } from "./Domain/SessionId"
import {
  decodeFile,
  encodeSession,
  endsLikeObject,
  FILE_SUFFIX,
  idOfFileName,
  listingOf,
  listingOfScan,
  listingOfText,
  notFound,
  notOverwritten,
  refuseNewer,
  scanHead,
  scanStamp,
  type Stamp,
  stampOfText,
  unreadable,
  validId,
  changedMeanwhile
} from "./SessionFile"
import { type SessionListing, SessionStore, type SessionStoreShape } from "./SessionStore"

export type Fs = typeof NodeFs

export interface FileStoreOptions {
  /** The file system calls, replaceable to count or to fail them in tests. */
  readonly fs?: Fs
  /** The id maker (tests narrow it to force collisions). */
  readonly newId?: () => string
  /** Keep the listing cache in `<dir>/.index.json` across processes (default true). */
  readonly indexFile?: boolean
}

export const INDEX_FILE = ".index.json"
const INDEX_VERSION = 1
const HEAD_BYTES = 4096
/** Where the summary usually ends: only the bytes before it are decoded first. */
const MESSAGES_KEY = Buffer.from('"messages"')
const MAX_HEAD_BYTES = 1 << 20
const TAIL_BYTES = 64
/** A file changed this recently may change again within the same timestamp tick: not cached. */
const RACY_MS = 2000
const STALE_TEMP_MS = 60 * 60 * 1000
const CREATE_ATTEMPTS = 100

const errnoWords: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
  EIO: "input/output error",
  ENAMETOOLONG: "name too long",
  ELOOP: "too many symbolic links"
}

const errnoText = (cause: unknown): string => {
  const words = (cause as { words?: unknown } | null)?.words
  if (typeof words === "string") return words
  const code = (cause as { code?: unknown } | null)?.code
  if (typeof code === "string" && code in errnoWords) return errnoWords[code]
  return rawText(cause)
}

const codeOf = (cause: unknown): unknown => (cause as { code?: unknown } | null)?.code

const ioError = (what: string, id?: string) => (cause: unknown): StoreError =>
  cause instanceof StoreError
    ? cause
    : new StoreError({ reason: "io", id, message: `${what}: ${errnoText(cause)}`, raw: rawText(cause) })

const attempt = <A>(run: () => A, onError: (cause: unknown) => StoreError): Effect.Effect<A, StoreError> =>
  Effect.try({ try: run, catch: onError })

const tempPattern = /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/

const tempName = (base: string): string =>
  `.${base}.${process.pid}.${NodeCrypto.randomBytes(4).toString("hex")}.tmp`

interface CacheEntry {
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly ino: number
  readonly listing: SessionListing
}

interface DirCache {
  readonly entries: Map<string, CacheEntry>
}

const sameFile = (entry: CacheEntry, stat: NodeFs.Stats): boolean =>
  entry.size === stat.size && entry.mtimeMs === stat.mtimeMs && entry.ctimeMs === stat.ctimeMs && entry.ino === stat.ino

const isString = (value: unknown): value is string => typeof value === "string"
const isNumber = (value: unknown): value is number => typeof value === "number"

/**
 * One entry of `.index.json`: `[name, size, mtimeMs, ctimeMs, ino, reason]` for an unreadable
 * file, `[name, size, mtimeMs, ctimeMs, ino, cwd, createdAt, updatedAt, title, turns, errors]`
 * otherwise. Checked field by field: it is a cache, and anything odd is dropped. Names are
 * only ever looked up from the directory's own valid `<id>.json` names.
 */
const entryOfIndex = (value: unknown): [string, CacheEntry] | undefined => {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 11)) return undefined
  const name: unknown = value[0]
  const size: unknown = value[1]
  const mtimeMs: unknown = value[2]
  const ctimeMs: unknown = value[3]
  const ino: unknown = value[4]
  if (!isString(name) || !isNumber(size) || !isNumber(mtimeMs) || !isNumber(ctimeMs) || !isNumber(ino)) return undefined
  const id = name.slice(0, 24)
  if (value.length === 6) {
    const reason: unknown = value[5]
    return isString(reason) ? [name, { size, mtimeMs, ctimeMs, ino, listing: unreadable(id, reason) }] : undefined
  }
  const cwd: unknown = value[5]
  const createdAt: unknown = value[6]
  const updatedAt: unknown = value[7]
  const title: unknown = value[8]
  const turns: unknown = value[9]
  const errors: unknown = value[10]
  if (!isString(cwd) || !isString(createdAt) || !isString(updatedAt) || !isString(title)) return undefined
  if (!isNumber(turns) || !isNumber(errors)) return undefined
  const summary = { id, cwd, createdAt, updatedAt, title, turns, errors }
  return [name, { size, mtimeMs, ctimeMs, ino, listing: { _tag: "Readable", summary } }]
}

const indexText = (entries: Map<string, CacheEntry>): string => {
  const files: Array<ReadonlyArray<unknown>> = []
  for (const [name, { size, mtimeMs, ctimeMs, ino, listing }] of entries) {
    if (listing._tag === "Readable") {
      const { cwd, createdAt, updatedAt, title, turns, errors } = listing.summary
      files.push([name, size, mtimeMs, ctimeMs, ino, cwd, createdAt, updatedAt, title, turns, errors])
    } else {
      files.push([name, size, mtimeMs, ctimeMs, ino, listing.reason])
    }
  }
  return JSON.stringify({ version: INDEX_VERSION, files })
}

/** A session store over one JSON file per session; see docs/reference/session-file.md. */
export const make = (options: FileStoreOptions = {}): SessionStoreShape => {
  const fs = options.fs ?? NodeFs
  const newId = options.newId ?? (() => newSessionId())
  const useIndex = options.indexFile ?? true
  const caches = new Map<string, DirCache>()
  const head = Buffer.allocUnsafe(HEAD_BYTES)
  const tail = Buffer.allocUnsafe(TAIL_BYTES)

  const fileOf = (dir: string, id: string) => NodePath.join(dir, id + FILE_SUFFIX)

  /**
   * Non-blocking, so that a FIFO or device named like a session cannot hang mm (it is then
   * refused by its stat); not following a symbolic link, so that a link named like a session
   * never makes mm read (and quote) another file.
   */
  const openToRead = (path: string): number => {
    try {
      return fs.openSync(path, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK | NodeFs.constants.O_NOFOLLOW)
    } catch (cause) {
      if (codeOf(cause) === "ELOOP") throw Object.assign(new Error(`${path} is a symbolic link`), { code: "ELOOP", words: "it is a symbolic link; mm reads only session files it wrote" })
      throw cause
    }
  }

  const notADirectory = (dir: string) =>
    Object.assign(new Error(`${dir} is a file`), { code: "ENOTDIR", words: "it is a file, not a directory" })

  /**
   * Creates `dir` and its missing parents, tolerating another process doing the same; true when
   * this call made `dir`. Not `mkdirSync({ recursive })`: that one loops forever under /proc.
   */
  const makeDirs = (dir: string, depth: number): boolean => {
    try {
      fs.mkdirSync(dir, { mode: 0o700 })
      return true
    } catch (cause) {
      const code = codeOf(cause)
      if (code === "EEXIST") {
        if (fs.statSync(dir).isDirectory()) return false
        throw notADirectory(dir)
      }
      const parent = NodePath.dirname(dir)
      if (code !== "ENOENT" || parent === dir || depth > 64) throw cause
      makeDirs(parent, depth + 1)
      return makeDirs(dir, depth + 1)
    }
  }

  /** Makes sure `dir` is a directory; one that mm creates gets mode 0700 whatever the umask. */
  const ensureDir = (dir: string): void => {
    const stat = fs.statSync(dir, { throwIfNoEntry: false })
    if (stat?.isDirectory()) return
    if (stat !== undefined) throw notADirectory(dir)
    if (makeDirs(dir, 0)) fs.chmodSync(dir, 0o700)
  }

  const unlinkQuietly = (path: string): void => Durable.unlinkQuietly(path, fs)
  const fsyncDir = (dir: string): void => Durable.fsyncDir(dir, fs)

  /** Writes `text` to a new temporary file of `dir` (mode 0600, synced) and returns its path. */
  const writeTemp = (dir: string, base: string, text: string, sync: boolean): string => {
    const path = NodePath.join(dir, tempName(base))
    const fd = fs.openSync(path, "wx", 0o600)
    try {
      fs.fchmodSync(fd, 0o600)
      fs.writeFileSync(fd, text)
      if (sync) fs.fsyncSync(fd)
    } catch (cause) {
      fs.closeSync(fd)
      unlinkQuietly(path)
      throw cause
    }
    fs.closeSync(fd)
    return path
  }

  const replaceWith = (dir: string, target: string, text: string): void => {
    const temp = writeTemp(dir, NodePath.basename(target), text, true)
    try {
      fs.renameSync(temp, target)
    } catch (cause) {
      unlinkQuietly(temp)
      throw cause
    }
    fsyncDir(dir)
  }

  /** Puts `text` at `target` only if nothing is there: never overwrites, never torn. */
  const placeExclusively = (dir: string, target: string, text: string): boolean => {
    const temp = writeTemp(dir, NodePath.basename(target), text, true)
    try {
      try {
        fs.linkSync(temp, target)
      } catch (cause) {
        const code = codeOf(cause)
        if (code === "EEXIST") return false
        if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw cause
        try {
          fs.closeSync(fs.openSync(target, "wx", 0o600))
        } catch (inner) {
          if (codeOf(inner) === "EEXIST") return false
          throw inner
        }
        fs.renameSync(temp, target)
      }
    } finally {
      unlinkQuietly(temp)
    }
    fsyncDir(dir)
    return true
  }

  const readFully = (fd: number, buffer: Buffer, length: number, position: number): number => {
    let done = 0
    while (done < length) {
      const n = fs.readSync(fd, buffer, done, length - done, position + done)
      if (n === 0) break
      done += n
    }
    return done
  }

  /** The version and last write the file on disk claims, read from its head when it is where mm puts them. */
  const stampOnDisk = (path: string): Stamp | undefined => {
    let fd: number
    try {
      fd = openToRead(path)
    } catch (cause) {
      if (codeOf(cause) === "ENOENT") return undefined
      throw cause
    }
    try {
      const n = readFully(fd, head, HEAD_BYTES, 0)
      const text = head.toString("utf8", 0, n)
      const found = scanStamp(text)
      if ((found.version !== undefined && found.updatedAt !== undefined) || n < HEAD_BYTES) {
        return n < HEAD_BYTES ? stampOfText(text) : found
      }
      const size = fs.fstatSync(fd).size
      const whole = Buffer.allocUnsafe(size)
      return stampOfText(whole.toString("utf8", 0, readFully(fd, whole, size, 0)))
    } finally {
      fs.closeSync(fd)
    }
  }

  /** Removes the temporary files a killed writer left, once they are clearly abandoned. */
  const sweepStaleTemps = (prefix: string, names: ReadonlyArray<string>, now: number): void => {
    for (const name of names) {
      if (name.charCodeAt(0) !== 46 || !tempPattern.test(name)) continue
      const stat = fs.statSync(prefix + name, { throwIfNoEntry: false })
      if (stat !== undefined && now - stat.mtimeMs > STALE_TEMP_MS) unlinkQuietly(prefix + name)
    }
  }

  // -- listing ----------------------------------------------------------------------------

  /**
   * The listing of one file from its head (its tail checked too), or from a full parse when the
   * head is unusual, with the stat of what was read. `undefined` when the file has gone.
   */
  const readListing = (path: string, id: string): { listing: SessionListing; stat?: NodeFs.Stats } | undefined => {
    let fd: number
    try {
      fd = openToRead(path)
    } catch (cause) {
      return codeOf(cause) === "ENOENT" ? undefined : { listing: unreadable(id, `cannot read: ${errnoText(cause)}`) }
    }
    try {
      const stat = fs.fstatSync(fd)
      if (!stat.isFile()) return { listing: unreadable(id, "not a regular file"), stat }
      const size = stat.size
      let want = HEAD_BYTES
      for (;;) {
        const buffer = want <= HEAD_BYTES ? head : Buffer.allocUnsafe(Math.min(want, size))
        const n = readFully(fd, buffer, Math.min(want, size), 0)
        if (n >= size) return { listing: listingOf(id, buffer.toString("utf8", 0, n)), stat }
        const messages = buffer.indexOf(MESSAGES_KEY)
        const first = messages < 0 || messages + 64 > n ? n : messages + 64
        let scan = scanHead(buffer.toString("utf8", 0, first), false)
        if (scan._tag === "NeedMore" && first < n) scan = scanHead(buffer.toString("utf8", 0, n), false)
        if (scan._tag === "Found") {
          const end = readFully(fd, tail, TAIL_BYTES, size - TAIL_BYTES)
          const listing = endsLikeObject(tail.toString("utf8", 0, end)) ? listingOfScan(id, scan) : undefined
          if (listing !== undefined) return { listing, stat }
        }
        if (scan._tag !== "NeedMore" || want >= MAX_HEAD_BYTES) {
          const whole = Buffer.allocUnsafe(size)
          return { listing: listingOfText(id, whole.toString("utf8", 0, readFully(fd, whole, size, 0))), stat }
        }
        want *= 16
      }
    } catch (cause) {
      return { listing: unreadable(id, `cannot read: ${errnoText(cause)}`) }
    } finally {
      fs.closeSync(fd)
    }
  }

  const loadIndex = (dir: string): Map<string, CacheEntry> => {
    const entries = new Map<string, CacheEntry>()
    if (!useIndex) return entries
    try {
      const json = JSON.parse(fs.readFileSync(NodePath.join(dir, INDEX_FILE), "utf8")) as unknown
      const { version, files } = (json ?? {}) as { version?: unknown; files?: unknown }
      if (version !== INDEX_VERSION || !Array.isArray(files)) return entries
      for (const value of files) {
        const entry = entryOfIndex(value)
        if (entry !== undefined) entries.set(entry[0], entry[1])
      }
    } catch {
      // no index yet, or a damaged one: every file is read again
    }
    return entries
  }

  const saveIndex = (dir: string, entries: Map<string, CacheEntry>): void => {
    if (!useIndex) return
    try {
      const temp = writeTemp(dir, "index", indexText(entries), false)
      try {
        fs.renameSync(temp, NodePath.join(dir, INDEX_FILE))
      } catch {
        unlinkQuietly(temp)
      }
    } catch {
      // a directory we cannot write still lists; the next listing reads the files again
    }
  }

  const cacheOf = (dir: string): DirCache => {
    let cache = caches.get(dir)
    if (cache === undefined) {
      cache = { entries: loadIndex(dir) }
      caches.set(dir, cache)
    }
    return cache
  }

  const listSync = (dir: string): ReadonlyArray<SessionListing> => {
    let names: Array<string>
    try {
      names = fs.readdirSync(dir)
    } catch (cause) {
      if (codeOf(cause) === "ENOENT") return []
      throw cause
    }
    const sessions = names.filter((name) => idOfFileName(name) !== undefined).sort().reverse()
    const { entries } = cacheOf(dir)
    const prefix = dir.endsWith(NodePath.sep) ? dir : dir + NodePath.sep
    const now = Date.now()
    let changed = false
    const found: Array<SessionListing> = []
    let kept = 0
    for (const name of sessions) {
      const path = prefix + name
      const cached = entries.get(name)
      if (cached !== undefined) {
        const stat = fs.statSync(path, { throwIfNoEntry: false })
        if (stat === undefined) continue
        if (sameFile(cached, stat)) {
          found.push(cached.listing)
          kept++
          continue
        }
      }
      const fresh = readListing(path, name.slice(0, 24))
      if (fresh === undefined) continue
      found.push(fresh.listing)
      if (fresh.stat !== undefined && now - fresh.stat.mtimeMs >= RACY_MS) {
        const { size, mtimeMs, ctimeMs, ino } = fresh.stat
        entries.set(name, { size, mtimeMs, ctimeMs, ino, listing: fresh.listing })
        changed = true
        kept++
      } else {
        entries.delete(name)
      }
    }
    if (entries.size > kept) {
      const present = new Set(sessions)
      for (const name of entries.keys()) {
        if (!present.has(name)) {
          entries.delete(name)
          changed = true
        }
      }
    }
    if (changed) saveIndex(dir, entries)
    sweepStaleTemps(prefix, names, now)
    return found
  }

  // -- the port ---------------------------------------------------------------------------

  const createExclusively = (dir: string, sessionOf: (id: string) => Session) =>
    attempt(() => {
      ensureDir(dir)
      for (let i = 0; i < CREATE_ATTEMPTS; i++) {
        const session = sessionOf(newId())
        if (placeExclusively(dir, fileOf(dir, session.id), encodeSession(session))) return session
      }
      throw new StoreError({
        reason: "exists",
        message: `cannot write ${dir}: no free session id after ${CREATE_ATTEMPTS} attempts`,
        raw: `every id tried already had a file`
      })
    }, ioError(`cannot write ${dir}`))

  const isDanglingLink = (path: string): boolean => {
    try {
      return fs.lstatSync(path).isSymbolicLink()
    } catch {
      return false
    }
  }

  /** The directory itself, or the nearest of its parents that exists (it must be a directory). */
  const nearestExisting = (dir: string): string => {
    for (let current = dir, depth = 0; depth < 256; depth++) {
      const stat = (() => {
        try {
          return fs.statSync(current)
        } catch (cause) {
          const code = codeOf(cause)
          if (code === "ENOENT" || code === "ENOTDIR") {
            // a symbolic link to nothing: no file could ever be made there
            if (code === "ENOENT" && isDanglingLink(current)) {
              throw Object.assign(new Error(`${current} is a dangling link`), {
                code: "ENOENT",
                words: `${current} is a symbolic link to ${fs.readlinkSync(current)}, which does not exist`
              })
            }
            return undefined
          }
          throw cause
        }
      })()
      if (stat !== undefined) {
        if (!stat.isDirectory()) {
          throw current === dir
            ? notADirectory(dir)
            : Object.assign(new Error(`${current} is a file`), { code: "ENOTDIR", words: `${current} is a file, not a directory` })
        }
        return current
      }
      const parent = NodePath.dirname(current)
      if (parent === current) break
      current = parent
    }
    throw Object.assign(new Error(`no existing parent of ${dir}`), { code: "ENOENT" })
  }

  /** Checks that sessions could be written there, creating nothing: the directory comes with the first file. */
  const prepare = Effect.fn("FileSessionStore.prepare")(function* (dir: string) {
    yield* attempt(() => {
      unlinkQuietly(writeTemp(nearestExisting(dir), "probe", "", false))
    }, ioError(`cannot write ${dir}`))
  })

  const createNew = Effect.fn("FileSessionStore.createNew")(function* (dir: string, cwd: string) {
    const now = new Date()
    return yield* createExclusively(dir, (id) => emptySession(id, cwd, now))
  })

  const archive = Effect.fn("FileSessionStore.archive")(function* (dir: string, session: Session) {
    yield* refuseNewer(session)
    return yield* createExclusively(dir, (id) => ({ ...session, version: SESSION_VERSION, id }))
  })

  const save = Effect.fn("FileSessionStore.save")(function* (dir: string, session: Session, expectedUpdatedAt?: string) {
    const id = yield* validId(session.id)
    yield* refuseNewer(session)
    const path = fileOf(dir, id)
    yield* attempt(() => {
      ensureDir(dir)
      const onDisk = stampOnDisk(path)
      if (onDisk?.version !== undefined && onDisk.version > SESSION_VERSION) throw notOverwritten(id, onDisk.version)
      if (onDisk !== undefined && expectedUpdatedAt !== undefined && onDisk.updatedAt !== expectedUpdatedAt) {
        throw changedMeanwhile(id, expectedUpdatedAt, onDisk.updatedAt)
      }
      replaceWith(dir, path, encodeSession(session))
    }, ioError(`cannot write ${path}`, id))
  })

  const load = Effect.fn("FileSessionStore.load")(function* (dir: string, id: string) {
    const valid = yield* validId(id)
    const path = fileOf(dir, valid)
    const text = yield* attempt(
      () => {
        const fd = openToRead(path)
        try {
          if (!fs.fstatSync(fd).isFile()) {
            throw new StoreError({ reason: "unreadable", id: valid, message: `session ${valid} is unreadable: not a regular file`, raw: path })
          }
          return fs.readFileSync(fd, "utf8")
        } finally {
          fs.closeSync(fd)
        }
      },
      (cause) =>
        codeOf(cause) === "ENOENT"
          ? notFound(dir, valid)
          : codeOf(cause) === "ELOOP"
            ? new StoreError({ reason: "unreadable", id: valid, message: `session ${valid} is unreadable: ${errnoText(cause)}`, raw: path })
            : ioError(`cannot read ${path}`, valid)(cause)
    )
    return yield* decodeFile(text, valid)
  })

  const list = Effect.fn("FileSessionStore.list")(function* (dir: string) {
    return yield* attempt(() => listSync(dir), ioError(`cannot list ${dir}`))
  })

  const remove = Effect.fn("FileSessionStore.remove")(function* (dir: string, id: string) {
    const valid = yield* validId(id)
    const path = fileOf(dir, valid)
    yield* attempt(
      () => fs.unlinkSync(path),
      (cause) => (codeOf(cause) === "ENOENT" ? notFound(dir, valid) : ioError(`cannot delete ${path}`, valid)(cause))
    )
  })

  return { prepare, createNew, archive, save, load, list, remove }
}

export const layerWith = (options: FileStoreOptions): Layer.Layer<SessionStore> =>
  Layer.sync(SessionStore, () => make(options))

/** The production store. */
export const layer: Layer.Layer<SessionStore> = layerWith({})
export const FileSessionStoreLive = layer
