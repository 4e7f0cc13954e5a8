/**
 * The configuration in force: where it is found, how it is read, and the one service that
 * holds it. Its schema (ConfigSchema.ts) and its reading (ConfigParse.ts) are loaded only when
 * a text must be decoded: one seen before comes from the memo (ConfigMemo.ts).
 */
import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { ConfigError } from "../domain/Errors"
import { buildStamp, recall, remember } from "./ConfigMemo"
import type { AgentConfig } from "./ConfigSchema"

export type { AgentConfig } from "./ConfigSchema"

/** The context window assumed when neither agent.yaml nor the server says it. */
export const DEFAULT_CONTEXT_WINDOW = 32768

export interface LoadedConfig {
  readonly config: AgentConfig
  /** The file it came from; undefined for the built-in defaults. */
  readonly file: string | undefined
}

/** The configuration in force, provided once at the edge of the program. */
export class AppConfig extends Context.Tag("mm/AppConfig")<AppConfig, LoadedConfig>() {}

interface ConfigLookup {
  readonly flag: string | undefined
  readonly env: string | undefined
  readonly cwd: string
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

/** The schema and the YAML reader, loaded the first time a text is decoded. */
const parsing = Effect.promise(() => import("./ConfigParse"))

/** The text decoded, from the memo when this build decoded the same text before. */
const decode = (text: string | undefined, file: string): Effect.Effect<AgentConfig, ConfigError> => {
  const stamp = buildStamp()
  const known = stamp === undefined ? undefined : recall(text, stamp)
  if (known !== undefined) return Effect.succeed(known)
  return Effect.flatMap(parsing, (parse) => {
    const decoded = text === undefined ? Either.right(parse.defaultConfig()) : parse.parseConfig(text, file)
    if (Either.isLeft(decoded)) return Effect.fail(decoded.left)
    if (stamp !== undefined) remember(text, stamp, decoded.right)
    return Effect.succeed(decoded.right)
  })
}

export const loadConfig = (lookup: ConfigLookup): Effect.Effect<LoadedConfig, ConfigError> =>
  Effect.suspend((): Effect.Effect<LoadedConfig, ConfigError> => {
    const found = findConfigFile(lookup)
    if (found === undefined) return Effect.map(decode(undefined, ""), (config) => ({ config, file: undefined }))
    const read = readConfigText(found.file)
    if (Either.isLeft(read)) {
      return Effect.fail(
        new ConfigError({ message: `${found.file}: cannot read the configuration: ${read.left}` })
      )
    }
    return Effect.map(decode(read.right, found.file), (config) => ({ config, file: found.file }))
  })
