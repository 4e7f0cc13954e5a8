import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import { pidExists } from "./ProcessIdentity"
import { ignoreRecords } from "./ProjectDir"
import { quickRandomHex } from "./QuickIds"

/**
 * What every durable write of mm shares (sessions, checkpoint blobs, restored files): how its
 * temporary file is named (and known again), when one left behind is abandoned, removing a
 * temporary file that may be gone already, and syncing a directory after a rename so that the
 * new name survives a crash. A project's files have their temporary under the project's
 * `.mm/tmp/` (`writeProjectFileAtomic`), where what a killed writer left is found again.
 */

/**
 * `.<name>.<pid>.<8 hex>.tmp`, beside the file it becomes or under `.mm/tmp/`: hidden, unique
 * per writer, and naming its writer's process, so that a temporary it left can be told apart
 * from one being written.
 */
export const tempNameOf = (name: string): string => `.${tempStemOf(name)}.${process.pid}.${quickRandomHex(4)}.tmp`

/** Bytes of a file's name kept whole in its temporary's name: the rest of 255 is the suffix's. */
const STEM_MAX_BYTES = 200

/**
 * The part of a temporary's name that names its file: the name itself, or for a name too long
 * to carry a suffix within 255 bytes, its start and a hash of the whole (FNV-1a).
 */
export const tempStemOf = (name: string): string => {
  if (Buffer.byteLength(name) <= STEM_MAX_BYTES) return name
  let hash = 0x811c9dc5
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193) >>> 0
  let start = name.slice(0, 160)
  while (Buffer.byteLength(start) > 160) start = start.slice(0, -1)
  return `${start}~${hash.toString(16).padStart(8, "0")}`
}

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

const alive = (pid: number): boolean => pid === process.pid || pidExists(pid)

/**
 * Whether the temporary file of writer `pid`, last written at `mtimeMs`, was left behind: its
 * process is gone, it is older than STALE_TEMP_MS (the pid may have been reused), or it bears
 * this process's own pid but is older than this process (an earlier mm that had the same pid,
 * as in a container where every run gets the same one).
 */
const abandoned = (pid: number, mtimeMs: number, now: number): boolean =>
  !alive(pid) || now - mtimeMs >= STALE_TEMP_MS || (pid === process.pid && mtimeMs < performance.timeOrigin)

/**
 * Removes from `dir` the temporary files `tempNameOf` made for the files named in `names`
 * that their writer left behind (`abandoned`). What cannot be listed or removed is left;
 * returns the count.
 */
const removeLeftTemps = (dir: string, names: ReadonlySet<string> | undefined, now = Date.now()): number => {
  let entries: Array<string>
  try {
    entries = NodeFs.readdirSync(dir)
  } catch {
    return 0
  }
  const stems = names === undefined ? undefined : new Set([...names].map(tempStemOf))
  let removed = 0
  for (const entry of entries) {
    const match = tempParts.exec(entry)
    if (match === null || (stems !== undefined && !stems.has(match[1]))) continue
    const file = NodePath.join(dir, entry)
    const stat = NodeFs.lstatSync(file, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile() || !abandoned(Number(match[2]), stat.mtimeMs, now)) continue
    unlinkQuietly(file)
    removed += 1
  }
  return removed
}

/**
 * Removes every temporary file of `dir` (named by `tempNameOf`) whose writer left it behind,
 * without blocking mm: the listing and each removal go through libuv's threads. Never fails;
 * resolves to the count removed. For mm's own directories, swept at start.
 */
