/**
 * The configurations decoded before, kept between runs so that a start of mm whose agent.yaml
 * has not changed neither loads the YAML parser nor builds the schema (together some 6 ms of
 * every start). One file, `~/.cache/mm/config-memo.json`, 0600 in a 0700 directory, written
 * atomically, holding the last few configurations decoded, each under a key naming everything it
 * came from: a hash of the exact text of each file (the user's and the chosen one; the texts
 * themselves are not kept), and what was trusted (whether the chosen file is the project's, and
 * the hash the trust store held for it, or `--trust`).
 *
 * What is trusted from it, and why that is safe:
 * - an entry is used only for the very same texts (a 128-bit hash and its length each) and the
 *   very same trust, decoded by the very same build (`stamp`: a hash of the configuration's code and of the locked dependencies,
 *   set by scripts/build.mjs; a run from the sources has none and keeps no memo);
 * - only a configuration that decoded without an error is kept: every error is found afresh,
 *   with its line and column; nor is one that left a project's settings out until trusted (the
 *   question needs what was left out);
 * - a configuration that may hold a credential (request headers or extra body fields, a URL
 *   with a user part or a query, any MCP server) is never kept, so no key is copied out of the
 *   project;
 * - a file of another shape, unreadable or damaged, is no answer: the text is decoded again.
 */
import * as fs from "node:fs"
import * as path from "node:path"

import { userCacheDir } from "../lib/CacheDir"
import { writeFileAtomic } from "../lib/DurableFiles"
import { isRecord } from "../lib/Guards"
import { nameHash } from "../lib/QuickIds"
import type { AgentConfig } from "./ConfigSchema"

declare const MM_CONFIG_STAMP: string | undefined

/** The build's stamp, when it has one (scripts/build.mjs); none when run from the sources. */
export const buildStamp = (): string | undefined =>
  typeof MM_CONFIG_STAMP === "string" && process.env.MM_NO_CONFIG_MEMO === undefined ? MM_CONFIG_STAMP : undefined

export const MEMO_FILE = "config-memo.json"
const MEMO_VERSION = 2
/** The configurations kept, of every build: enough for the projects and checkouts one person switches between. */
export const MEMO_ENTRIES = 16

/** What names one text: its hash and its length; `undefined` stands for "no agent.yaml" (the defaults). */
export const keyOf = (text: string | undefined): string =>
  text === undefined ? "defaults" : `${nameHash(text)}-${text.length.toString(36)}`

interface MemoEntry {
  /** The build that decoded it. */
  readonly stamp: string
  readonly key: string
  readonly config: AgentConfig
}

const memoPath = (dir: string) => path.join(dir, MEMO_FILE)

/** An entry's shape; its configuration is looked into only when it is the one asked for (`recall`). */
const isEntry = (entry: unknown): entry is MemoEntry =>
  isRecord(entry) && typeof entry.stamp === "string" && typeof entry.key === "string" && isRecord(entry.config)

/** The entries of the memo file, of every build; none when it is missing, damaged or of another version. */
const readEntries = (dir: string): Array<MemoEntry> => {
  try {
    const parsed = JSON.parse(fs.readFileSync(memoPath(dir), "utf8")) as unknown
    if (!isRecord(parsed) || parsed.version !== MEMO_VERSION || !Array.isArray(parsed.entries)) return []
    return parsed.entries.filter(isEntry)
  } catch {
    return []
  }
}

/**
 * Whether a value goes through JSON and comes back the same: strings, booleans, null, finite
 * numbers other than -0, arrays and plain objects of them. YAML can give more (`.inf`, `.nan`),
 * and JSON would change those; such a configuration is not kept.
 */
const isPlainData = (value: unknown): boolean => {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0)
    case "object":
      if (value === null) return true
      if (Array.isArray(value)) return value.every(isPlainData)
      if (Object.getPrototypeOf(value) !== Object.prototype) return false
      return Object.entries(value).every(([key, field]) => key !== "__proto__" && isPlainData(field))
    default:
      return false
  }
}

/** A URL's user part or query may carry a key. */
const urlMayHoldKey = (url: string): boolean => /^[a-z][a-z0-9+.-]*:\/\/[^/?#\s]*@/i.test(url) || /[?#]/.test(url)

/**
 * Whether a decoded configuration may hold a credential, and so must not be copied to the cache:
 * request headers, extra body fields, a URL's user part or query, or any MCP server (whose
 * environment, headers or arguments may carry a token).
 */
const mayHoldCredential = (config: AgentConfig): boolean =>
  config.model.headers !== undefined || config.model.extraBody !== undefined || urlMayHoldKey(config.model.url) ||
  Object.keys(config.mcpServers).length > 0

/** The configuration decoded before under this key (`keyOf` of each input, joined) by this build, if it was kept. Never fails. */
export const recall = (key: string, stamp: string, dir = userCacheDir()): AgentConfig | undefined =>
  recallFrom(stamp, dir)(key)

/** The memo read once, to look up one key or more (`recall`). Never fails. */
export const recallFrom = (stamp: string, dir = userCacheDir()): (key: string) => AgentConfig | undefined => {
  const entries = readEntries(dir)
  return (key) => {
    const config = entries.find((entry) => entry.stamp === stamp && entry.key === key)?.config
    return config !== undefined && isPlainData(config) ? config : undefined
  }
}

/** Keeps a configuration just decoded under `key`, first of the file; never fails (a memo not written costs time only). */
export const remember = (key: string, stamp: string, config: AgentConfig, dir = userCacheDir()): void => {
  if (mayHoldCredential(config) || !isPlainData(config)) return
  try {
    const others = readEntries(dir).filter((entry) => entry.stamp !== stamp || entry.key !== key)
    const entries = [{ stamp, key, config }, ...others].slice(0, MEMO_ENTRIES)
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    const body = JSON.stringify({ version: MEMO_VERSION, entries })
    writeFileAtomic(memoPath(dir), Buffer.from(`${body}\n`), 0o600)
  } catch {
    // the next run decodes again
  }
}
