import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { commitTemp, isTempName, STALE_TEMP_MS, sweepLeftTemps, tempNameFor, unlinkQuietly } from "../lib/DurableFiles"
import { nodeCrypto } from "../lib/NodeModules"

export { writeFileAtomic } from "../lib/DurableFiles"
import { firstLineOf } from "../lib/OneLine"
import { ensureProjectDir } from "../lib/ProjectDir"
import { within } from "../lib/RealPath"
import { readRegularSync } from "../lib/RegularFiles"

/**
 * The contents of files before and after mm's file tools changed them, stored once each under
 * their sha-256 in `<project>/.mm/checkpoints/` (docs/explanation/checkpoints.md says why there).
 */

const CHECKPOINTS_DIR = path.join(".mm", "checkpoints")
/** Files larger than this are not kept: their change is recorded as `skipped: "too large"`. */
export const MAX_CHECKPOINT_BYTES = 10 * 1024 * 1024
/** A blob younger than this may belong to a change whose session is being saved: gc leaves it. */
const GC_GRACE_MS = 60 * 1000

export const checkpointsDirOf = (cwd: string): string => path.join(cwd, CHECKPOINTS_DIR)

export const hashOf = (bytes: Uint8Array): string => nodeCrypto().createHash("sha256").update(bytes).digest("hex")

const isBlobName = (name: string): boolean => /^[0-9a-f]{64}$/.test(name)

export class CheckpointError extends Schema.TaggedError<CheckpointError>()("CheckpointError", {
  reason: Schema.Literal("io", "missing", "damaged", "refused"),
  message: Schema.String,
  raw: Schema.String
}) {}

const errorText = (cause: unknown): string => {
  const code = (cause as { code?: unknown } | null)?.code
  switch (code) {
    case "ENOENT":
      return "no such file or directory"
    case "EACCES":
    case "EPERM":
      return "permission denied"
    case "ENOSPC":
      return "no space left on device"
    case "EROFS":
      return "read-only file system"
    case "ENOTDIR":
      return "part of the path is not a directory"
    default:
      return firstLineOf(cause)
  }
}

/**
 * Stores `bytes` as `<dir>/<hash>` (mode 0600, written atomically like a session file) unless
 * a blob of that name is already there; the directory is made on the first blob.
 */
export const putBlob = (dir: string, bytes: Uint8Array, hash: string = hashOf(bytes)): string => {
  const file = path.join(dir, hash)
  if (fs.existsSync(file)) return hash
  const temp = tempNameFor(file)
  let fd: number
  try {
    fd = fs.openSync(temp, "wx", 0o600)
  } catch (cause) {
    if ((cause as { code?: unknown }).code !== "ENOENT") throw cause
    ensureProjectDir(dir)
    fd = fs.openSync(temp, "wx", 0o600)
  }
  commitTemp(fd, temp, file, bytes, 0o600)
  return hash
}

/** The bytes of a blob on disk, when it is there whole (its content matches its name); else undefined. */
export const readBlobSync = (cwd: string, hash: string): Buffer | undefined => {
  if (!isBlobName(hash)) return undefined
  try {
    const bytes = readRegularSync(path.join(checkpointsDirOf(cwd), hash), MAX_CHECKPOINT_BYTES)
    return hashOf(bytes) === hash ? bytes : undefined
  } catch {
    return undefined
  }
}

export interface CheckpointsShape {
  /**
   * Keeps `bytes` under their hash and returns it. `persist: false` (sessions off) keeps them in
   * memory only; a blob that cannot be written keeps them in memory too, and says why.
   */
  readonly put: (
    cwd: string,
    bytes: Uint8Array,
    persist: boolean
  ) => Effect.Effect<{ readonly hash: string; readonly warning: string | undefined }>
  /** The bytes of a blob, checked against their name. */
  readonly get: (cwd: string, hash: string) => Effect.Effect<Buffer, CheckpointError>
}

export class Checkpoints extends Context.Tag("mm/Checkpoints")<Checkpoints, CheckpointsShape>() {}

