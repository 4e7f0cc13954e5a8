import * as fs from "node:fs"

import * as Effect from "effect/Effect"

import { readRegularSync } from "../lib/RegularFiles"
import type { FileAccessShape } from "../tools/FileAccess"
import { MAX_CHECKPOINT_BYTES } from "./Checkpoints"

/** What a file changed by mm holds now, on disk or in the editor, for `/undo` and `/rewind`. */

/**
 * The editor's way to write files, when `/undo` runs for an editor that offers one (`mm acp`
 * with `fs/write_text_file`); undefined on the disk. Deletions and files that are not text
 * go to the disk either way: the protocol writes text only.
 */
export const editorWriter = (files: FileAccessShape): Effect.Effect<FileAccessShape | undefined> =>
  Effect.map(files.writesDisk, (disk) => (disk ? undefined : files))

export const readCurrent = (file: string): { readonly bytes: Buffer | null; readonly tooLarge: boolean } => {
  const stat = fs.statSync(file, { throwIfNoEntry: false })
  if (stat === undefined) return { bytes: null, tooLarge: false }
  if (!stat.isFile()) throw Object.assign(new Error(`${file} is not a regular file`), { code: "EISDIR" })
  if (stat.size > MAX_CHECKPOINT_BYTES) return { bytes: null, tooLarge: true }
  return { bytes: readRegularSync(file, MAX_CHECKPOINT_BYTES), tooLarge: false }
}

/**
 * What the file holds now, as the user sees it: the editor's buffer (unsaved changes
 * included) when the editor reads files for mm, the disk otherwise. A buffer the editor
 * cannot read (a file that does not exist, say) is looked for on disk.
 */
export const currentContent = (
  files: FileAccessShape,
  file: string,
  shown: string
): Effect.Effect<{ readonly bytes: Buffer | null; readonly tooLarge: boolean }, unknown> => {
  const fromDisk = Effect.try({ try: () => readCurrent(file), catch: (cause) => cause })
  return Effect.flatMap(files.readsDisk, (disk) =>
    disk
      ? fromDisk
      : Effect.flatMap(files.read(file, shown), (read) =>
        read._tag === "Right"
          ? Effect.succeed({ bytes: Buffer.from(read.right, "utf8"), tooLarge: false })
          : fromDisk))
}
