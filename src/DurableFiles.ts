import * as NodeFs from "node:fs"

/**
 * The two small steps every durable write of mm shares (sessions, checkpoint blobs, restored
 * files): removing a temporary file that may be gone already, and syncing a directory after a
 * rename so that the new name survives a crash.
 */

/** The file calls these need; the session store passes its own, so that tests can make them fail. */
export type SyncCalls = Pick<typeof NodeFs, "unlinkSync" | "openSync" | "fsyncSync" | "closeSync">

export const unlinkQuietly = (file: string, fs: SyncCalls = NodeFs): void => {
  try {
    fs.unlinkSync(file)
  } catch {
    // already gone
  }
}

export const fsyncDir = (dir: string, fs: SyncCalls = NodeFs): void => {
  let fd: number | undefined
  try {
    fd = fs.openSync(dir, "r")
    fs.fsyncSync(fd)
  } catch {
    // some file systems cannot sync a directory; the rename is atomic regardless
  } finally {
    if (fd !== undefined) fs.closeSync(fd)
  }
}
