/**
 * The configuration in force: where it is found (the user's own file, and the chosen one over
 * it), how it is read, and the one service that holds it. Its schema (ConfigSchema.ts), its
 * reading (ConfigParse.ts) and the merging of the files with the project's trust
 * (ConfigMerge.ts, ProjectTrust.ts) are loaded only when a configuration must be decoded: one
 * seen before comes from the memo (ConfigMemo.ts).
 */
import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { ConfigError } from "../domain/Errors"
import { realPathOf } from "../lib/RealPath"
import { userConfigDir } from "../lib/UserState"
import { buildStamp, keyOf, recallFrom, remember } from "./ConfigMemo"
import type { Merged, MergeInput, Source } from "./ConfigMerge"
import type { AgentConfig } from "./ConfigSchema"
import type { UntrustedSettings } from "./ProjectTrust"
import { trustedHash } from "./TrustStore"

export type { AgentConfig } from "./ConfigSchema"

/** The context window assumed when neither agent.yaml nor the server says it. */
export const DEFAULT_CONTEXT_WINDOW = 32768

export interface LoadedConfig {
  readonly config: AgentConfig
  /** The file it came from (the chosen one, else the user's); undefined for the built-in defaults. */
  readonly file: string | undefined
  /** The user's own agent.yaml, when it was read. */
  readonly userFile?: string | undefined
  /** The project's guarded settings, left out of `config` until the user trusts them (ProjectTrust.ts). */
  readonly untrusted?: UntrustedSettings | undefined
  /** `--trust` or `MM_TRUST_PROJECT=1` was given: the project is trusted for this run. */
  readonly trustAll?: boolean
}

/** The configuration in force, provided once at the edge of the program. */
export class AppConfig extends Context.Tag("mm/AppConfig")<AppConfig, LoadedConfig>() {}

export interface ConfigLookup {
  readonly flag: string | undefined
  readonly env: string | undefined
  readonly cwd: string
  /** `--trust` or `MM_TRUST_PROJECT=1`: the project's guarded settings apply, for this run, without being recorded. */
  readonly trust?: boolean
  /** Where the user's own agent.yaml is looked for (tests); `$XDG_CONFIG_HOME/mm/` by default. */
  readonly userDir?: string
}

/** `--config`, then `AGENT_CONFIG`, then `./agent.yaml`, then the defaults. */
export const findConfigFile = (lookup: ConfigLookup): { file: string; required: boolean } | undefined => {
  if (lookup.flag !== undefined && lookup.flag !== "") {
    return { file: path.resolve(lookup.cwd, lookup.flag), required: true }
  }
  if (lookup.env !== undefined && lookup.env !== "") {
    return { file: path.resolve(lookup.cwd, lookup.env), required: true }
  }
  const local = path.join(lookup.cwd, "agent.yaml")
  return fs.existsSync(local) ? { file: local, required: false } : undefined
}

/** The user's own configuration file: `$XDG_CONFIG_HOME/mm/agent.yaml`. */
export const userConfigFile = (lookup: Pick<ConfigLookup, "userDir"> = {}): string =>
  path.join(lookup.userDir ?? userConfigDir(), "agent.yaml")

const realOr = (file: string): string => {
  try {
    return realPathOf(file)
  } catch {
    return path.resolve(file)
  }
}

/**
 * Whether a file belongs to the project: `./agent.yaml` always; a file named by `--config` or
 * `$AGENT_CONFIG` when its real path lies under the working directory's.
 */
export const isProjectFile = (found: { file: string; required: boolean }, cwd: string): boolean => {
  if (!found.required) return true
  const relative = path.relative(realOr(cwd), realOr(found.file))
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)
}

/** How a project's file is named to the user: `./agent.yaml`, relative to the working directory. */
export const shownFile = (file: string, cwd: string): string => {
  const relative = path.relative(cwd, file)
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : `./${relative}`
}

/** An agent.yaml larger than this is refused: no configuration comes near it. */
export const MAX_CONFIG_BYTES = 1024 * 1024

const readProblem = (cause: unknown): string => {
  const code = (cause as { code?: string }).code
  return code === "ENOENT"
    ? "no such file"
    : code === "EISDIR"
    ? "is a directory"
    : code === "EACCES"
    ? "permission denied"
    : String(code ?? cause)
}

/**
 * The text of a configuration file, read only if it is a regular file of at most
 * MAX_CONFIG_BYTES: opened without blocking, so that a named pipe or a device such as
 * `/dev/zero` is refused at once instead of hanging mm or filling its memory.
 */
const readConfigText = (file: string): Either.Either<string, string> => {
  let fd: number
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  } catch (cause) {
    return Either.left(readProblem(cause))
  }
  try {
    const stat = fs.fstatSync(fd)
    if (stat.isDirectory()) return Either.left("is a directory")
    if (stat.isFIFO()) return Either.left("is a named pipe (FIFO), not a file")
    if (!stat.isFile()) return Either.left("is not a regular file")
    if (stat.size > MAX_CONFIG_BYTES) {
      return Either.left(`is ${stat.size} bytes, over the limit of ${MAX_CONFIG_BYTES} for a configuration`)
    }
    return Either.right(fs.readFileSync(fd, "utf8"))
  } catch (cause) {
    return Either.left(readProblem(cause))
  } finally {
    fs.closeSync(fd)
  }
}

/** The files' reading and merging, loaded the first time a configuration is decoded. */
const merging = Effect.promise(() => import("./ConfigMerge"))

