import type * as Effect from "effect/Effect"

import type { PlanEntry } from "../domain/Plan"
import type { StartedCommand } from "./Job"

// What every tool shares: the context a call runs in, its result, and the limits the tools apply.
// A tool itself is a record (ToolRecord.ts).

export const DEFAULT_BASH_TIMEOUT_SECONDS = 120
export const DEFAULT_READ_LIMIT = 2000
/** Files larger than this are refused by read_file and edit_file (bash's head/sed/grep do better). */
export const MAX_FILE_BYTES = 32 * 1024 * 1024
/** Paths glob gives back at most. */
export const GLOB_MAX_PATHS = 100
/** Matching lines grep gives back at most. */
export const GREP_MAX_MATCHES = 100

/** A file a file tool is about to write, whole: its absolute path and its new content. */
export interface FileWrite {
  readonly file: string
  readonly content: string
}

export interface ToolContext {
  readonly cwd: string
  readonly maxOutput: number
  /** How long a call may wait on what runs it when the tool sets no limit of its own (an MCP server). */
  readonly timeoutSeconds?: number
  /** The id of the call being run (an editor shows a terminal under it). */
  readonly callId?: string
  /** Runs before a file tool writes a file (mm records the change there, for /undo). */
  readonly beforeWrite?: (write: FileWrite) => Effect.Effect<void>
  /** Output of a running command as it comes (the terminal shows its latest lines live). */
  readonly onOutput?: (text: string) => Effect.Effect<void>
  /** The environment a command runs in: runCall gives mm's own without the variables that hold secrets. */
  readonly env?: NodeJS.ProcessEnv
  /**
   * Whether a file met in a search's walk (absolute) looks secret, so that grep and glob leave
   * it out (SecretFiles.ts, with the configuration's `secrets:`); absent: the built-in names.
   * It must be the `test` of a `secretFilesOf`: grep and glob make it again in their worker
   * thread from what it was made of (any other function fails the call).
   */
  readonly secretFile?: (file: string) => boolean
  /** Keeps the model's plan (`todo`) and shows it; absent where no conversation keeps one. */
  readonly setPlan?: (entries: ReadonlyArray<PlanEntry>) => Effect.Effect<void>
  /**
   * Runs a sub-agent on a task (`task`) and gives its answer as the call's result; absent where
   * no sub-agent may start (inside a sub-agent).
   */
  readonly delegate?: (task: SubTask) => Effect.Effect<ToolResult>
  /** The conversation's background jobs (`bash` with `background`, `job_output`, `job_kill`); absent: none may start. */
  readonly jobs?: JobControl
  /** Puts a command's argv in the sandbox; absent: the command runs unconfined. */
  readonly confine?: (argv: ReadonlyArray<string>) => Confined
}

/** The conversation's jobs, as a tool call reaches them. */
export interface JobControl {
  /** Bytes of a job's output kept until it is read (`jobs.maxBuffer`). */
  readonly maxBuffer: number
  /** Keeps a started command as the next job of the conversation; the result names its id. */
  readonly add: (command: string, started: StartedCommand) => Effect.Effect<ToolResult>
  /** `job_output`: what job `id` printed since the last read, and whether it still runs. */
  readonly output: (id: number) => Effect.Effect<ToolResult>
  /** `job_kill`: ends job `id`, and says its last output. */
  readonly kill: (id: number) => Effect.Effect<ToolResult>
}

/** A command line put in the sandbox: the argv that runs it there, and the whole environment it is given. */
export interface Confined {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** A command to run: its argv (confined by the sandbox when it is on), its timeout, and how to name it in a problem. */
export interface CommandLine {
  readonly argv: ReadonlyArray<string>
  readonly seconds: number
  /** What a problem calls it: `cannot run NAME: …`. */
  readonly name: string
  /** The whole environment it runs in, when it must be exactly that (the sandbox's): nothing of the runner's is added. */
  readonly env?: Readonly<Record<string, string>>
}

/** What the model hands a sub-agent: the task in its own words, and which declared agent takes it. */
export interface SubTask {
  /** A few words naming the task (shown to the user). */
  readonly description: string
  /** The whole task, self-contained: the sub-agent knows nothing else of the conversation. */
  readonly prompt: string
  /** One of `agents:` in agent.yaml; absent: the general one. */
  readonly agent?: string
}

export interface ToolResult {
  readonly output: string
  readonly failed: boolean
}

/** A failed result: `output` says in words what went wrong. */
export const failure = (output: string): ToolResult => ({ output, failed: true })
