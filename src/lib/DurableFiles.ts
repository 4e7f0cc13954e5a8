import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import { quickRandomHex } from "./QuickIds"

/**
 * What every durable write of mm shares (sessions, checkpoint blobs, restored files): how its
 * temporary file is named (and known again), when one left behind is abandoned, removing a
 * temporary file that may be gone already, and syncing a directory after a rename so that the
 * new name survives a crash.
 */

/** `.<name>.<pid>.<8 hex>.tmp`, beside the file it becomes: hidden, and unique per writer. */
export const tempNameOf = (name: string): string => `.${name}.${process.pid}.${quickRandomHex(4)}.tmp`

const tempPattern = /^\..+\.\d+\.[0-9a-f]{8}\.tmp$/

/** A temporary file named by `tempNameOf`. */
export const isTempName = (name: string): boolean => tempPattern.test(name)

/** A temporary file older than this was left by a writer that died: it may be removed. */
export const STALE_TEMP_MS = 60 * 60 * 1000

/** The file calls these need; the session store passes its own, so that tests can make them fail. */
type SyncCalls = Pick<typeof NodeFs, "unlinkSync" | "openSync" | "fsyncSync" | "closeSync">

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

const tempParts = /^\.(.+)\.(\d+)\.[0-9a-f]{8}\.tmp$/

const alive = (pid: number): boolean => {
  if (pid === process.pid) return true
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return (cause as { code?: unknown }).code === "EPERM"
  }
}

/**
 * Removes from `dir` the temporary files `tempNameOf` made for the files named in `names`
 * that their writer left behind: its process is gone, or the file is older than
 * STALE_TEMP_MS (a reused pid). What cannot be listed or removed is left; returns the count.
 */
const removeLeftTemps = (dir: string, names: ReadonlySet<string>, now = Date.now()): number => {
  let entries: Array<string>
  try {
    entries = NodeFs.readdirSync(dir)
  } catch {
    return 0
  }
  let removed = 0
  for (const entry of entries) {
    const match = tempParts.exec(entry)
    if (match === null || !names.has(match[1])) continue
    const file = NodePath.join(dir, entry)
    const stat = NodeFs.lstatSync(file, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile()) continue
    if (alive(Number(match[2])) && now - stat.mtimeMs < STALE_TEMP_MS) continue
    unlinkQuietly(file)
    removed += 1
  }
  return removed
}

/** `removeLeftTemps` for the directory of each of `files`: what each one's interrupted writes left. */
export const removeLeftTempsBeside = (files: ReadonlyArray<string>): void => {
  const byDir = new Map<string, Set<string>>()
  for (const file of files) {
    const dir = NodePath.dirname(file)
    byDir.set(dir, (byDir.get(dir) ?? new Set<string>()).add(NodePath.basename(file)))
  }
  for (const [dir, names] of byDir) removeLeftTemps(dir, names)
}

export const tempNameFor = (target: string): string =>
  NodePath.join(NodePath.dirname(target), tempNameOf(NodePath.basename(target)))

/** Fills the open temporary file `fd`, syncs it and renames it over `file`; the temporary never outlives a failure. */
export const commitTemp = (
  fd: number,
  temp: string,
  file: string,
  bytes: Uint8Array,
  mode: number | undefined
): void => {
  try {
    if (mode !== undefined) NodeFs.fchmodSync(fd, mode)
    NodeFs.writeFileSync(fd, bytes)
    NodeFs.fsyncSync(fd)
  } catch (cause) {
    NodeFs.closeSync(fd)
    unlinkQuietly(temp)
    throw cause
  }
  NodeFs.closeSync(fd)
  try {
    NodeFs.renameSync(temp, file)
  } catch (cause) {
    unlinkQuietly(temp)
    throw cause
  }
  fsyncDir(NodePath.dirname(file))
}

/**
 * Replaces `target` whole, atomically: a temporary file in the same directory, written and
 * fsynced, then renamed over it. A crash leaves the old content or the new, never a mix.
 * A symbolic link is followed (its target is replaced, the link stays); an existing file
 * keeps its mode, a new one gets `mode` (default 0666 less the umask).
 */
export const writeFileAtomic = (target: string, bytes: Uint8Array, mode?: number): void => {
  let file = target
  try {
    file = NodeFs.realpathSync(target)
  } catch {
    // a new file: written where it was asked for
  }
  const existing = NodeFs.statSync(file, { throwIfNoEntry: false })
  const temp = tempNameFor(file)
  const fd = NodeFs.openSync(temp, "wx", mode ?? 0o666)
  commitTemp(fd, temp, file, bytes, existing !== undefined ? existing.mode & 0o7777 : mode)
}
