/**
 * What the user trusted of a project's configuration: `trust.json` in the project's own
 * directory of the user's state (lib/UserState.ts), never in the project. It holds, for each
 * configuration file of the project (its real path), the hash of the guarded settings the user
 * trusted (ProjectTrust.ts): the same settings are trusted, changed ones are asked again. Beside
 * them, under `commands`, the project's own slash commands the user trusted: for the project's
 * `.mm/commands` folder (its real path), the hash of the command files' names and contents
 * (commands/UserCommands.ts). A store written before there was a `commands` key reads as it did.
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

type Records = Record<string, TrustRecord>

interface Store {
  /** By configuration file. */
  readonly files: Records
  /** By the project's commands folder. */
  readonly commands: Records
}

const recordsOf = (value: unknown): Records => {
  const records: Records = {}
  if (!isRecord(value)) return records
  for (const [name, record] of Object.entries(value)) {
    if (isRecord(record) && typeof record.hash === "string") {
      records[name] = { hash: record.hash, at: String(record.at ?? "") }
    }
  }
  return records
}

const EMPTY: Store = { files: {}, commands: {} }

/**
 * The records of the file; none when it is missing, damaged, of another version, or others than
 * the user could have written it.
 */
const readStore = (file: string): Store => {
  try {
    if (othersMayWrite(fs.statSync(file)) !== undefined) return EMPTY
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as unknown
    if (!isRecord(parsed) || parsed.version !== TRUST_VERSION || !isRecord(parsed.files)) return EMPTY
    return { files: recordsOf(parsed.files), commands: recordsOf(parsed.commands) }
  } catch {
    return EMPTY
  }
}

const readRecords = (file: string): Records => readStore(file).files

/** Writes the store with one record changed; the path of the file written. */
const writeStore = (project: string, change: (store: Store) => Store, env: NodeJS.ProcessEnv): string => {
  const file = trustFileOf(project, env)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  const { commands, files } = change(readStore(file))
  // no empty `commands` key: a store with none is the one older versions of mm wrote
  const store = Object.keys(commands).length === 0
    ? { version: TRUST_VERSION, files }
    : { version: TRUST_VERSION, files, commands }
  writeFileAtomic(file, Buffer.from(`${JSON.stringify(store, null, 2)}\n`), 0o600)
  fs.chmodSync(file, 0o600)
  return file
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
): string =>
  writeStore(project, (store) => ({
    ...store,
    files: { ...store.files, [realOrResolved(config)]: { hash, at: new Date().toISOString() } }
  }), env)

/** The project's own commands trusted in this process, whether or not the store could keep them. */
const trustedThisRun = new Set<string>()

const commandsKey = (folder: string, hash: string): string => `${realOrResolved(folder)}\0${hash}`

/**
 * Whether the user trusted the project's commands of hash `hash` (their folder `folder`, the
 * project's `.mm/commands`): recorded in the store, or answered yes in this process. Never fails.
 */
export const trustsCommands = (
  project: string,
  folder: string,
  hash: string,
  env: NodeJS.ProcessEnv = process.env
): boolean => {
  if (trustedThisRun.has(commandsKey(folder, hash))) return true
  const records = readStore(trustFileOf(project, env)).commands
  return Object.keys(records).length > 0 && records[realOrResolved(folder)]?.hash === hash
}

/**
 * Records that the user trusts the project's commands of hash `hash` (trusted for this process
 * first, so that a store that cannot be written still lets them run); fails with the file system's error.
 */
export const recordCommandsTrust = (
  project: string,
  folder: string,
  hash: string,
  env: NodeJS.ProcessEnv = process.env
): string => {
  trustedThisRun.add(commandsKey(folder, hash))
  return writeStore(project, (store) => ({
    ...store,
    commands: { ...store.commands, [realOrResolved(folder)]: { hash, at: new Date().toISOString() } }
  }), env)
}
