import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Layer from "effect/Layer"

import { runCommand } from "./CommandProcess"
import { readTextLossy, writeText } from "./Files"
import type { StartedCommand } from "./Job"
import { startJob } from "./JobProcess"
import type { CommandLine, ToolContext, ToolResult } from "./Tool"

/**
 * Where the tools read and write files and run commands: the disk and a local `bash` by
 * default; an editor's buffers and terminals under `mm acp` when the editor offers them
 * (src/acp/EditorAccess.ts). The tools compute the same results either way.
 */
export interface FileAccessShape {
  /** The text of a file (`file` absolute, `shown` as the model wrote it); Left is a one-line reason. */
  readonly read: (file: string, shown: string) => Effect.Effect<Either.Either<string, string>>
  /** Writes the whole text, creating missing parent directories; Left is a one-line reason. */
  readonly write: (file: string, shown: string, content: string) => Effect.Effect<Either.Either<void, string>>
  /** Whether `read` is the disk's: then read_file reads the file itself, a piece at a time. */
  readonly readsDisk: Effect.Effect<boolean>
  /** Whether `write` is the disk's: otherwise `/undo` restores text files through it too, so the editor shows them. */
  readonly writesDisk: Effect.Effect<boolean>
  /** Runs a command line; never fails (a problem is a failed result). */
  readonly run: (command: CommandLine, ctx: ToolContext) => Effect.Effect<ToolResult>
  /**
   * Starts a command line in the background and returns at once (a job: Job.ts), keeping at most
   * `maxBuffer` bytes of its output until read; Left is a one-line reason. Absent: a local process.
   */
  readonly start?: (
    command: CommandLine,
    ctx: ToolContext,
    maxBuffer: number
  ) => Effect.Effect<Either.Either<StartedCommand, string>>
}

/** Who reads and writes the project's files and runs commands: the disk (`FileAccessDisk`), or an editor (`mm acp`). Required: app/Layers.ts provides one to every façade. */
export class FileAccess extends Context.Tag("mm/FileAccess")<FileAccess, FileAccessShape>() {}

/** The disk and local processes: what the tools use unless an editor offers its own. */
export const diskFileAccess: FileAccessShape = {
  read: (file, shown) => Effect.sync(() => readTextLossy(file, shown)),
  readsDisk: Effect.succeed(true),
  writesDisk: Effect.succeed(true),
  write: (file, shown, content) => Effect.sync(() => writeText(file, shown, content)),
  run: runCommand,
  start: startJob
}

/** FileAccess provided as the disk and local processes. */
export const FileAccessDisk = Layer.succeed(FileAccess, diskFileAccess)
