/**
 * What the user trusted of a project's configuration: `trust.json` in the project's own
 * directory of the user's state (lib/UserState.ts), never in the project. It holds, for each
 * configuration file of the project (its real path), the hash of the guarded settings the user
 * trusted (ProjectTrust.ts): the same settings are trusted, changed ones are asked again.
 * 0600 in 0700 directories, replaced atomically. Read at every start, so kept small and plain.
 */
import * as fs from "node:fs"
import * as path from "node:path"

import { writeFileAtomic } from "../lib/DurableFiles"
import { isRecord } from "../lib/Guards"
import { realPathOf } from "../lib/RealPath"
import { othersMayWrite, projectStateDir } from "../lib/UserState"

export const TRUST_FILE = "trust.json"
const TRUST_VERSION = 1

/** Where the trust of the project `project` (a directory) is kept. */
export const trustFileOf = (project: string, env: NodeJS.ProcessEnv = process.env): string =>
  path.join(projectStateDir(project, env), TRUST_FILE)

interface TrustRecord {
  readonly hash: string
  /** When it was trusted (ISO 8601), for the person who reads the file. */
  readonly at: string
}

const realOrResolved = (file: string): string => {
  try {
    return realPathOf(file)
  } catch {
    return path.resolve(file)
  }
}

/**
 * The records of the file, by configuration file; none when it is missing, damaged, of another
 * version, or others than the user could have written it.
 */
const readRecords = (file: string): Record<string, TrustRecord> => {
  try {
    if (othersMayWrite(fs.statSync(file)) !== undefined) return {}
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as unknown
    if (!isRecord(parsed) || parsed.version !== TRUST_VERSION || !isRecord(parsed.files)) return {}
    const records: Record<string, TrustRecord> = {}
    for (const [name, record] of Object.entries(parsed.files)) {
      if (isRecord(record) && typeof record.hash === "string") {
        records[name] = { hash: record.hash, at: String(record.at ?? "") }
      }
    }
    return records
  } catch {
    return {}
  }
}

/** The hash trusted for the configuration file `config` of `project`, if any. Never fails. */
export const trustedHash = (project: string, config: string, env: NodeJS.ProcessEnv = process.env) => {
  const records = readRecords(trustFileOf(project, env))
  // most projects have none: the configuration's real path is not worked out for nothing
  return Object.keys(records).length === 0 ? undefined : records[realOrResolved(config)]?.hash
}

/** Records that the user trusts `config`'s guarded settings of hash `hash`; fails with the file system's error. */
export const recordTrust = (
  project: string,
  config: string,
  hash: string,
  env: NodeJS.ProcessEnv = process.env
): string => {
  const file = trustFileOf(project, env)
  const dir = path.dirname(file)
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const files = { ...readRecords(file), [realOrResolved(config)]: { hash, at: new Date().toISOString() } }
  writeFileAtomic(file, Buffer.from(`${JSON.stringify({ version: TRUST_VERSION, files }, null, 2)}\n`), 0o600)
  fs.chmodSync(file, 0o600)
  return file
}

/**
 * Whether the user ever trusted a configuration of `project` (the trust store holds a record for
 * it): what the project's own slash commands wait for (commands/UserCommands.ts). Never fails.
 */
export const trustsProject = (project: string, env: NodeJS.ProcessEnv = process.env): boolean =>
  Object.keys(readRecords(trustFileOf(project, env))).length > 0
