import { isAscii } from "node:buffer"
import type * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import * as Durable from "../lib/DurableFiles"
import { idOfFileName, isArchiveListing, unreadable } from "./SessionCodec"
import { codeOf, type Fs, type Reader, readListing, sweepStaleTemps, writeTemp } from "./SessionFileIO"
import type { SessionListing } from "./SessionStore"

/**
 * The fast listing of a session directory: each file's listing is kept with the stat it was
 * read under, in memory per directory and in `<dir>/.index.json` across processes, so that a
 * file is read again only when its stat changed. The index file is written once the listing
 * is returned (`writeSoon`), not on its way.
 */

export const INDEX_FILE = ".index.json"
const INDEX_VERSION = 1
/** A file changed this recently may change again within the same timestamp tick: not cached. */
const RACY_MS = 2000

interface CacheEntry {
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly ino: number
  readonly listing: SessionListing
}

/** The entries of one directory, by file name. */
type DirCache = Map<string, CacheEntry>

/** The listing state of one store: its reads, and a cache per directory listed. */
export interface ListingIndex {
  readonly reader: Reader
  /** Keep the cache in `<dir>/.index.json` across processes. */
  readonly persist: boolean
  readonly caches: Map<string, DirCache>
  /** The directories whose index file is to be written (see `writeSoon`). */
  readonly unwritten: Set<string>
}

export const makeListingIndex = (reader: Reader, persist: boolean): ListingIndex => ({
  reader,
  persist,
  caches: new Map(),
  unwritten: new Set()
})

const sameFile = (entry: CacheEntry, stat: NodeFs.Stats): boolean =>
  entry.size === stat.size && entry.mtimeMs === stat.mtimeMs && entry.ctimeMs === stat.ctimeMs && entry.ino === stat.ino

// ---- the index file ----

const isString = (value: unknown): value is string => typeof value === "string"
const isNumber = (value: unknown): value is number => typeof value === "number"

/**
 * One entry of `.index.json`: `[name, size, mtimeMs, ctimeMs, ino, reason]` for an unreadable
 * file, `[name, size, mtimeMs, ctimeMs, ino, cwd, createdAt, updatedAt, title, turns, errors]`
 * otherwise, with `archiveOf, forkedFromId, forkedFromTurn` after them (each null when absent) for
 * an archive or a fork. Checked field by field: it is a cache, and anything odd is dropped. Names are
 * only ever looked up from the directory's own valid `<id>.json` names.
 */
const entryOfIndex = (value: unknown): [string, CacheEntry] | undefined => {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 11 && value.length !== 14)) return undefined
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
  const archiveOf: unknown = value[11]
  if (!isString(cwd) || !isString(createdAt) || !isString(updatedAt) || !isString(title)) return undefined
  if (!isNumber(turns) || !isNumber(errors)) return undefined
  if (value.length === 14 && archiveOf !== null && !isString(archiveOf)) return undefined
  const from: unknown = value[12]
  const fromTurn: unknown = value[13]
  const forked = isString(from) && isNumber(fromTurn) ? { id: from, turn: fromTurn } : undefined
  if (value.length === 14 && forked === undefined && (from !== null || fromTurn !== null)) return undefined
  const summary = {
    id,
    cwd,
    createdAt,
    updatedAt,
    title,
    turns,
    errors,
    ...(isString(archiveOf) ? { archiveOf } : {}),
    ...(forked ? { forkedFrom: forked } : {})
  }
  return [name, { size, mtimeMs, ctimeMs, ino, listing: { _tag: "Readable", summary } }]
}

const NON_ASCII = /[\u0080-\uffff]/
const NON_ASCII_ALL = /[\u0080-\uffff]/g

