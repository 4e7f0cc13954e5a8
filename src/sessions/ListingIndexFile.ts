import { isAscii } from "node:buffer"
import * as NodePath from "node:path"

import * as Durable from "../lib/DurableFiles"
import { readRegularSync } from "../lib/RegularFiles"
import { unreadable } from "./SessionCodec"
import { type Fs, writeTemp } from "./SessionFileIO"
import { type HeadValue, LISTED, partsOf } from "./SessionHead"
import type { SessionListing, SessionSummary } from "./SessionStore"

/**
 * The listing index's file, `<dir>/.index.json`: what it holds (a column per field of the
 * head that a usual session has, SessionHead.ts; an entry of `others` for any other file), how
 * it is read back, checked entry by entry, and written. The listing (SessionListingIndex.ts)
 * decides when.
 */

export const INDEX_FILE = ".index.json"
/**
 * 6: a sub-agent's session (`parent`) is an entry of `others`, with its parent. One of 5 was
 * written by an mm that read no `parent`: a sub-agent's session may be a row there, as if it were
 * a conversation of its own, and is ignored like any other version (the files are read again).
 * 5: `turns` as a full read gives it (domain/Turns.ts), the head trusted only when it says this
 * mm's `numbering` (SessionHead.ts). Those of 3 and 4 may hold the count of a file written before
 * cancelled turns counted as its head said it.
 */
const INDEX_VERSION = 6

/** What the listing knows of one file: its listing, with the stat it was read under. */
export interface CacheEntry {
  readonly size: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly ino: number
  readonly listing: SessionListing
}

/** The entries of one directory, by file name. */
export type DirCache = Map<string, CacheEntry>

const isString = (value: unknown): value is string => typeof value === "string"
const isNumber = (value: unknown): value is number => typeof value === "number"

/**
 * One value of `.index.json` for a listed head field (SessionHead.ts): the field's, or one
 * part of a fork's, in `HEAD`'s order. The cells of the fields listed as `column` or `shared`
 * are the columns of the rows; a shared one holds positions in the table `<name>s`.
 */
interface Cell {
  readonly name: string
  readonly key: string
  /** For a part of a fork or a parent: which. */
  readonly part?: string
  readonly column: boolean
  readonly shared: boolean
}

const CELLS: ReadonlyArray<Cell> = LISTED.flatMap(({ key, listing, value }): ReadonlyArray<Cell> => {
  const column = listing === "column" || listing === "shared"
  const shared = listing === "shared"
  const parts = partsOf(value)
  return parts !== undefined
    ? parts.map((part) => ({
      name: key + part.key.charAt(0).toUpperCase() + part.key.slice(1),
      key,
      part: part.key,
      column,
      shared
    }))
    : [{ name: key, key, column, shared }]
})
const COLUMN_CELLS = CELLS.filter((cell) => cell.column)
/** The fields a session may have only as an entry of `others`. */
const OTHERS_ONLY = LISTED.filter((field) => field.listing === "others").map((field) => field.key)

/** A readable session whose fields all fit the columns (no archive, no fork, no sub-agent's): a row. */
const isUsual = (listing: SessionListing): listing is Extract<SessionListing, { _tag: "Readable" }> =>
  listing._tag === "Readable" &&
  OTHERS_ONLY.every((key) => (listing.summary as unknown as Record<string, unknown>)[key] === undefined)

/** The cells of a summary, in `CELLS`' order: `null` for a field it has not. */
const cellsOf = (summary: SessionSummary): Array<unknown> =>
  CELLS.map(({ key, part }) => {
    const value = (summary as unknown as Record<string, unknown>)[key]
    if (value === undefined) return null
    return part === undefined ? value : (value as Record<string, unknown>)[part]
  })

const isKind = (value: unknown, kind: HeadValue): boolean => (kind === "text" ? isString(value) : isNumber(value))

