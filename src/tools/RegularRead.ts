// Reading a file a user or a model named, when it must be a regular file of bounded size:
// `@file` attachments. Nothing is opened that could block (a FIFO, a device, a socket, or a
// link to one, is refused from its stat), the size is checked before a byte is read, and the
// read goes a piece at a time off the main thread, so that it can be cancelled.
import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { realPathOf } from "../lib/RealPath"

/** Why a file was not read. */
export type ReadRefusal =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Directory" }
  /** `kind` says what it is, e.g. "a named pipe (FIFO)". */
  | { readonly _tag: "NotRegular"; readonly kind: string }
  | { readonly _tag: "TooBig"; readonly size: number }
  | { readonly _tag: "Unreadable"; readonly code: string | undefined }

/** What a path names, when it is neither a regular file nor a directory. */
export const kindOf = (stat: fs.Stats): string =>
  stat.isFIFO()
    ? "a named pipe (FIFO)"
    : stat.isCharacterDevice()
    ? "a character device"
    : stat.isBlockDevice()
    ? "a block device"
    : stat.isSocket()
    ? "a socket"
    : "not a regular file"

/** Bytes asked of the file at a time. */
const CHUNK = 64 * 1024

const refusalOfStat = (stat: fs.Stats, max: number): ReadRefusal | undefined =>
  stat.isDirectory()
    ? { _tag: "Directory" }
    : !stat.isFile()
    ? { _tag: "NotRegular", kind: kindOf(stat) }
    : stat.size > max
    ? { _tag: "TooBig", size: stat.size }
    : undefined

const refusalOfError = (cause: unknown): ReadRefusal => {
  const code = (cause as { code?: string }).code
  return code === "ENOENT" || code === "ENOTDIR" ? { _tag: "Missing" } : { _tag: "Unreadable", code }
}

/**
 * Opens `file` for reading if it is a regular file of at most `max` bytes: checked from the
 * real path's stat before opening, opened with O_NONBLOCK and O_NOFOLLOW (no link swapped in
 * since is followed), and checked again on the descriptor.
 */
const openChecked = (file: string, max: number): Either.Either<number, ReadRefusal> => {
  let fd: number | undefined
  try {
    const real = realPathOf(file)
    const before = refusalOfStat(fs.statSync(real), max)
    if (before !== undefined) return Either.left(before)
    fd = fs.openSync(real, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK | fs.constants.O_NOFOLLOW)
    const after = refusalOfStat(fs.fstatSync(fd), max)
    if (after === undefined) return Either.right(fd)
    fs.closeSync(fd)
    return Either.left(after)
  } catch (cause) {
    if (fd !== undefined) fs.closeSync(fd)
    return Either.left(refusalOfError(cause))
  }
}

/**
 * The bytes of a regular file of at most `max` bytes (a file that grew past it while read is
 * TooBig), read a piece at a time; interrupting the effect stops the read.
 */
export const readRegularFile = (file: string, max: number): Effect.Effect<Either.Either<Buffer, ReadRefusal>> =>
  Effect.async<Either.Either<Buffer, ReadRefusal>>((resume) => {
    const opened = openChecked(file, max)
    if (Either.isLeft(opened)) return resume(Effect.succeed(Either.left(opened.left)))
    const fd = opened.right
    const chunks: Array<Buffer> = []
    let total = 0
    let cancelled = false
    const done = (result: Either.Either<Buffer, ReadRefusal>) => {
      fs.close(fd, () => {})
      if (!cancelled) resume(Effect.succeed(result))
    }
    const next = () =>
      fs.read(fd, Buffer.allocUnsafe(CHUNK), 0, CHUNK, null, (error, n, buffer) => {
        if (cancelled) return fs.close(fd, () => {})
        if (error !== null) return done(Either.left(refusalOfError(error)))
        if (n === 0) return done(Either.right(Buffer.concat(chunks, total)))
        total += n
        if (total > max) return done(Either.left({ _tag: "TooBig", size: total }))
        chunks.push(buffer.subarray(0, n))
        next()
      })
    next()
    return Effect.sync(() => {
      cancelled = true
    })
  })
