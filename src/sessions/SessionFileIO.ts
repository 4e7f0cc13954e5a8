import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import { rawText, StoreError } from "../domain/Errors"
import * as Durable from "../lib/DurableFiles"
import { notADirectory } from "../lib/ProjectDir"
import { type HeadScan, scanHead, scanLayout, scanStamp, type Stamp } from "./HeadScanner"
import { bytesEndLikeObject, listingOf, listingOfScan, listingOfText, stampOfText, unreadable } from "./SessionCodec"
import { HEAD_END } from "./SessionHead"
import type { SessionListing } from "./SessionStore"

/**
 * The session files on disk, as the file store handles them: their directories, their durable
 * writes, and their safe reads (the head and tail scan of the fast listing among them). Every
 * step takes the store's `fs`, so that tests can count or fail its calls.
 */

export type Fs = typeof NodeFs

// ---- what a failed call says ----

const errnoWords: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOENT: "no such file or directory",
  ENOTDIR: "not a directory",
  EISDIR: "is a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EMFILE: "too many open files",
  ENFILE: "too many open files",
  EIO: "input/output error",
  ENAMETOOLONG: "name too long",
  ELOOP: "too many symbolic links"
}

export const errnoText = (cause: unknown): string => {
  const words = (cause as { words?: unknown } | null)?.words
  if (typeof words === "string") return words
  const code = (cause as { code?: unknown } | null)?.code
  if (typeof code === "string" && code in errnoWords) return errnoWords[code]
  return rawText(cause)
}

export const codeOf = (cause: unknown): unknown => (cause as { code?: unknown } | null)?.code

// ---- directories ----

const isDanglingLink = (fs: Fs, path: string): boolean => {
  try {
    return fs.lstatSync(path).isSymbolicLink()
  } catch {
    return false
  }
}

/** The stat of `path`, or `undefined` when it or a parent is missing. */
const statIfThere = (fs: Fs, path: string): NodeFs.Stats | undefined => {
  try {
    return fs.statSync(path)
  } catch (cause) {
    const code = codeOf(cause)
    if (code === "ENOENT" || code === "ENOTDIR") {
      // a symbolic link to nothing: no file could ever be made there
      if (code === "ENOENT" && isDanglingLink(fs, path)) {
        throw Object.assign(new Error(`${path} is a dangling link`), {
          code: "ENOENT",
          words: `${path} is a symbolic link to ${fs.readlinkSync(path)}, which does not exist`
        })
      }
      return undefined
    }
    throw cause
  }
}

/** The directory itself, or the nearest of its parents that exists (it must be a directory). */
export const nearestExisting = (fs: Fs, dir: string): string => {
  for (let current = dir, depth = 0; depth < 256; depth++) {
    const stat = statIfThere(fs, current)
    if (stat !== undefined) {
      if (!stat.isDirectory()) {
        throw current === dir
          ? notADirectory(dir)
          : Object.assign(new Error(`${current} is a file`), {
            code: "ENOTDIR",
            words: `${current} is a file, not a directory`
          })
      }
      return current
    }
    const parent = NodePath.dirname(current)
    if (parent === current) break
    current = parent
  }
  throw Object.assign(new Error(`no existing parent of ${dir}`), { code: "ENOENT" })
}

// ---- durable writes ----

/** Writes `text` to a new temporary file of `dir` (mode 0600, synced) and returns its path. */
export const writeTemp = (fs: Fs, dir: string, base: string, text: string, sync: boolean): string => {
  const path = NodePath.join(dir, Durable.tempNameOf(base))
  const fd = fs.openSync(path, "wx", 0o600)
  try {
    fs.fchmodSync(fd, 0o600)
    fs.writeFileSync(fd, text)
    if (sync) fs.fsyncSync(fd)
  } catch (cause) {
    fs.closeSync(fd)
    Durable.unlinkQuietly(path, fs)
    throw cause
  }
  fs.closeSync(fd)
  return path
}