/**
 * The summary of `id` from its cells, in `CELLS`' order, each checked for its kind (it is a
 * cache: anything odd is dropped); `null` stands for an optional field the session has not.
 */
const summaryOfCells = (id: string, cells: ReadonlyArray<unknown>): SessionSummary | undefined => {
  const summary: Record<string, unknown> = { id }
  let j = 0
  for (const field of LISTED) {
    const parts = partsOf(field.value)
    if (parts === undefined) {
      const value = cells[j++]
      if (value === null && field.optional) continue
      if (!isKind(value, field.value)) return undefined
      summary[field.key] = value
      continue
    }
    const values = cells.slice(j, j + parts.length)
    j += parts.length
    if (field.optional && values.every((value) => value === null)) continue
    const object: Record<string, unknown> = {}
    for (const [i, part] of parts.entries()) {
      if (!isKind(values[i], part.value)) return undefined
      object[part.key] = values[i]
    }
    summary[field.key] = object
  }
  return summary as unknown as SessionSummary
}

/**
 * One entry of `.index.json`'s `others`: `[name, size, mtimeMs, ctimeMs, ino, reason]` for an
 * unreadable file, `[name, size, mtimeMs, ctimeMs, ino, ...cells]` for an archive, a fork or a sub-agent's session
 * (`CELLS`, shared ones as their value). Checked field by field: it is a cache, and anything
 * odd is dropped. Names are only ever looked up from the directory's own valid `<id>.json` names.
 */
const entryOfIndex = (value: unknown): [string, CacheEntry] | undefined => {
  if (!Array.isArray(value) || (value.length !== 6 && value.length !== 5 + CELLS.length)) return undefined
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
  const summary = summaryOfCells(id, value.slice(5))
  return summary && [name, { size, mtimeMs, ctimeMs, ino, listing: { _tag: "Readable", summary } }]
}

/** The columns of `.index.json`: one array per field, a row per usual session. */
export const INDEX_COLUMNS = [
  "id",
  "size",
  "mtimeMs",
  "ctimeMs",
  "ino",
  ...COLUMN_CELLS.map((cell) => cell.name)
] as const
type Columns = Record<string, ReadonlyArray<unknown>>

/**
 * What `.index.json` holds, for the first listing of a directory in this process: its
 * columns, read row by row in the listing's own order (newest id first), the tables of its
 * shared columns, and its other entries by name. `next` is where the listing is in the columns;
 * `taken` counts the rows it found a file for (fewer than `rows`: some file has gone, and the
 * index is written again).
 */
export interface IndexTable {
  readonly columns: Columns | undefined
  readonly tables: Record<string, ReadonlyArray<unknown>>
  readonly others: Map<string, CacheEntry>
  readonly rows: number
  next: number
  taken: number
}

/** The columns, when each is an array as long as the first; anything else is no columns. */
const columnsOf = (json: Record<string, unknown>): Columns | undefined => {
  const ids = json.id
  if (!Array.isArray(ids)) return undefined
  const columns: Columns = {}
  for (const key of INDEX_COLUMNS) {
    const column = json[key]
    if (!Array.isArray(column) || column.length !== ids.length) return undefined
    columns[key] = column
  }
  return columns
}

/**
 * The cache entry of row `k`, checked field by field (a cache: anything odd is dropped). The
 * summary is taken from its columns by name: through `summaryOfCells`, 10,000 rows took about
 * 2 ms longer (0.5 against 2.5 ms). The tests hold the two to the head's description.
 */
const rowEntry = (table: IndexTable, columns: Columns, k: number, id: string): CacheEntry | undefined => {
  const size = columns.size[k]
  const mtimeMs = columns.mtimeMs[k]
  const ctimeMs = columns.ctimeMs[k]
  const ino = columns.ino[k]
  const at = columns.cwd[k]
  const cwd = isNumber(at) ? table.tables.cwd?.[at] : undefined
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
  const summary: SessionSummary = { id, cwd, createdAt, updatedAt, title, turns, errors }
  return { size, mtimeMs, ctimeMs, ino, listing: { _tag: "Readable", summary } }
}

