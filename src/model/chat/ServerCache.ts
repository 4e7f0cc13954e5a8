/**
 * What a model server said about itself, kept for a few minutes between runs, so that a start
 * of mm asks it nothing before its first request: the model list it gave and the context
 * window it serves (with its kind and what its template can take). A first guess only: every
 * run asks the server again (`ServerWatch.ts`), and only its answers are kept. One file per server URL and
 * model under the user's cache directory (`~/.cache/mm/server-<hash>.json`), 0600 in a 0700
 * directory, written atomically; the URL itself is not written (it may hold a key), and its name
 * is a hash of the URL without the parts that may hold one.
 * A file past its lifetime, unreadable or of another shape is no answer, and asked again.
 */
import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { userCacheDir } from "../../lib/CacheDir"
import { tempNameFor } from "../../lib/DurableFiles"
import { isRecord } from "../../lib/Guards"
import { nameHash } from "../../lib/QuickIds"
import type { ModelList, ServedContext, ServerKind } from "./ServerProbe"

/** How long what a server said is trusted without asking it again. */
export const SERVER_CACHE_LIFETIME_MS = 10 * 60 * 1000

/** What is kept of one server and model. */
export interface ServerMemo {
  readonly list: ModelList | undefined
  readonly served: ServedContext
}

export interface ServerCacheShape {
  /** What was kept of this server and model, when it is younger than its lifetime. Never fails. */
  readonly read: (baseUrl: string, model: string) => Effect.Effect<ServerMemo | undefined>
  /** Keeps it (replacing what was kept). Never fails: a cache that cannot be written only costs time. */
  readonly write: (baseUrl: string, model: string, memo: ServerMemo) => Effect.Effect<void>
}

/** No cache: nothing kept, nothing read (the default, and what `MM_NO_SERVER_CACHE` asks for). */
export const noServerCache: ServerCacheShape = {
  read: () => Effect.succeed(undefined),
  write: () => Effect.void
}

/** Where what the model servers said is kept: a required service (`makeServerCache`, or `noServerCache`). */
export class ServerCache extends Context.Tag("mm/ServerCache")<ServerCache, ServerCacheShape>() {}

/** One file, as written. */
interface MemoFile {
  readonly version: 1
  readonly savedAt: number
  readonly model: string
  readonly list: {
    readonly ids: ReadonlyArray<string>
    readonly ownedBy: ReadonlyArray<string>
    readonly maxModelLen: number | null
  } | null
  readonly served: {
    readonly kind: ServerKind
    readonly tokens: number | null
    readonly askAgainAfterAnswer: boolean
    readonly noToolTemplate?: boolean
    readonly vision?: boolean
  }
}

const KINDS: ReadonlySet<string> = new Set<ServerKind>(["ollama", "llama.cpp", "vllm", "lmstudio", "openai", "unknown"])

const isStrings = (value: unknown): boolean => Array.isArray(value) && value.every((item) => typeof item === "string")
const isNumberOrNull = (value: unknown): boolean => value === null || typeof value === "number"
const isBooleanOrAbsent = (value: unknown): boolean => value === undefined || typeof value === "boolean"

const isList = (list: unknown): boolean =>
  list === null ||
  (isRecord(list) && isStrings(list.ids) && isStrings(list.ownedBy) && isNumberOrNull(list.maxModelLen))

const isServed = (served: unknown): boolean =>
  isRecord(served) && typeof served.kind === "string" && KINDS.has(served.kind) && isNumberOrNull(served.tokens) &&
  typeof served.askAgainAfterAnswer === "boolean" && isBooleanOrAbsent(served.noToolTemplate) &&
  isBooleanOrAbsent(served.vision)

/**
 * A file's text as a memo, or undefined when it is not JSON of that shape. Checked field by
 * field rather than by a Schema: the file is read on every start, and a Schema made and run for
 * it was about a millisecond of each (fromFile below copies only the fields it knows).
 */
