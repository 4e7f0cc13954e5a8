/**
 * The head of a session file: the fields mm writes before `messages`, so that a listing reads
 * a file's summary from its first bytes. This list is the one description of it: the encoder
 * writes the fields in its order (SessionCodec.ts), the head scanner's one regular expression
 * and its field-by-field reading are made from it (HeadScanner.ts), and the listing index's
 * columns are its fields (ListingIndexFile.ts). A field added here is written, read fast
 * and kept in the index; `test/sessions/SessionHead.test.ts` holds the three to it.
 */

/**
 * How a field's value is written and what a listing makes of it:
 * - `version`: a whole number, the format's version, always written as this mm's;
 * - `numbering`: a whole number, how the file's turns are numbered, always written as this mm's
 *   (`NUMBERING`); a head with another, or without it, is not trusted (its file is read whole);
 * - `count`: a whole number;
 * - `text`: a string;
 * - `fork`: an object of `FORK_PARTS`, `{"id": …, "turn": …}`;
 * - `parent`: an object of `PARENT_PARTS`, `{"id": …, "turn": …, "callId": …}`;
 * - `records`: an array of flat objects (the `errors`), listed as their number.
 */
export type HeadValue = "version" | "numbering" | "count" | "text" | "fork" | "parent" | "records"

/**
 * The numbering of the files this mm writes: 2, turn N is the N-th question held, a cancelled
 * turn included (domain/Turns.ts). A file without it was written when `turns` counted only the
 * turns that finished; its `turns` is right only once the whole file is read and renumbered
 * (`withNumbering`), so a listing reads such a file whole (once: the index keeps what it found).
 */
export const NUMBERING = 2

/**
 * Where a listing keeps a field. `unlisted`: not in a listing's summary (the version is
 * checked, the id is the file's name). Otherwise in the summary, and in `.index.json` as a
 * `column` of its rows, a `shared` column (positions in a table of its distinct values, written
 * once each: a project's path, the same in most rows), or only in `others` (a session that has
 * the field is an entry there, not a row).
 */
export type HeadListing = "unlisted" | "column" | "shared" | "others"

export interface HeadField {
  readonly key: string
  readonly value: HeadValue
  /** Written only when the session has it (and then where it stands in this list). */
  readonly optional: boolean
  readonly listing: HeadListing
}

/** The head, in the order mm writes it. */
export const HEAD = [
  { key: "version", value: "version", optional: false, listing: "unlisted" },
  { key: "numbering", value: "numbering", optional: false, listing: "unlisted" },
  { key: "id", value: "text", optional: false, listing: "unlisted" },
  { key: "cwd", value: "text", optional: false, listing: "shared" },
  { key: "createdAt", value: "text", optional: false, listing: "column" },
  { key: "updatedAt", value: "text", optional: false, listing: "column" },
  { key: "title", value: "text", optional: false, listing: "column" },
  { key: "turns", value: "count", optional: false, listing: "column" },
  { key: "forkedFrom", value: "fork", optional: true, listing: "others" },
  { key: "parent", value: "parent", optional: true, listing: "others" },
  { key: "archiveOf", value: "text", optional: true, listing: "others" },
  { key: "errors", value: "records", optional: false, listing: "column" }
] as const satisfies ReadonlyArray<HeadField>

/** The key that ends the head: a listing reads no further. */
export const HEAD_END = "messages"

/** The parts of a `fork` value, in the order they are written. */
export const FORK_PARTS = [
  { key: "id", value: "text" },
  { key: "turn", value: "count" }
] as const satisfies ReadonlyArray<{ readonly key: string; readonly value: "text" | "count" }>

/** The parts of a `parent` value (a sub-agent's session: the `task` call that ran it), in the order they are written. */
export const PARENT_PARTS = [
  { key: "id", value: "text" },
  { key: "turn", value: "count" },
  { key: "callId", value: "text" }
] as const satisfies ReadonlyArray<{ readonly key: string; readonly value: "text" | "count" }>

/** A value written as an object of named parts: its parts, in their order. */
export type Part = { readonly key: string; readonly value: "text" | "count" }
export const PARTS: { readonly fork: ReadonlyArray<Part>; readonly parent: ReadonlyArray<Part> } = {
  fork: FORK_PARTS,
  parent: PARENT_PARTS
}

/** The parts of a value of kind `value`, when it is written as an object of them. */
export const partsOf = (value: HeadValue): ReadonlyArray<Part> | undefined =>
  value === "fork" || value === "parent" ? PARTS[value] : undefined

/** The position in `HEAD` of its `version` field (the scanners return it beside the summary). */
export const VERSION_AT = HEAD.findIndex((field) => field.value === "version")

type Head = (typeof HEAD)[number]
export type HeadKey = Head["key"]
type Listed = Exclude<Head, { readonly listing: "unlisted" }>

type ValueOf<V extends HeadValue> = V extends "text" ? string
  : V extends "fork" ? { readonly id: string; readonly turn: number }
  : V extends "parent" ? { readonly id: string; readonly turn: number; readonly callId: string }
  : number

/** What the head tells of a session in a listing: its listed fields, by their kind (`SessionSummary` without its id). */
export type ListedFields = Flat<
  & { readonly [F in Listed as F["optional"] extends true ? never : F["key"]]: ValueOf<F["value"]> }
  & { readonly [F in Listed as F["optional"] extends true ? F["key"] : never]?: ValueOf<F["value"]> }
>
type Flat<T> = { [K in keyof T]: T[K] }

/** Each listed field with its position in `HEAD`, in the head's order. */
export const LISTED: ReadonlyArray<HeadField & { readonly at: number }> = HEAD.flatMap((field, at) =>
  field.listing === "unlisted" ? [] : [{ ...field, at }]
)