/**
 * The index's entry for the file `name` (of id `id`), when it has one. The names are asked for
 * in the order the columns are written in, so each row is looked at once.
 */
export const takeFromTable = (table: IndexTable, name: string, id: string): CacheEntry | undefined => {
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

const otherEntry = (name: string, { ctimeMs, ino, listing, mtimeMs, size }: CacheEntry): ReadonlyArray<unknown> =>
  listing._tag === "Readable"
    ? [name, size, mtimeMs, ctimeMs, ino, ...cellsOf(listing.summary)]
    : [name, size, mtimeMs, ctimeMs, ino, listing.reason]

const indexText = (entries: DirCache): string => {
  const tables: Record<string, Array<unknown>> = {}
  const positions = new Map<string, Map<unknown, number>>()
  for (const cell of COLUMN_CELLS) {
    if (!cell.shared) continue
    tables[`${cell.name}s`] = []
    positions.set(cell.name, new Map())
  }
  const columns: Record<string, Array<unknown>> = {}
  for (const key of INDEX_COLUMNS) columns[key] = []
  const others: Array<ReadonlyArray<unknown>> = []
  // the listing's order (newest id first), in which a listing takes the rows
  for (const name of [...entries.keys()].sort().reverse()) {
    const entry = entries.get(name)!
    const { listing } = entry
    if (!isUsual(listing)) {
      others.push(otherEntry(name, entry))
      continue
    }
    columns.id.push(name.slice(0, 24))
    columns.size.push(entry.size)
    columns.mtimeMs.push(entry.mtimeMs)
    columns.ctimeMs.push(entry.ctimeMs)
    columns.ino.push(entry.ino)
    const cells = cellsOf(listing.summary)
    for (let j = 0; j < CELLS.length; j++) {
      const { column, name: cell, shared } = CELLS[j]
      if (!column) continue
      const value = cells[j]
      const known = shared ? positions.get(cell) : undefined
      if (known === undefined) {
        columns[cell].push(value)
        continue
      }
      let at = known.get(value)
      if (at === undefined) {
        at = tables[`${cell}s`].push(value) - 1
        known.set(value, at)
      }
      columns[cell].push(at)
    }
  }
  // written as ASCII alone (other characters as \u escapes), so that it is read as latin1, which
  // is faster than decoding UTF-8: about 2 ms of every listing of 10,000 sessions; the text is
  // copied to escape them only when there is one (testing is half the time of replacing nothing)
  const json = JSON.stringify({ version: INDEX_VERSION, ...tables, ...columns, others })
  return NON_ASCII.test(json)
    ? json.replace(NON_ASCII_ALL, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`)
    : json
}

/** An index larger than this is not read (it is rebuilt): 10,000 sessions make about 3 MB. */
const INDEX_MAX_BYTES = 256 * 1024 * 1024

/** The index's text: latin1 when it is ASCII alone (as mm writes it), UTF-8 otherwise. */
const readIndexText = (fs: Fs, file: string): string => {
  const bytes = readRegularSync(file, INDEX_MAX_BYTES, fs)
  return bytes.toString(isAscii(bytes) ? "latin1" : "utf8")
}

/** The index of `dir`, when it has one of this version. */
export const readIndexTable = (fs: Fs, dir: string): IndexTable | undefined => {
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
  const tables: Record<string, ReadonlyArray<unknown>> = {}
  for (const cell of COLUMN_CELLS) {
    const values = record[`${cell.name}s`]
    if (cell.shared && Array.isArray(values)) tables[cell.name] = values
  }
  return { columns, tables, others, rows: (columns?.id.length ?? 0) + others.size, next: 0, taken: 0 }
}

export const writeIndexFile = (fs: Fs, dir: string, entries: DirCache): void => {
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