/** Replaces `target` whole: a synced temporary file renamed over it, then the directory synced. */
export const replaceWith = (fs: Fs, dir: string, target: string, text: string): void => {
  const temp = writeTemp(fs, dir, NodePath.basename(target), text, true)
  try {
    fs.renameSync(temp, target)
  } catch (cause) {
    Durable.unlinkQuietly(temp, fs)
    throw cause
  }
  Durable.fsyncDir(dir, fs)
}

/** Puts `text` at `target` only if nothing is there: never overwrites, never torn. */
export const placeExclusively = (fs: Fs, dir: string, target: string, text: string): boolean => {
  const temp = writeTemp(fs, dir, NodePath.basename(target), text, true)
  try {
    try {
      fs.linkSync(temp, target)
    } catch (cause) {
      const code = codeOf(cause)
      if (code === "EEXIST") return false
      if (code !== "EPERM" && code !== "ENOTSUP" && code !== "EOPNOTSUPP" && code !== "ENOSYS") throw cause
      try {
        fs.closeSync(fs.openSync(target, "wx", 0o600))
      } catch (inner) {
        if (codeOf(inner) === "EEXIST") return false
        throw inner
      }
      fs.renameSync(temp, target)
    }
  } finally {
    Durable.unlinkQuietly(temp, fs)
  }
  Durable.fsyncDir(dir, fs)
  return true
}

/** Removes the temporary files a killed writer left, once they are clearly abandoned. */
export const sweepStaleTemps = (fs: Fs, prefix: string, names: ReadonlyArray<string>, now: number): void => {
  for (const name of names) {
    if (name.charCodeAt(0) !== 46 || !Durable.isTempName(name)) continue
    const stat = fs.statSync(prefix + name, { throwIfNoEntry: false })
    if (stat !== undefined && now - stat.mtimeMs > Durable.STALE_TEMP_MS) Durable.unlinkQuietly(prefix + name, fs)
  }
}

// ---- safe reads ----

const HEAD_BYTES = 4096
/** Where the head ends (SessionHead.ts): only the bytes before it are decoded first. */
const MESSAGES_KEY = Buffer.from(`"${HEAD_END}"`)
const MAX_HEAD_BYTES = 1 << 20
const TAIL_BYTES = 64

/**
 * What the reads of one store work with: its file calls, and one buffer for the head and one
 * for the tail of a file, reused by every read (they are all synchronous).
 */
export interface Reader {
  readonly fs: Fs
  readonly head: Buffer
  readonly tail: Buffer
}

export const makeReader = (fs: Fs): Reader => ({
  fs,
  head: Buffer.allocUnsafe(HEAD_BYTES),
  tail: Buffer.allocUnsafe(TAIL_BYTES)
})

/**
 * Non-blocking, so that a FIFO or device named like a session cannot hang mm (it is then
 * refused by its stat); not following a symbolic link, so that a link named like a session
 * never makes mm read (and quote) another file.
 */
const openToRead = (fs: Fs, path: string): number => {
  try {
    return fs.openSync(path, NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK | NodeFs.constants.O_NOFOLLOW)
  } catch (cause) {
    if (codeOf(cause) === "ELOOP") {
      throw Object.assign(new Error(`${path} is a symbolic link`), {
        code: "ELOOP",
        words: "it is a symbolic link; mm reads only session files it wrote"
      })
    }
    throw cause
  }
}

const readFully = (fs: Fs, fd: number, buffer: Buffer, length: number, position: number): number => {
  let done = 0
  while (done < length) {
    const n = fs.readSync(fd, buffer, done, length - done, position + done)
    if (n === 0) break
    done += n
  }
  return done
}

/** The whole text of the open file `fd`, of `size` bytes. */
const readWhole = (fs: Fs, fd: number, size: number): string => {
  const whole = Buffer.allocUnsafe(size)
  return whole.toString("utf8", 0, readFully(fs, fd, whole, size, 0))
}