export const makeCheckpoints = (): CheckpointsShape => {
  const inMemory = new Map<string, Buffer>()
  const put: CheckpointsShape["put"] = Effect.fn("Checkpoints.put")(function*(cwd, bytes, persist) {
    const hash = hashOf(bytes)
    if (!persist) {
      inMemory.set(hash, Buffer.from(bytes))
      return { hash, warning: undefined }
    }
    try {
      putBlob(checkpointsDirOf(cwd), bytes, hash)
      return { hash, warning: undefined }
    } catch (cause) {
      inMemory.set(hash, Buffer.from(bytes))
      return {
        hash,
        warning: `checkpoints: cannot write ${checkpointsDirOf(cwd)} (${errorText(cause)}); /undo works until mm exits`
      }
    }
  })
  const get: CheckpointsShape["get"] = Effect.fn("Checkpoints.get")(function*(cwd, hash) {
    const held = inMemory.get(hash)
    if (held !== undefined) return held
    const file = path.join(checkpointsDirOf(cwd), hash)
    let bytes: Buffer
    try {
      bytes = readRegularSync(file, MAX_CHECKPOINT_BYTES)
    } catch (cause) {
      const missing = (cause as { code?: unknown }).code === "ENOENT"
      return yield* new CheckpointError({
        reason: missing ? "missing" : "io",
        message: missing
          ? `checkpoint ${hash.slice(0, 12)} is missing from ${checkpointsDirOf(cwd)}`
          : `cannot read checkpoint ${hash.slice(0, 12)}: ${errorText(cause)}`,
        raw: String(cause)
      })
    }
    if (hashOf(bytes) !== hash) {
      return yield* new CheckpointError({
        reason: "damaged",
        message: `checkpoint ${hash.slice(0, 12)} is damaged (its content does not match its name)`,
        raw: file
      })
    }
    return bytes
  })
  return { put, get }
}

export interface GcReport {
  readonly dir: string
  readonly removed: number
  readonly freedBytes: number
  readonly kept: number
}

/**
 * Deletes the blobs of `dir` that `referenced` does not name (and temporary files a killed
 * writer left), except those written in the last `graceMs`: a running mm may be about to
 * record them. With `only`, just those blobs are candidates.
 */
export const collectGarbage = (
  dir: string,
  referenced: ReadonlySet<string>,
  now: number,
  options: { readonly graceMs?: number; readonly only?: ReadonlySet<string> } = {}
): GcReport => {
  const graceMs = options.graceMs ?? GC_GRACE_MS
  let names: Array<string>
  try {
    names = fs.readdirSync(dir)
  } catch (cause) {
    if ((cause as { code?: unknown }).code === "ENOENT") return { dir, removed: 0, freedBytes: 0, kept: 0 }
    throw cause
  }
  let removed = 0
  let freedBytes = 0
  let kept = 0
  for (const name of names) {
    const file = path.join(dir, name)
    if (isTempName(name)) {
      const stat = fs.statSync(file, { throwIfNoEntry: false })
      if (stat !== undefined && now - stat.mtimeMs > STALE_TEMP_MS) unlinkQuietly(file)
      continue
    }
    if (!isBlobName(name) || (options.only !== undefined && !options.only.has(name))) continue
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (stat === undefined) continue
    if (referenced.has(name) || now - stat.mtimeMs < graceMs) {
      kept++
      continue
    }
    unlinkQuietly(file)
    removed++
    freedBytes += stat.size
  }
  return { dir, removed, freedBytes, kept }
}

/**
 * What an mm killed in the middle of a write left in the project's `.mm/`, removed as mm
 * starts: the temporary files of `tmp/` (the project's files being replaced), of
 * `checkpoints/` (blobs) and of the sessions directory when it is in the project, whose
 * writer's process is gone. A shared sessions directory elsewhere is left to the store's own
 * sweep (an hour on). Asynchronous, and never fails: it is forked beside the start.
 */
export const sweepProjectTemps = Effect.fn("Checkpoints.sweepTemps")(
  function*(cwd: string, sessionsDir: string | undefined) {
    const dirs = [path.join(cwd, ".mm", "tmp"), checkpointsDirOf(cwd)]
    if (sessionsDir !== undefined && within(cwd, sessionsDir)) dirs.push(sessionsDir)
    const removed = yield* Effect.promise(() => Promise.all(dirs.map((dir) => sweepLeftTemps(dir))))
    return removed.reduce((sum, count) => sum + count, 0)
  }
)
