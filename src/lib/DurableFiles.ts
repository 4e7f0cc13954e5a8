import * as NodeCrypto from "node:crypto"
import * as NodeFs from "node:fs"

/**
 * What every durable write of mm shares (sessions, checkpoint blobs, restored files): how its
 * temporary file is named (and known again), when one left behind is abandoned, removing a
 * temporary file that may be gone already, and syncing a directory after a rename so that the
 * new name survives a crash.
 */

/** `.<name>.<pid>.<8 hex>.tmp`, beside the file it becomes: hidden, and unique per writer. */
export const tempNameOf = (name: string): string =>
  `.${name}.${process.pid}.${NodeCrypto.randomBytes(4).toString("hex")}.tmp`

const tempPattern = /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/

/** A temporary file named by `tempNameOf`. */
export const isTempName = (name: string): boolean => tempPattern.test(name)

/** A temporary file older than this was left by a writer that died: it may be removed. */
export const STALE_TEMP_MS = 60 * 60 * 1000

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
