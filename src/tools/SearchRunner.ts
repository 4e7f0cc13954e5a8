// grep's and glob's searches, run off mm's main thread: each goes to the search worker
// (SearchWorker.ts, dist/mm-search-worker.cjs), started on the first search and kept, idle and
// unref'd, for the next one. The main thread watches the worker's heartbeat and terminates it
// when it stops for a second (a regular expression or a glob stuck on one line or path, which
// JavaScript cannot interrupt from inside), when the call is cancelled, and when it crashes;
// each of these is a failed result in one line, never a thrown error. A search that keeps going
// ends by itself at its time limit with what it found so far.
import * as fs from "node:fs"
import * as path from "node:path"
import type * as WorkerThreads from "node:worker_threads"

import * as Effect from "effect/Effect"

import { firstLineOf } from "../lib/OneLine"
import { shownPathOf } from "./ProjectWalk"
import {
  Doing,
  type HeartbeatReader,
  heartbeatReaderOf,
  makeHeartbeatBuffer,
  type SearchMessage,
  type SearchReply,
  type SearchRequest,
  secondsOf
} from "./SearchProtocol"
import { type SecretSource, secretSourceOf } from "./SecretFiles"
import { failure, type ToolContext, type ToolResult } from "./Tool"

/** The worker's file beside the core once built (dist/), else where MM_SEARCH_WORKER says (tests, the bench). */
const WORKER_FILE = "mm-search-worker.cjs"

export interface SearchSettings {
  /** A search whose heartbeat stays still this long is stopped as stuck. */
  readonly stallMs: number
  /** A search ends with what it found so far after this long. */
  readonly totalMs: number
  /** A worker that has not begun a search this long after it was asked is given up. */
  readonly startMs: number
  /** The worker's file; undefined: beside this module once built, else MM_SEARCH_WORKER. */
  readonly workerFile: string | undefined
}

/** MM_SEARCH_STALL_MS: another stall limit in milliseconds (the tests that signal mm during a stuck search). */
const stallFromEnv = (): number => {
  const ms = Number(process.env.MM_SEARCH_STALL_MS)
  return Number.isFinite(ms) && ms > 0 ? ms : 1000
}

let settings: SearchSettings = { stallMs: stallFromEnv(), totalMs: 60_000, startMs: 10_000, workerFile: undefined }

/** Changes the settings (a test's shorter time limit, a worker that crashes); returns what puts them back. */
export const tuneSearches = (changes: Partial<SearchSettings>): () => void => {
  const before = settings
  const apply = (next: SearchSettings) => {
    if (next.workerFile !== settings.workerFile && idle !== undefined) end(idle)
    settings = next
  }
  apply({ ...settings, ...changes })
  return () => apply(before)
}

let workerThreads: typeof WorkerThreads | undefined
let workerBeside: string | undefined

const workerFileNow = (): string => {
  if (settings.workerFile !== undefined) return settings.workerFile
  if (workerBeside !== undefined) return workerBeside
  // (a bench bundles this file as an ES module, where __dirname does not exist)
  const beside = typeof __dirname === "string" ? path.join(__dirname, WORKER_FILE) : undefined
  const named = process.env.MM_SEARCH_WORKER
  workerBeside = beside !== undefined && (named === undefined || fs.existsSync(beside)) ? beside : named ?? WORKER_FILE
  return workerBeside
}

interface Slot {
  readonly worker: WorkerThreads.Worker
  readonly heartbeat: HeartbeatReader
  /** Whether the worker ended or was told to. */
  gone: boolean
}

/** The worker kept for the next search, when one is. */
let idle: Slot | undefined
let lastId = 0
/** Workers started and not yet ended; searches running whose heartbeat was seen. */
const counts = { alive: 0, begun: 0 }

/** How many search workers live (busy or idle), are idle, and run a search that has begun. */
export const searchWorkers = (): { readonly alive: number; readonly idle: number; readonly begun: number } => ({
  alive: counts.alive,
  idle: idle === undefined ? 0 : 1,
  begun: counts.begun
})

const spawn = (): Slot => {
  workerThreads ??= require("node:worker_threads") as typeof WorkerThreads
  const heartbeat = makeHeartbeatBuffer()
  // what the worker might print (it prints nothing) is kept from the terminal; reading it would
  // hold the process open once the worker is idle and unref'd
  const worker = new workerThreads.Worker(workerFileNow(), { workerData: { heartbeat }, stdout: true, stderr: true })
  const slot: Slot = { worker, heartbeat: heartbeatReaderOf(heartbeat), gone: false }
  counts.alive++
  worker.on("exit", () => {
    counts.alive--
    slot.gone = true
    if (idle === slot) idle = undefined
  })
  // an idle worker's failure is seen by its exit; a busy one's by the search's own listener
  worker.on("error", () => undefined)
  return slot
}

