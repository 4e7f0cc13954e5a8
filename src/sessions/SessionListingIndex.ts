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
const INDEX_VERSION = 2
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
 * One entry of `.index.json`'s `others`: `[name, size, mtimeMs, ctimeMs, ino, reason]` for an
 * unreadable file, `[name, size, mtimeMs, ctimeMs, ino, cwd, createdAt, updatedAt, title, turns,
 * errors, archiveOf, forkedFromId, forkedFromTurn]` for an archive or a fork (each of the last
 * three null when absent). Checked field by field: it is a cache, and anything odd is dropped.
 * Names are only ever looked up from the directory's own valid `<id>.json` names.
 */
const entryOfIndex = (value: unknown): [string, CacheEntry] | undefined => {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 14)) return undefined
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
  if (archiveOf !== null && !isString(archiveOf)) return undefined
  const from: unknown = value[12]
  const fromTurn: unknown = value[13]
  const forked = isString(from) && isNumber(fromTurn) ? { id: from, turn: fromTurn } : undefined
  if (forked === undefined && (from !== null || fromTurn !== null)) return undefined
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

/** The columns of `.index.json`: one array per field, a row per usual session. */
export const INDEX_COLUMNS = [
  "id",
  "size",
  "mtimeMs",
  "ctimeMs",
  "ino",
  "cwd",
  "createdAt",
  "updatedAt",
  "title",
  "turns",
  "errors"
] as const
type Column = (typeof INDEX_COLUMNS)[number]
type Columns = Record<Column, ReadonlyArray<unknown>>

/**
 * What `.index.json` holds, for the first listing of a directory in this process: its
 * columns, read row by row in the listing's own order (newest id first), and its other entries
 * by name. `next` is where the listing is in the columns; `taken` counts the rows it found a
 * file for (fewer than `rows`: some file has gone, and the index is written again).
 */
interface IndexTable {
  readonly columns: Columns | undefined
  readonly cwds: ReadonlyArray<unknown>
  readonly others: Map<string, CacheEntry>
  readonly rows: number
  next: number
  taken: number
}

/** The columns, when each is an array as long as the first; anything else is no columns. */
const columnsOf = (json: Record<string, unknown>): Columns | undefined => {
  const ids = json.id
  if (!Array.isArray(ids)) return undefined
  const columns: Partial<Columns> = {}
  for (const key of INDEX_COLUMNS) {
    const column = json[key]
    if (!Array.isArray(column) || column.length !== ids.length) return undefined
    columns[key] = column
  }
  return columns as Columns
}

/** The cache entry of row `k`, checked field by field (a cache: anything odd is dropped). */
const rowEntry = (table: IndexTable, columns: Columns, k: number, id: string): CacheEntry | undefined => {
  const size = columns.size[k]
  const mtimeMs = columns.mtimeMs[k]
  const ctimeMs = columns.ctimeMs[k]
  const ino = columns.ino[k]
  const at = columns.cwd[k]
  const cwd = isNumber(at) ? table.cwds[at] : undefined
  const createdAt = columns.createdAt[k]
  const updatedAt = columns.updatedAt[k]
  const title = columns.title[k]
  const turns = columns.turns[k]
  const errors = columns.errors[k]
  if (!isNumber(size) || !isNumber(mtimeMs) || !isNumber(ctimeMs) || !isNumber(ino) || !isNumber(turns)) {
    return undefined
  }
  if (!isString(cwd) || !isString(createdAt) || !isString(updatedAt) || !isString(title) || !isNumber(errors)) {
    return undefined
  }
  const summary = { id, cwd, createdAt, updatedAt, title, turns, errors }
  return { size, mtimeMs, ctimeMs, ino, listing: { _tag: "Readable", summary } }
}

/**
 * The index's entry for the file `name` (of id `id`), when it has one. The names are asked for
 * in the order the columns are written in, so each row is looked at once.
 */
const takeFromTable = (table: IndexTable, name: string, id: string): CacheEntry | undefined => {
  const other = table.others.get(name)
  if (other !== undefined) {
    table.taken++
    return other
  }
  const columns = table.columns
  if (columns === undefined) return undefined
  const ids = columns.id
  let k = table.next
  while (k < ids.length && (ids[k] as string) > id) k++
  table.next = k
  if (k >= ids.length || ids[k] !== id) return undefined
  table.next = k + 1
  table.taken++
  return rowEntry(table, columns, k, id)
}