const decodeMemo = (text: string): MemoFile | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isRecord(value) || value.version !== 1 || typeof value.savedAt !== "number") return undefined
  if (typeof value.model !== "string" || !isList(value.list) || !isServed(value.served)) return undefined
  return value as unknown as MemoFile
}

/**
 * The URL's scheme, host, port and path: its user part and query, which may carry a key, are
 * left out, since the fast hash of the file name is no place for a secret (a key of modest
 * length could be found back from it). Two URLs that differ there are the same server.
 */
export const publicPartOf = (baseUrl: string): string =>
  baseUrl.trim().replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#\s]*@/i, "$1").replace(/[?#].*$/s, "")

/** The file of one server URL and model: its name is a hash, never the URL. */
export const serverCacheFile = (dir: string, baseUrl: string, model: string): string =>
  path.join(dir, `server-${nameHash(`${publicPartOf(baseUrl)}\n${model}`)}.json`)

const toFile = (model: string, memo: ServerMemo, now: number): MemoFile => ({
  version: 1,
  savedAt: now,
  model,
  list: memo.list === undefined ? null : { ...memo.list, maxModelLen: memo.list.maxModelLen ?? null },
  served: {
    kind: memo.served.kind,
    tokens: memo.served.tokens ?? null,
    askAgainAfterAnswer: memo.served.askAgainAfterAnswer,
    ...(memo.served.noToolTemplate !== undefined ? { noToolTemplate: memo.served.noToolTemplate } : {}),
    ...(memo.served.vision !== undefined ? { vision: memo.served.vision } : {})
  }
})

const fromFile = (file: MemoFile): ServerMemo => ({
  list: file.list === null ? undefined : { ...file.list, maxModelLen: file.list.maxModelLen ?? undefined },
  served: {
    kind: file.served.kind,
    tokens: file.served.tokens ?? undefined,
    askAgainAfterAnswer: file.served.askAgainAfterAnswer,
    ...(file.served.noToolTemplate !== undefined ? { noToolTemplate: file.served.noToolTemplate } : {}),
    ...(file.served.vision !== undefined ? { vision: file.served.vision } : {})
  }
})

/** Reads one file; undefined when it is missing, of another shape, another model, or too old. */
export const readMemo = (file: string, model: string, now: number): ServerMemo | undefined => {
  let text: string
  try {
    text = fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
  const decoded = decodeMemo(text)
  if (decoded === undefined) return undefined
  const age = now - decoded.savedAt
  if (decoded.model !== model || age < 0 || age > SERVER_CACHE_LIFETIME_MS) return undefined
  return fromFile(decoded)
}

/** Writes one file atomically (temporary file, fsync, rename), 0600 in a 0700 directory. */
export const writeMemo = async (file: string, model: string, memo: ServerMemo, now: number): Promise<void> => {
  await fs.promises.mkdir(path.dirname(file), { recursive: true, mode: 0o700 })
  const temp = tempNameFor(file)
  const handle = await fs.promises.open(temp, "wx", 0o600)
  try {
    try {
      await handle.writeFile(`${JSON.stringify(toFile(model, memo, now))}\n`)
      await handle.sync()
    } finally {
      await handle.close()
    }
    await fs.promises.rename(temp, file)
  } catch (cause) {
    await fs.promises.rm(temp, { force: true })
    throw cause
  }
}

/** The cache on disk, under `dir` (the user's cache directory unless told). */
export const diskServerCache = (dir: string, now: () => number = Date.now): ServerCacheShape => ({
  read: (baseUrl, model) => Effect.sync(() => readMemo(serverCacheFile(dir, baseUrl, model), model, now())),
  write: (baseUrl, model, memo) => {
    const file = serverCacheFile(dir, baseUrl, model)
    return Effect.promise(() => writeMemo(file, model, memo, now()).catch(() => undefined))
  }
})

/** The cache under the user's cache directory; none with `MM_NO_SERVER_CACHE` set. */
export const makeServerCache = Effect.sync(() =>
  process.env.MM_NO_SERVER_CACHE !== undefined ? noServerCache : diskServerCache(userCacheDir())
)