const indexText = (entries: DirCache): string => {
  const files: Array<ReadonlyArray<unknown>> = []
  for (const [name, { size, mtimeMs, ctimeMs, ino, listing }] of entries) {
    if (listing._tag === "Readable") {
      const { archiveOf, cwd, createdAt, updatedAt, title, turns, errors, forkedFrom } = listing.summary
      const fields = [name, size, mtimeMs, ctimeMs, ino, cwd, createdAt, updatedAt, title, turns, errors]
      files.push(
        archiveOf === undefined && forkedFrom === undefined
          ? fields
          : [...fields, archiveOf ?? null, forkedFrom?.id ?? null, forkedFrom?.turn ?? null]
      )
    } else {
      files.push([name, size, mtimeMs, ctimeMs, ino, listing.reason])
    }
  }
  // written as ASCII alone (other characters as \u escapes), so that it is read as latin1, which
  // is faster than decoding UTF-8: about 2 ms of every listing of 10,000 sessions; the text is
  // copied to escape them only when there is one (testing is half the time of replacing nothing)
  const json = JSON.stringify({ version: INDEX_VERSION, files })
  return NON_ASCII.test(json)
    ? json.replace(NON_ASCII_ALL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json
}

/** The index's text: latin1 when it is ASCII alone (as mm writes it), UTF-8 otherwise. */
const readIndexText = (fs: Fs, file: string): string => {
  const bytes = fs.readFileSync(file)
  return bytes.toString(isAscii(bytes) ? "latin1" : "utf8")
}

const readIndexFile = (fs: Fs, dir: string): DirCache => {
  const entries: DirCache = new Map()
  try {
    const json = JSON.parse(readIndexText(fs, NodePath.join(dir, INDEX_FILE))) as unknown
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

const writeIndexFile = (fs: Fs, dir: string, entries: DirCache): void => {
  try {
    const temp = writeTemp(fs, dir, "index", indexText(entries), false)
    try {
      fs.renameSync(temp, NodePath.join(dir, INDEX_FILE))
    } catch {
      Durable.unlinkQuietly(temp, fs)
    }
  } catch {
    // a directory we cannot write still lists; the next listing reads the files again
  }
}

/** Writes the index files still to be written of one store. */
const writeUnwritten = (index: ListingIndex): void => {
  for (const dir of index.unwritten) {
    const entries = index.caches.get(dir)
    if (entries !== undefined) writeIndexFile(index.reader.fs, dir, entries)
  }
  index.unwritten.clear()
}

/** The stores with an index file still to be written, for the process's exit. */
const waiting = new Set<ListingIndex>()
let exitHooked = false

const writeAllUnwritten = (): void => {
  for (const index of waiting) writeUnwritten(index)
  waiting.clear()
}

/**
 * Has `dir`'s index file written once the listing is in the caller's hands: after the current
 * turn of the event loop (a terminal or an editor shows the listing first), or at the process's
 * exit if that comes sooner. Building and writing it (15–40 ms for 10,000 sessions) is then
 * off the way of the listing; a process killed before it loses only a cache.
 */
const writeSoon = (index: ListingIndex, dir: string): void => {
  index.unwritten.add(dir)
  if (waiting.has(index)) return
  waiting.add(index)
  if (!exitHooked) {
    exitHooked = true
    process.once("exit", writeAllUnwritten)
  }
  setImmediate(() => {
    if (!waiting.delete(index)) return
    writeUnwritten(index)
  })
}

const cacheOf = (index: ListingIndex, dir: string): DirCache => {
  let cache = index.caches.get(dir)
  if (cache === undefined) {
    cache = index.persist ? readIndexFile(index.reader.fs, dir) : new Map()
    index.caches.set(dir, cache)
  }
  return cache
}

// ---- the listing ----

/** Drops the entries of files no longer in the directory; true when there were any. */
const forgetRemoved = (entries: DirCache, sessions: ReadonlyArray<string>): boolean => {
  const present = new Set(sessions)
  let removed = false
  for (const name of entries.keys()) {
    if (!present.has(name)) {
      entries.delete(name)
      removed = true
    }
  }
  return removed
}

/** Every session of `dir`, newest id first, each from the cache while its file is unchanged. */
export const listDir = (index: ListingIndex, dir: string): ReadonlyArray<SessionListing> => {
  const { fs } = index.reader
  let names: Array<string>
  try {
    names = fs.readdirSync(dir)
  } catch (cause) {
    if (codeOf(cause) === "ENOENT") return []
    throw cause
  }
  const sessions = names.filter((name) => idOfFileName(name) !== undefined).sort().reverse()
  const entries = cacheOf(index, dir)
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
        if (!isArchiveListing(cached.listing)) found.push(cached.listing)
        kept++
        continue
      }
    }
    const fresh = readListing(index.reader, path, name.slice(0, 24))
    if (fresh === undefined) continue
    // an archive is kept in the cache (it is not read again) but never listed
    if (!isArchiveListing(fresh.listing)) found.push(fresh.listing)
    if (fresh.stat !== undefined && now - fresh.stat.mtimeMs >= RACY_MS) {
      const { size, mtimeMs, ctimeMs, ino } = fresh.stat
      entries.set(name, { size, mtimeMs, ctimeMs, ino, listing: fresh.listing })
      changed = true
      kept++
    } else {
      entries.delete(name)
    }
  }
  if (entries.size > kept && forgetRemoved(entries, sessions)) changed = true
  if (changed && index.persist) writeSoon(index, dir)
  sweepStaleTemps(fs, prefix, names, now)
  return found
}