const take = (): Slot => {
  const slot = idle !== undefined && !idle.gone ? idle : spawn()
  idle = undefined
  slot.worker.ref()
  slot.heartbeat.reset()
  return slot
}

/** A worker whose search ended well is kept when none is, unref'd so that it never holds mm open. */
const giveBack = (slot: Slot): void => {
  if (slot.gone) return
  if (idle === undefined) {
    slot.worker.unref()
    idle = slot
  } else {
    end(slot)
  }
}

const end = (slot: Slot): void => {
  slot.gone = true
  void slot.worker.terminate()
}

/** The one line a stuck search is stopped with: what was stuck, on what, and what to do. */
const stuckLine = (request: SearchRequest, heartbeat: HeartbeatReader): string => {
  const { doing, item } = heartbeat.doing()
  const over = `over ${secondsOf(settings.stallMs)}`
  const stopped = `${request.tool} stopped:`
  const looping = "without finishing (likely catastrophic backtracking); simplify it"
  switch (doing) {
    case Doing.reading:
      return `${stopped} reading ${shownPathOf(request.cwd, item)} took ${over}; leave it out with the path or a glob`
    case Doing.matching:
      return `${stopped} the pattern ran ${over} on ${shownPathOf(request.cwd, item)} ${looping}`
    case Doing.globbing: {
      const glob = request.kind === "lines" ? "the glob filter" : "the pattern"
      return `${stopped} ${glob} ran ${over} on the path ${item} ${looping}`
    }
    default:
      return `${stopped} it made no progress for ${over}; narrow the path`
  }
}

/** What the worker needs to know the call's secret files again; a line saying why not when it cannot. */
export const secretsFor = (ctx: ToolContext): SecretSource | undefined | string => {
  if (ctx.secretFile === undefined) return undefined
  return secretSourceOf(ctx.secretFile) ??
    "its test of the files that look secret was not made by secretFilesOf, and cannot reach the search worker"
}

/** Runs one search in a worker: its result, or a failed result in one line; interrupting it terminates the worker. */
export const runSearch = (request: SearchRequest): Effect.Effect<ToolResult> =>
  Effect.async<ToolResult>((resume) => {
    const failed = (why: string) => failure(`${request.tool} failed: ${why}`)
    let slot: Slot
    try {
      slot = take()
    } catch (cause) {
      resume(Effect.succeed(failed(`the search worker did not start: ${firstLineOf(cause)}`)))
      return
    }
    const id = ++lastId
    const { stallMs, startMs, totalMs } = settings
    let settled = false
    let begun = false
    const stop = (keep: boolean) => {
      settled = true
      if (begun) counts.begun--
      clearInterval(watch)
      slot.worker.off("message", onMessage).off("error", onError).off("exit", onExit)
      if (keep) giveBack(slot)
      else end(slot)
    }
    const settle = (result: ToolResult, keep: boolean) => {
      if (settled) return
      stop(keep)
      resume(Effect.succeed(result))
    }
    const onMessage = (reply: SearchReply) => reply.id === id && settle(reply.result, true)
    const onError = (cause: unknown) => settle(failed(`the search worker stopped: ${firstLineOf(cause)}`), false)
    const onExit = (code: number) => settle(failed(`the search worker stopped (exit code ${code})`), false)
    slot.worker.on("message", onMessage).on("error", onError).on("exit", onExit)
    // the heartbeat, looked at four times a stall's length; a search counts as begun at its first beat
    const asked = performance.now()
    let beats = slot.heartbeat.beats()
    let lastBeat = asked
    const watch = setInterval(() => {
      const now = performance.now()
      const seen = slot.heartbeat.beats()
      if (seen !== beats) {
        beats = seen
        if (!begun) counts.begun++
        begun = true
        lastBeat = now
      } else if (begun && now - lastBeat >= stallMs) {
        settle(failure(stuckLine(request, slot.heartbeat)), false)
      } else if (!begun && now - asked >= startMs) {
        settle(failed(`the search worker did not start within ${secondsOf(startMs)}`), false)
      }
      // a search that beats but never ends (it should end at its time limit by itself)
      if (now - asked >= totalMs + startMs) {
        settle(failure(`${request.tool} stopped: it ran over ${secondsOf(totalMs)}; narrow the path`), false)
      }
    }, Math.min(250, Math.max(10, stallMs / 4)))
    watch.unref()
    slot.worker.postMessage({ id, request, totalMs } satisfies SearchMessage)
    return Effect.sync(() => {
      if (!settled) stop(false)
    })
  })