/** The text of a session file, which must be a regular file (`id` names it in the error). */
export const readSessionText = (fs: Fs, path: string, id: string): string => {
  const fd = openToRead(fs, path)
  try {
    if (!fs.fstatSync(fd).isFile()) {
      throw new StoreError({
        reason: "unreadable",
        id,
        message: `session ${id} is unreadable: not a regular file`,
        raw: path
      })
    }
    return fs.readFileSync(fd, "utf8")
  } finally {
    fs.closeSync(fd)
  }
}

/** The version and last write the file on disk claims, read from its head when it is where mm puts them. */
export const stampOnDisk = ({ fs, head }: Reader, path: string): Stamp | undefined => {
  let fd: number
  try {
    fd = openToRead(fs, path)
  } catch (cause) {
    if (codeOf(cause) === "ENOENT") return undefined
    throw cause
  }
  try {
    const n = readFully(fs, fd, head, HEAD_BYTES, 0)
    const text = head.toString("utf8", 0, n)
    const found = scanStamp(text)
    if ((found.version !== undefined && found.updatedAt !== undefined) || n < HEAD_BYTES) {
      return n < HEAD_BYTES ? stampOfText(text) : found
    }
    return stampOfText(readWhole(fs, fd, fs.fstatSync(fd).size))
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * The head of a file as mm writes it (`scanLayout`) fits in this many bytes unless its title or
 * its project's path is long; decoded at once, without looking for `messages` first. Not more:
 * the fields found keep the decoded text alive (they are slices of it), and 1 KB made the cold
 * listing of 10,000 sessions slower than looking for `messages` (512 bytes: 2.5 ms faster).
 */
const LAYOUT_BYTES = 512

/** The head's fields read one by one, from the first `n` bytes of `buffer`, decoded up to a little past `messages`. */
const scanBounded = (buffer: Buffer, n: number): HeadScan => {
  const messages = buffer.indexOf(MESSAGES_KEY)
  const first = messages < 0 || messages + 64 > n ? n : messages + 64
  const scan = scanHead(buffer.toString("utf8", 0, first), false)
  return scan._tag === "NeedMore" && first < n ? scanHead(buffer.toString("utf8", 0, n), false) : scan
}

/**
 * The listing of one file from its head (its tail checked too), or from a full parse when the
 * head is unusual (or says nothing of `numbering`: written by an earlier mm), with the stat of
 * what was read. `undefined` when the file has gone.
 */
export const readListing = (
  { fs, head, tail }: Reader,
  path: string,
  id: string
): { listing: SessionListing; stat?: NodeFs.Stats } | undefined => {
  let fd: number
  try {
    fd = openToRead(fs, path)
  } catch (cause) {
    return codeOf(cause) === "ENOENT" ? undefined : { listing: unreadable(id, `cannot read: ${errnoText(cause)}`) }
  }
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) return { listing: unreadable(id, "not a regular file"), stat }
    const size = stat.size
    let want = HEAD_BYTES
    for (;;) {
      const buffer = want <= HEAD_BYTES ? head : Buffer.allocUnsafe(Math.min(want, size))
      const n = readFully(fs, fd, buffer, Math.min(want, size), 0)
      if (n >= size) return { listing: listingOf(id, buffer.toString("utf8", 0, n)), stat }
      const scan = scanLayout(buffer.toString("utf8", 0, Math.min(n, LAYOUT_BYTES))) ?? scanBounded(buffer, n)
      if (scan._tag === "Found") {
        const end = readFully(fs, fd, tail, TAIL_BYTES, size - TAIL_BYTES)
        const listing = bytesEndLikeObject(tail, end) ? listingOfScan(id, scan, size) : undefined
        if (listing !== undefined) return { listing, stat }
      }
      if (scan._tag !== "NeedMore" || want >= MAX_HEAD_BYTES) {
        return { listing: listingOfText(id, readWhole(fs, fd, size)), stat }
      }
      want *= 16
    }
  } catch (cause) {
    return { listing: unreadable(id, `cannot read: ${errnoText(cause)}`) }
  } finally {
    fs.closeSync(fd)
  }
}