/** The inputs of a run but the trust store's record, which is read only when it matters. */
type Inputs = Omit<MergeInput, "trustedHash">

/**
 * What names an outcome in the memo: both texts, and what the outcome depends on of the trust.
 * `plain`: a project's file without guarded settings, whatever was trusted; `all`: `--trust`;
 * `trusted-HASH`: the record the trust store held; `chosen`: a file that is not the project's.
 */
const memoKey = (inputs: Inputs, trust: string): string =>
  `${keyOf(inputs.user?.text)} ${keyOf(inputs.chosen?.text)} ${trust}`

/** The trust store's record for the project's file, when the outcome may depend on it. */
const recordFor = (inputs: Inputs): string | undefined =>
  inputs.chosen?.project === true && !inputs.trustAll ? trustedHash(inputs.cwd, inputs.chosen.file) : undefined

/** The memo's answer: a project's file without guarded settings is found without reading the trust store. */
const recalled = (inputs: Inputs, stamp: string): AgentConfig | undefined => {
  const find = recallFrom(stamp)
  if (inputs.chosen?.project !== true) return find(memoKey(inputs, "chosen"))
  const plain = find(memoKey(inputs, "plain"))
  if (plain !== undefined || inputs.trustAll) return plain ?? find(memoKey(inputs, "all"))
  const record = recordFor(inputs)
  return record === undefined ? undefined : find(memoKey(inputs, `trusted-${record}`))
}

/** Where an outcome is kept, if at all: never one that left settings out (the question needs what it left out). */
const keyToKeep = (inputs: Inputs, merged: Merged, record: string | undefined): string | undefined => {
  if (merged.untrusted !== undefined) return undefined
  if (inputs.chosen?.project !== true) return memoKey(inputs, "chosen")
  if (!merged.guarded) return memoKey(inputs, "plain")
  return inputs.trustAll ? memoKey(inputs, "all") : memoKey(inputs, `trusted-${record ?? ""}`)
}

/** The configuration of these inputs, from the memo when this build decoded the same ones before. */
const decode = (inputs: Inputs): Effect.Effect<Pick<LoadedConfig, "config" | "untrusted">, ConfigError> => {
  const stamp = buildStamp()
  const known = stamp === undefined ? undefined : recalled(inputs, stamp)
  if (known !== undefined) return Effect.succeed({ config: known })
  return Effect.flatMap(merging, ({ mergeConfigs }) => {
    const record = recordFor(inputs)
    const merged = mergeConfigs({ ...inputs, trustedHash: record })
    if (Either.isLeft(merged)) return Effect.fail(merged.left)
    const key = stamp === undefined ? undefined : keyToKeep(inputs, merged.right, record)
    if (stamp !== undefined && key !== undefined) remember(key, stamp, merged.right.config)
    return Effect.succeed({ config: merged.right.config, untrusted: merged.right.untrusted })
  })
}

const readFailure = (file: string, problem: string) =>
  new ConfigError({ message: `${file}: cannot read the configuration: ${problem}` })

/** The user's own file, when there is one: missing is no error, unreadable is. */
const readUserFile = (file: string): Either.Either<Source | undefined, ConfigError> => {
  const read = readConfigText(file)
  if (Either.isRight(read)) return Either.right({ file, text: read.right })
  // missing, or a path through something that is not a directory: no file; unreadable is an error
  return read.left === "no such file" || read.left === "ENOTDIR"
    ? Either.right(undefined)
    : Either.left(readFailure(file, read.left))
}

/** The inputs of a run: the user's file and the chosen one. */
export const configInputs = (lookup: ConfigLookup): Either.Either<Inputs, ConfigError> => {
  // plain code rather than Either.gen: this runs at every start, and a generator's first use costs
  const userFile = userConfigFile(lookup)
  const found = findConfigFile(lookup)
  const sameFile = found !== undefined && path.resolve(found.file) === userFile
  const user = sameFile ? Either.right(undefined) : readUserFile(userFile)
  if (Either.isLeft(user)) return Either.left(user.left)
  if (found === undefined) {
    return Either.right({
      user: user.right,
      chosen: undefined,
      trustedHash: undefined,
      trustAll: false,
      cwd: lookup.cwd
    })
  }
  const read = readConfigText(found.file)
  if (Either.isLeft(read)) return Either.left(readFailure(found.file, read.left))
  const project = !sameFile && isProjectFile(found, lookup.cwd)
  const trustAll = lookup.trust === true
  return Either.right({
    user: user.right,
    chosen: { file: found.file, text: read.right, project, shown: shownFile(found.file, lookup.cwd) },
    trustAll,
    cwd: lookup.cwd
  })
}

/**
 * The configuration in force: the user's own file, with the chosen one merged over it; of a
 * file of the project, the settings that wait for trust left out until the user trusts them.
 */
export const loadConfig = (lookup: ConfigLookup): Effect.Effect<LoadedConfig, ConfigError> =>
  Effect.suspend((): Effect.Effect<LoadedConfig, ConfigError> => {
    const inputs = configInputs(lookup)
    if (Either.isLeft(inputs)) return Effect.fail(inputs.left)
    const { chosen, user } = inputs.right
    return Effect.map(decode(inputs.right), (decoded) => ({
      ...decoded,
      file: chosen?.file ?? user?.file,
      userFile: user?.file,
      ...(lookup.trust === true ? { trustAll: true } : {})
    }))
  })
