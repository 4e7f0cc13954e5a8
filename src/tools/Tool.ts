import type * as Effect from "effect/Effect"

export type ToolName = "bash" | "read_file" | "write_file" | "edit_file" | "grep" | "glob"

export const toolNames: ReadonlyArray<ToolName> = ["bash", "read_file", "write_file", "edit_file", "grep", "glob"]

export const isToolName = (name: string): name is ToolName => (toolNames as ReadonlyArray<string>).includes(name)

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
  /** The id of the call being run (an editor shows a terminal under it). */
  readonly callId?: string
  /** Runs before write_file or edit_file writes a file (mm records the change there, for /undo). */
  readonly beforeWrite?: (write: FileWrite) => Effect.Effect<void>
  /** Output of a running bash as it comes (the terminal shows its latest lines live). */
  readonly onOutput?: (text: string) => void
  /** The environment bash runs in: runTool gives mm's own without the variables that hold secrets. */
  readonly env?: NodeJS.ProcessEnv
  /** Puts bash's command line (`["bash", "-c", command]`) in the sandbox; absent: bash runs unconfined. */
  readonly confine?: (argv: ReadonlyArray<string>) => ReadonlyArray<string>
}

export interface ToolResult {
  readonly output: string
  readonly failed: boolean
}

/** A failed result: `output` says in words what went wrong. */
export const failure = (output: string): ToolResult => ({ output, failed: true })
