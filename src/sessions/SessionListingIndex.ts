import type * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import {
  type CacheEntry,
  type DirCache,
  type IndexTable,
  readIndexTable,
  takeFromTable,
  writeIndexFile
} from "./ListingIndexFile"
import { idOfFileName, isArchiveListing } from "./SessionCodec"
import { codeOf, type Reader, readListing, sweepStaleTemps } from "./SessionFileIO"
import type { SessionListing } from "./SessionStore"

/**
 * The fast listing of a session directory: each file's listing is kept with the stat it was
 * read under, in memory per directory and in `<dir>/.index.json` across processes, so that a
 * file is read again only when its stat changed. The index file is written once the listing
 * is returned (`writeSoon`), not on its way, or when the store's scope closes, if sooner; its
 * format is ListingIndexFile.ts.
 */

/** A file changed this recently may change again within the same timestamp tick: not cached. */
const RACY_MS = 2000

/** The listing state of one store: its reads, and a cache per directory listed. */
export interface ListingIndex {
  readonly reader: Reader
  /** Keep the cache in `<dir>/.index.json` across processes. */
  readonly persist: boolean
  readonly caches: Map<string, DirCache>
  /** The directories whose index file is to be written (see `writeSoon`); while there are any, a write is on its way. */
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

/**
 * Writes the index files still to be written of one store: soon after a listing (`writeSoon`),
 * and in the finalizer of the store's scope (FileSessionStore.ts), when mm ends sooner.
 */
export const writeUnwritten = (index: ListingIndex): void => {
  for (const dir of index.unwritten) {
    const entries = index.caches.get(dir)
    if (entries !== undefined) writeIndexFile(index.reader.fs, dir, entries)
  }
  index.unwritten.clear()
}

/**
 * Has `dir`'s index file written once the listing is in the caller's hands: after the current
 * turn of the event loop (a terminal or an editor shows the listing first), or as the store's
 * scope closes if that comes sooner. Building and writing it (15–40 ms for 10,000 sessions) is
 * then off the way of the listing; a process killed before it loses only a cache.
 */
const writeSoon = (index: ListingIndex, dir: string): void => {
  // a write is already on its way while some directory waits for one
  const pending = index.unwritten.size > 0
  index.unwritten.add(dir)
  if (!pending) setImmediate(() => writeUnwritten(index))
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
  let entries = index.caches.get(dir)
  // the first listing of `dir` in this process takes what the index file holds
  let table: IndexTable | undefined
  if (entries === undefined) {
    entries = new Map()
    index.caches.set(dir, entries)
    table = index.persist ? readIndexTable(fs, dir) : undefined
  }
  const prefix = dir.endsWith(NodePath.sep) ? dir : dir + NodePath.sep
  const now = Date.now()
  let changed = false
  const found: Array<SessionListing> = []
  let kept = 0
  for (const name of sessions) {
    const path = prefix + name
    const id = name.slice(0, 24)
    let cached = entries.get(name)
    let fromTable = false
    if (cached === undefined && table !== undefined) {
      cached = takeFromTable(table, name, id)
      fromTable = true
    }
    if (cached !== undefined) {
      const stat = fs.statSync(path, { throwIfNoEntry: false })
      if (stat === undefined) continue
      if (sameFile(cached, stat)) {
        if (fromTable) entries.set(name, cached)
        if (!isArchiveListing(cached.listing)) found.push(cached.listing)
        kept++
        continue
      }
    }
    const fresh = readListing(index.reader, path, id)
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
  // an index row no file was found for: that file has gone
  if (table !== undefined && table.taken < table.rows) changed = true
  if (entries.size > kept && forgetRemoved(entries, sessions)) changed = true
  if (changed && index.persist) writeSoon(index, dir)
  sweepStaleTemps(fs, prefix, names, now)
  return found
}