export const sweepLeftTemps = async (dir: string, now = Date.now()): Promise<number> => {
  let entries: Array<string>
  try {
    entries = await NodeFs.promises.readdir(dir)
  } catch {
    return 0
  }
  let removed = 0
  for (const entry of entries) {
    const match = tempParts.exec(entry)
    if (match === null) continue
    const file = NodePath.join(dir, entry)
    try {
      const stat = await NodeFs.promises.lstat(file)
      if (!stat.isFile() || !abandoned(Number(match[2]), stat.mtimeMs, now)) continue
      await NodeFs.promises.unlink(file)
      removed += 1
    } catch {
      // gone meanwhile, or not ours to remove
    }
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

/** `target` with its links followed, when it exists; else as asked (a new file). */
const realOrAsked = (target: string): string => {
  try {
    return NodeFs.realpathSync(target)
  } catch {
    return target
  }
}

/** The mode the replaced file keeps: the old file's, else `mode` (undefined: 0666 less the umask). */
const modeFor = (file: string, mode: number | undefined): number | undefined => {
  const existing = NodeFs.statSync(file, { throwIfNoEntry: false })
  return existing !== undefined ? existing.mode & 0o7777 : mode
}

const writeBeside = (file: string, bytes: Uint8Array, mode: number | undefined, keptMode: number | undefined) => {
  const temp = tempNameFor(file)
  const fd = NodeFs.openSync(temp, "wx", mode ?? 0o666)
  commitTemp(fd, temp, file, bytes, keptMode)
}

/**
 * Replaces `target` whole, atomically: a temporary file in the same directory, written and
 * fsynced, then renamed over it. A crash leaves the old content or the new, never a mix.
 * A symbolic link is followed (its target is replaced, the link stays); an existing file
 * keeps its mode, a new one gets `mode` (default 0666 less the umask).
 */
export const writeFileAtomic = (target: string, bytes: Uint8Array, mode?: number): void => {
  const file = realOrAsked(target)
  writeBeside(file, bytes, mode, modeFor(file, mode))
}

// ---- temporary files kept under a project's .mm/tmp/ ----

/** The `.mm/tmp/` directories this process has used, each swept once at its first use. */
const sweptTempDirs = new Set<string>()

/** A directory of this user that no one else can write: safe to hold a temporary until its rename. */
const ownPrivateDir = (stat: NodeFs.Stats): boolean =>
  stat.isDirectory() && (process.getuid === undefined || stat.uid === process.getuid()) && (stat.mode & 0o022) === 0

/**
 * `records/tmp`, made 0700 when missing, if it is usable on device `dev`; swept of what dead
 * writers left at its first use, when `records` (a `.mm/`) also gets its `.gitignore` if it has
 * none (lib/ProjectDir.ts).
 */
const tempDirIn = (records: string, dev: number): string | undefined => {
  const tmp = NodePath.join(records, "tmp")
  let stat = NodeFs.lstatSync(tmp, { throwIfNoEntry: false })
  if (stat === undefined) {
    try {
      NodeFs.mkdirSync(tmp, { mode: 0o700 })
    } catch (cause) {
      if ((cause as { code?: unknown }).code !== "EEXIST") return undefined
    }
    stat = NodeFs.lstatSync(tmp, { throwIfNoEntry: false })
  }
  if (stat === undefined || !ownPrivateDir(stat) || stat.dev !== dev) return undefined
  if (!sweptTempDirs.has(tmp)) {
    sweptTempDirs.add(tmp)
    ignoreRecords(records)
    removeLeftTemps(tmp, undefined)
  }
  return tmp
}

/**
 * Where a file of directory `dir` (a real path) has its temporary file: the `tmp/` of the
 * `.mm/` of the nearest directory at or above `dir` that has one (made inside an existing
 * `.mm/`, never `.mm/` itself). Undefined, and the temporary goes beside the file, when there
 * is no `.mm/` above, when it is on another file system (a rename cannot cross one), when it
 * is not this user's alone (someone else could swap the temporary before its rename), or when
 * `dir` gives its new files its own group (setgid), which a file made elsewhere would lack.
 */
export const projectTempDir = (dir: string): string | undefined => {
  const here = NodeFs.statSync(dir, { throwIfNoEntry: false })
  if (here === undefined || (here.mode & 0o2000) !== 0) return undefined
  for (let current = dir;;) {
    const records = NodeFs.lstatSync(NodePath.join(current, ".mm"), { throwIfNoEntry: false })
    if (records !== undefined) {
      return ownPrivateDir(records) && records.dev === here.dev
        ? tempDirIn(NodePath.join(current, ".mm"), here.dev)
        : undefined
    }
    const parent = NodePath.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

/**
 * `writeFileAtomic` for a file of a project: the temporary file is made under the project's
 * `.mm/tmp/` (`projectTempDir`), so that a crash in the middle leaves nothing among the user's
 * files, and what it leaves there is removed at mm's next start. The rename into the target's
 * directory is as atomic as within one directory; the target's directory is synced after it.
 * `.mm/tmp/` is not: if a crash brings the temporary's name back there, it names a dead
 * writer's file and is removed like one. Where `.mm/tmp/` cannot serve, the temporary goes
 * beside the file as in `writeFileAtomic`.
 */
export const writeProjectFileAtomic = (target: string, bytes: Uint8Array): void => {
  const file = realOrAsked(target)
  const keptMode = modeFor(file, undefined)
  const tmp = projectTempDir(realOrAsked(NodePath.dirname(file)))
  if (tmp !== undefined) {
    const temp = NodePath.join(tmp, tempNameOf(NodePath.basename(file)))
    let fd: number | undefined
    try {
      fd = NodeFs.openSync(temp, "wx", 0o666)
    } catch {
      // .mm/tmp cannot take it (read-only, full of inodes, a name too long): beside, then
    }
    if (fd !== undefined) {
      try {
        commitTemp(fd, temp, file, bytes, keptMode)
        return
      } catch (cause) {
        // two mounts of one file system share a device number but refuse a rename between them
        if ((cause as { code?: unknown }).code !== "EXDEV") throw cause
      }
    }
  }
  writeBeside(file, bytes, undefined, keptMode)
}
