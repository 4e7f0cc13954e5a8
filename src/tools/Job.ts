// What a background job is to the tools: a command started without waiting for it (FileAccess's
// `start`: a local process group, JobProcess.ts, or an editor's terminal), and the conversation's
// jobs are kept by agent/Jobs.ts, and reached by a call as `ctx.jobs` (Tool.ts).
import type * as Effect from "effect/Effect"

import type { Taken } from "./JobBuffer"

/** How a job ended: its exit code, or the signal that killed it. */
export interface JobExit {
  readonly code: number | null
  readonly signal: string | null
}

/** A command running in the background. */
export interface StartedCommand {
  /** Its process id (the leader of its process group), when it runs here. */
  readonly pid: number | undefined
  /** What it printed since the last take, and how many bytes were dropped before that. */
  readonly take: Effect.Effect<Taken>
  /** The end of all it printed, read or not (a few lines). */
  readonly tail: Effect.Effect<string>
  /** Told once, when it has ended (at once when it already has). */
  readonly onExit: (listener: (exit: JobExit) => void) => void
  /** Ends it and all it started (SIGTERM, then SIGKILL after a short grace), and waits, bounded, until it has. */
  readonly kill: Effect.Effect<void>
}

/** `exit code 0`, `killed by signal SIGTERM`. */
export const exitWords = (exit: JobExit): string =>
  exit.code !== null ? `exit code ${exit.code}` : `killed by signal ${exit.signal ?? "unknown"}`
