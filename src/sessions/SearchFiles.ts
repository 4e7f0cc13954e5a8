import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import * as Either from "effect/Either"

import { idOfFileName, parseSession } from "./SessionCodec"
import { type Matcher, type SessionHits, sessionHits } from "./SessionSearch"

/**
 * Searching a directory of session files: newest id first, a few files read at a time, each
 * looked at as raw bytes before anything is parsed. Only a file that may match is parsed; at
 * most `concurrency` files are held at once, and each result is handed on as soon as the
 * newer ones before it are.
 */

/** Files read at once: enough to keep the disk and the thread pool busy, few enough to bound memory. */
export const SEARCH_CONCURRENCY = 8

/** A file larger than this is no session mm wrote (mm's files are far smaller): skipped. */
const MAX_FILE_BYTES = 256 * 1024 * 1024

const OPEN_FLAGS = NodeFs.constants.O_RDONLY | NodeFs.constants.O_NONBLOCK | NodeFs.constants.O_NOFOLLOW

/** Buffers to read files into, one per file being read, reused from file to file. */
type Pool = Array<Buffer>

const INITIAL_BUFFER = 256 * 1024

/**
 * The file's bytes in a buffer of the pool (valid until `release`), or undefined when it is not
 * a regular file (a link, a directory), is too large or is gone.
 */
const readRegular = async (pool: Pool, path: string): Promise<Buffer | undefined> => {
  let handle: NodeFs.promises.FileHandle
  try {
    handle = await NodeFs.promises.open(path, OPEN_FLAGS)
  } catch {
    return undefined
  }
  let buffer = pool.pop() ?? Buffer.allocUnsafe(INITIAL_BUFFER)
  try {
    const stat = await handle.stat()
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return undefined
    // a file may grow while it is read: read to its end, growing the buffer
    if (buffer.length < stat.size + 1) buffer = Buffer.allocUnsafe(Math.max(stat.size + 1, buffer.length * 2))
    let length = 0
    for (;;) {
      if (length === buffer.length) {
        if (length >= MAX_FILE_BYTES) return undefined
        const larger = Buffer.allocUnsafe(buffer.length * 2)
        buffer.copy(larger, 0, 0, length)
        buffer = larger
      }
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null)
      if (bytesRead === 0) break
      length += bytesRead
    }
    const read = buffer.subarray(0, length)
    buffer = Buffer.alloc(0)
    return read
  } catch {
    return undefined
  } finally {
    if (buffer.length > 0) pool.push(buffer)
    await handle.close().catch(() => undefined)
  }
}

/** Gives a read buffer back to the pool (its whole allocation). */
const release = (pool: Pool, read: Buffer) => {
  pool.push(Buffer.from(read.buffer, read.byteOffset, read.buffer.byteLength - read.byteOffset))
}

/** One file's hits; an unreadable file (or one that is no session) has none. */
const searchFile = async (
  pool: Pool,
  dir: string,
  name: string,
  matcher: Matcher
): Promise<SessionHits | undefined> => {
  const raw = await readRegular(pool, NodePath.join(dir, name))
  if (raw === undefined) return undefined
  try {
    if (!matcher.mayMatch(raw)) return undefined
    const parsed = parseSession(raw.toString("utf8"), name.slice(0, 24))
    return Either.isRight(parsed) ? sessionHits(parsed.right, matcher) : undefined
  } finally {
    release(pool, raw)
  }
}

/** The session files of `dir`, newest id first (none when it does not exist). */
const sessionNames = (dir: string): ReadonlyArray<string> => {
  try {
    return NodeFs.readdirSync(dir).filter((name) => idOfFileName(name) !== undefined).sort().reverse()
  } catch (cause) {
    if ((cause as { code?: unknown }).code === "ENOENT") return []
    throw cause
  }
}

/** Each session of `dir` with hits, newest id first, as they are found. */
export async function* searchDir(
  dir: string,
  matcher: Matcher,
  concurrency: number = SEARCH_CONCURRENCY
): AsyncGenerator<SessionHits> {
  const names = sessionNames(dir)
  const pending: Array<Promise<SessionHits | undefined>> = []
  const pool: Pool = []
  let next = 0
  const startNext = () => {
    const name = names[next++]
    // a rejection is kept for its turn, never left unhandled meanwhile
    const found = searchFile(pool, dir, name, matcher)
    found.catch(() => undefined)
    pending.push(found)
  }
  while (next < names.length && pending.length < concurrency) startNext()
  while (pending.length > 0) {
    const found = await pending.shift()!
    if (next < names.length) startNext()
    if (found !== undefined) yield found
  }
}
