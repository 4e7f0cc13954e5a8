import * as fs from "node:fs"
import * as path from "node:path"

import * as Either from "effect/Either"

import { removeLeftTempsBeside, writeProjectFileAtomic } from "../lib/DurableFiles"
import { firstLineOf } from "../lib/OneLine"
import { realPathOf } from "../lib/RealPath"
import { kindOf } from "./RegularRead"
import { MAX_FILE_BYTES } from "./Tool"

export const resolvePath = (cwd: string, file: string): string => path.resolve(cwd, file)

export const fileProblem = (cause: unknown, shown: string): string => {
  const code = (cause as { code?: string }).code
  switch (code) {
    case "ENOENT":
      return `no such file: ${shown}`
    case "EISDIR":
      return `${shown} is a directory, not a file`
    case "ENOTDIR":
      return `no such file: ${shown} (part of the path is not a directory)`
    case "EACCES":
    case "EPERM":
      return `permission denied: ${shown}`
    case "EROFS":
      return `read-only file system: ${shown}`
    case "ENOSPC":
      return `no space left on the device for ${shown}`
    default:
      return `${shown}: ${firstLineOf(cause)}`
  }
}

const notRegular = (stat: fs.Stats, shown: string): string =>
  stat.isDirectory()
    ? `${shown} is a directory, not a file; list it with bash (ls)`
    : `${shown} is ${kindOf(stat)}; the file tools read regular files only`

const notWritable = (stat: fs.Stats, shown: string): string =>
  stat.isDirectory()
    ? `${shown} is a directory, not a file`
    : `${shown} is ${kindOf(stat)}; the file tools write regular files only`

export const tooBig = (size: number, shown: string): string =>
  `${shown} is ${size} bytes, too big for this tool; use bash (head, tail, sed -n, grep)`

export const binary = (shown: string): string =>
  `${shown} looks binary (it holds NUL bytes); only text files can be read`

/**
 * Opens a regular file for reading, never blocking: the path is checked before it is
 * opened (a FIFO or a device is refused unopened), opened with O_NONBLOCK, and checked
 * again on the open descriptor (the path may have changed in between).
 */
export const openRegular = (
  file: string,
  shown: string
): Either.Either<{ readonly fd: number; readonly size: number }, string> => {
  let fd: number | undefined
  try {
    // the real target, each link followed here; opened with O_NOFOLLOW so no link swapped in since is followed
    const real = realPathOf(file)
    const before = fs.statSync(real)
    if (!before.isFile()) return Either.left(notRegular(before, shown))
    if (before.size > MAX_FILE_BYTES) return Either.left(tooBig(before.size, shown))
    fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW)
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw Object.assign(new Error(notRegular(stat, shown)), { shown: true })
    if (stat.size > MAX_FILE_BYTES) throw Object.assign(new Error(tooBig(stat.size, shown)), { shown: true })
    return Either.right({ fd, size: stat.size })
  } catch (cause) {
    if (fd !== undefined) fs.closeSync(fd)
    return Either.left(
      (cause as { shown?: boolean }).shown === true ? (cause as Error).message : fileProblem(cause, shown)
    )
  }
}

/** Why the path on the disk is no file the tools may read (undefined: a regular file, or nothing there). */
export const notRegularOnDisk = (file: string, shown: string): string | undefined => {
  try {
    const stat = fs.statSync(file)
    return stat.isFile() ? undefined : notRegular(stat, shown)
  } catch {
    return undefined
  }
}

/** Reads a regular text file whole (at most MAX_FILE_BYTES), or says in one line why not. */
const readBytes = (file: string, shown: string): Either.Either<Buffer, string> => {
  const opened = openRegular(file, shown)
  if (Either.isLeft(opened)) return Either.left(opened.left)
  const { fd, size } = opened.right
  try {
    // read to the end, but never past the limit, whatever fstat said
    const chunks: Array<Buffer> = []
    let total = 0
    const chunk = Buffer.allocUnsafe(Math.min(Math.max(size, 4096), 1024 * 1024) + 1)
    for (let n = fs.readSync(fd, chunk); n > 0; n = fs.readSync(fd, chunk)) {
      total += n
      if (total > MAX_FILE_BYTES) return Either.left(tooBig(total, shown))
      chunks.push(Buffer.from(chunk.subarray(0, n)))
    }
    const bytes = Buffer.concat(chunks, total)
    if (bytes.includes(0)) return Either.left(binary(shown))
    return Either.right(bytes)
  } catch (cause) {
    return Either.left(fileProblem(cause, shown))
  } finally {
    fs.closeSync(fd)
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Reads a regular text file (bytes that are not UTF-8 shown as U+FFFD), or says in one line why not. */
export const readTextLossy = (file: string, shown: string): Either.Either<string, string> =>
  Either.map(readBytes(file, shown), (bytes) => bytes.toString("utf8"))

/**
 * A file's text, for a tool that writes it back (and for the preview of a write): only a
 * file that is valid UTF-8 without NUL bytes, so that encoding the text again gives back
 * every byte not edited. Left says in one line why not.
 */
export const readText = (file: string, shown: string): Either.Either<string, string> => {
  const bytes = readBytes(file, shown)
  if (Either.isLeft(bytes)) {
    return bytes.left === binary(shown)
      ? Either.left(`${shown} holds NUL bytes; edit_file changes only UTF-8 text files`)
      : Either.left(bytes.left)
  }
  try {
    return Either.right(strictUtf8.decode(bytes.right))
  } catch {
    return Either.left(`${shown} is not UTF-8 text; edit_file changes only UTF-8 files`)
  }
}

export const splitLines = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

export const countLines = (text: string): number => splitLines(text).length

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/**
 * Writes a whole file on disk, creating missing parent directories, or says in one line why not.
 * Atomic (DurableFiles.writeProjectFileAtomic, its temporary under the project's `.mm/tmp/`): a
 * failure, a full disk among them, leaves the file as it was and no temporary file.
 */
export const writeText = (file: string, shown: string, content: string): Either.Either<void, string> => {
  try {
    // written at its real target (the approval was asked for that one), never through a link swapped in since
    const real = realPathOf(file)
    // a FIFO, a socket or a device (a project's link to /dev/zero) is never replaced by a file
    const there = fs.statSync(real, { throwIfNoEntry: false })
    if (there !== undefined && !there.isFile()) return Either.left(notWritable(there, shown))
    fs.mkdirSync(path.dirname(real), { recursive: true })
    // what an earlier write of this file left beside it when mm was killed in the middle goes first
    removeLeftTempsBeside([real])
    writeProjectFileAtomic(real, Buffer.from(content, "utf8"))
    return Either.right(undefined)
  } catch (cause) {
    return Either.left(fileProblem(cause, shown))
  }
}
