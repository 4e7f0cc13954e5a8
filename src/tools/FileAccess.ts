import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Either from "effect/Either"

import type { ToolContext, ToolResult } from "./Tools"

/**
 * Where the tools read and write files and run commands: the disk and a local `bash` by
 * default; an editor's buffers and terminals under `mm acp` when the editor offers them
 * (src/Acp/EditorAccess.ts). The tools compute the same results either way.
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
  /** Runs a `bash` call; never fails (a problem is a failed result). */
  readonly bash: (
    args: { readonly command: string; readonly timeout?: number | undefined },
    ctx: ToolContext
  ) => Effect.Effect<ToolResult>
}

/** Optional: where it is not provided, the tools use `diskFileAccess` (src/Tools.ts). */
export class FileAccess extends Context.Tag("mm/FileAccess")<FileAccess, FileAccessShape>() {}
