// What mm's main thread and the search worker (SearchWorker.ts) say to each other: the
// requests for a grep or a glob, the reply, and the heartbeat. The heartbeat is a small
// SharedArrayBuffer the worker writes and the main thread reads without the worker's help:
// a counter bumped as the search goes on, and what the worker is doing now (reading a file,
// matching the pattern on it, matching a glob on a path), so that a search stuck in one
// step — a regular expression backtracking for ever — can be stopped and named.
import type { SecretSource } from "./SecretFiles"
import type { ToolResult } from "./Tool"

interface SearchBase {
  /** The tool's name, which the lines of a stop or a failure begin with. */
  readonly tool: string
  /** The project's folder: paths are shown relative to it. */
  readonly cwd: string
  /** The absolute folder (or, for grep, file) to search. */
  readonly start: string
  /** Characters the result's lines may take. */
  readonly budget: number
  /** How the files that look secret are known again in the worker; absent: the built-in names. */
  readonly secrets: SecretSource | undefined
}

/** grep's: the lines of files that match a regular expression. */
export interface GrepRequest extends SearchBase {
  readonly kind: "lines"
  readonly pattern: string
  readonly ignoreCase: boolean
  /** Whether `start` is a folder (walked) or one file (searched, whatever its name). */
  readonly folder: boolean
  readonly glob: string | undefined
}

/** glob's: the paths that match a glob. */
export interface GlobRequest extends SearchBase {
  readonly kind: "paths"
  readonly pattern: string
}

export type SearchRequest = GrepRequest | GlobRequest

/** A request as posted to the worker: with the number its reply carries, and its time. */
export interface SearchMessage {
  readonly id: number
  readonly request: SearchRequest
  /** Milliseconds after which the search ends with what it found so far. */
  readonly totalMs: number
}

export interface SearchReply {
  readonly id: number
  readonly result: ToolResult
}

/** Tells whether a search's time (`totalMs` from now) is up. */
export const clockOf = (totalMs: number) => {
  const deadline = performance.now() + totalMs
  return (): boolean => performance.now() > deadline
}

/** A time limit in words: `60 s`. */
export const secondsOf = (ms: number): string => `${Math.round(ms / 100) / 10} s`

/** `1 file`, `3 files`. */
export const filesOf = (count: number): string => `${count} file${count === 1 ? "" : "s"}`

/** What the worker is doing, as the heartbeat says it. */
export const Doing = {
  /** Between steps: walking folders, starting. */
  nothing: 0,
  /** Reading the file named. */
  reading: 1,
  /** Matching the pattern on the file named. */
  matching: 2,
  /** Matching a glob on the path named. */
  globbing: 3
} as const

export type Doing = typeof Doing[keyof typeof Doing]

const BEATS = 0
const DOING = 1
const ITEM_LENGTH = 2
const ITEM_OFFSET = 16
/** Bytes of the item's name kept: a longer path is cut. */
const ITEM_BYTES = 4096

/** A new heartbeat, for one worker. */
export const makeHeartbeatBuffer = (): SharedArrayBuffer => new SharedArrayBuffer(ITEM_OFFSET + ITEM_BYTES)

/** The worker's side: bump the counter, say what is being done. */
export interface Pulse {
  readonly beat: () => void
  /** Bumps the counter and says that `doing` starts on `item` (a path). */
  readonly start: (doing: Doing, item: string) => void
  /** Bumps the counter and says that `doing` goes on with the item named last. */
  readonly next: (doing: Doing) => void
}

export const pulseOf = (shared: SharedArrayBuffer): Pulse => {
  const words = new Int32Array(shared, 0, ITEM_OFFSET / 4)
  const bytes = Buffer.from(shared, ITEM_OFFSET, ITEM_BYTES)
  return {
    beat: () => void Atomics.add(words, BEATS, 1),
    start: (doing, item) => {
      Atomics.store(words, ITEM_LENGTH, bytes.write(item, "utf8"))
      Atomics.store(words, DOING, doing)
      Atomics.add(words, BEATS, 1)
    },
    next: (doing) => {
      Atomics.store(words, DOING, doing)
      Atomics.add(words, BEATS, 1)
    }
  }
}

/** The main thread's side: the counter, and what the worker was doing with which item. */
export interface HeartbeatReader {
  readonly beats: () => number
  readonly doing: () => { readonly doing: Doing; readonly item: string }
  /** Back to nothing done, before a new request. */
  readonly reset: () => void
}

export const heartbeatReaderOf = (shared: SharedArrayBuffer): HeartbeatReader => {
  const words = new Int32Array(shared, 0, ITEM_OFFSET / 4)
  const bytes = Buffer.from(shared, ITEM_OFFSET, ITEM_BYTES)
  return {
    beats: () => Atomics.load(words, BEATS),
    doing: () => ({
      doing: Atomics.load(words, DOING) as Doing,
      item: bytes.toString("utf8", 0, Math.min(ITEM_BYTES, Atomics.load(words, ITEM_LENGTH)))
    }),
    reset: () => {
      Atomics.store(words, DOING, Doing.nothing)
      Atomics.store(words, ITEM_LENGTH, 0)
    }
  }
}