const NON_ASCII = /[\u0080-\uffff]/
const NON_ASCII_ALL = /[\u0080-\uffff]/g

/** A readable session that is neither an archive nor a fork: a row of the columns. */
const isUsual = (listing: SessionListing): listing is Extract<SessionListing, { _tag: "Readable" }> =>
  listing._tag === "Readable" && listing.summary.archiveOf === undefined && listing.summary.forkedFrom === undefined

const otherEntry = (name: string, { ctimeMs, ino, listing, mtimeMs, size }: CacheEntry): ReadonlyArray<unknown> => {
  if (listing._tag !== "Readable") return [name, size, mtimeMs, ctimeMs, ino, listing.reason]
  const { archiveOf, createdAt, cwd, errors, forkedFrom, title, turns, updatedAt } = listing.summary
  return [
    name,
    size,
    mtimeMs,
    ctimeMs,
    ino,
    cwd,
    createdAt,
    updatedAt,
    title,
    turns,
    errors,
    archiveOf ?? null,
    forkedFrom?.id ?? null,
    forkedFrom?.turn ?? null
  ]
}

const indexText = (entries: DirCache): string => {
  const cwds: Array<string> = []
  const cwdAt = new Map<string, number>()
  const columns: Record<Column, Array<unknown>> = {
    id: [],
    size: [],
    mtimeMs: [],
    ctimeMs: [],
    ino: [],
    cwd: [],
    createdAt: [],
    updatedAt: [],
    title: [],
    turns: [],
    errors: []
  }
  const others: Array<ReadonlyArray<unknown>> = []
  // the listing's order (newest id first), in which a listing takes the rows
  for (const name of [...entries.keys()].sort().reverse()) {
    const entry = entries.get(name)!
    const { listing } = entry
    if (!isUsual(listing)) {
      others.push(otherEntry(name, entry))
      continue
    }
    const { createdAt, cwd, errors, title, turns, updatedAt } = listing.summary
    let at = cwdAt.get(cwd)
    if (at === undefined) {
      at = cwds.push(cwd) - 1
      cwdAt.set(cwd, at)
    }
    columns.id.push(name.slice(0, 24))
    columns.size.push(entry.size)
    columns.mtimeMs.push(entry.mtimeMs)
    columns.ctimeMs.push(entry.ctimeMs)
    columns.ino.push(entry.ino)
    columns.cwd.push(at)
    columns.createdAt.push(createdAt)
    columns.updatedAt.push(updatedAt)
    columns.title.push(title)
    columns.turns.push(turns)
    columns.errors.push(errors)
  }
  // written as ASCII alone (other characters as \u escapes), so that it is read as latin1, which
  // is faster than decoding UTF-8: about 2 ms of every listing of 10,000 sessions; the text is
  // copied to escape them only when there is one (testing is half the time of replacing nothing)
  const json = JSON.stringify({ version: INDEX_VERSION, cwds, ...columns, others })
  return NON_ASCII.test(json)
    ? json.replace(NON_ASCII_ALL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json
}

/** The index's text: latin1 when it is ASCII alone (as mm writes it), UTF-8 otherwise. */
const readIndexText = (fs: Fs, file: string): string => {
  const bytes = fs.readFileSync(file)
  return bytes.toString(isAscii(bytes) ? "latin1" : "utf8")
}

const readIndexTable = (fs: Fs, dir: string): IndexTable | undefined => {
  let json: unknown
  try {
    json = JSON.parse(readIndexText(fs, NodePath.join(dir, INDEX_FILE)))
  } catch {
    // no index yet, or a damaged one: every file is read again
    return undefined
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) return undefined
  const record = json as Record<string, unknown>
  if (record.version !== INDEX_VERSION) return undefined
  const others = new Map<string, CacheEntry>()
  if (Array.isArray(record.others)) {
    for (const value of record.others) {
      const entry = entryOfIndex(value)
      if (entry !== undefined) others.set(entry[0], entry[1])
    }
  }
  const columns = columnsOf(record)
  const cwds = Array.isArray(record.cwds) ? record.cwds : []
  return { columns, cwds, others, rows: (columns?.id.length ?? 0) + others.size, next: 0, taken: 0 }
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
    if (index.persist) table = readIndexTable(fs, dir)
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
