/**
 * The user's agent.yaml and the chosen one (the project's, or one named by `--config` or
 * `$AGENT_CONFIG`) made one configuration: each file read and checked on its own, so that a
 * mistake keeps its file, line and column; then the chosen file's values merged over the
 * user's (maps key by key; lists and single values replaced; an MCP server entry whole), the
 * project's guarded settings (ProjectTrust.ts) left out unless trusted, and the whole decoded.
 * Loaded only when a configuration is not in the memo (Config.ts).
 */
import * as Either from "effect/Either"

import type { ConfigError } from "../domain/Errors"
import { isRecord } from "../lib/Guards"
import { decodeValues, readConfig } from "./ConfigParse"
import { type AgentConfig, defaultConfig } from "./ConfigSchema"
import { guardedSettings, guardHash, normalized, type UntrustedSettings, withoutGuarded } from "./ProjectTrust"

export interface Source {
  readonly file: string
  readonly text: string
}

export interface MergeInput {
  /** `$XDG_CONFIG_HOME/mm/agent.yaml`, when it exists. */
  readonly user: Source | undefined
  /** The file found for this run; `project`: it lies in the project, and its guarded settings wait for trust. */
  readonly chosen: (Source & { readonly project: boolean; readonly shown: string }) | undefined
  /** The hash the trust store holds for the chosen file. */
  readonly trustedHash: string | undefined
  /** `--trust` or `MM_TRUST_PROJECT=1`: the project's settings apply, trusted or not. */
  readonly trustAll: boolean
  /** The project: the working directory. */
  readonly cwd: string
}

export interface Merged {
  readonly config: AgentConfig
  /** The project's guarded settings, left out of `config` until trusted. */
  readonly untrusted: UntrustedSettings | undefined
  /** Whether the project's file holds guarded settings at all (then the outcome depends on its trust). */
  readonly guarded: boolean
  /** The hash of the project's guarded settings (what `mm init` records); none when the file is not the project's, has none, or all is trusted (`trustAll`). */
  readonly hash: string | undefined
}

type Values = Record<string, unknown>

/** `over`'s values over `base`'s: maps merged key by key, all else replaced. */
const deepMerge = (base: Values, over: Values): Values => {
  const merged: Values = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const below = merged[key]
    merged[key] = isRecord(below) && isRecord(value) ? deepMerge(below, value) : value
  }
  return merged
}

/** Both files' hooks run: an event's groups are the user's, then the chosen file's. */
const mergedHooks = (user: Values, chosen: Values): Values => {
  const merged: Values = { ...user }
  for (const [event, groups] of Object.entries(chosen)) {
    const below = merged[event]
    merged[event] = Array.isArray(below) && Array.isArray(groups) ? [...below, ...groups] : groups
  }
  return merged
}

/** The chosen file's values over the user's; an MCP server of the same name is replaced whole, never mixed; hooks add up. */
export const mergeValues = (user: Values, chosen: Values): Values => {
  const merged = deepMerge(normalized(user), normalized(chosen))
  if (isRecord(user.mcpServers) && isRecord(chosen.mcpServers)) {
    merged.mcpServers = { ...user.mcpServers, ...chosen.mcpServers }
  }
  if (isRecord(user.hooks) && isRecord(chosen.hooks)) merged.hooks = mergedHooks(user.hooks, chosen.hooks)
  return merged
}

const decodeMerged = (values: Values, input: MergeInput): Either.Either<AgentConfig, ConfigError> =>
  decodeValues(
    values,
    input.user === undefined ? input.chosen?.file ?? "" : `${input.user.file} with ${input.chosen?.file ?? ""} over it`
  )

/** The configuration in force, from the files' texts and what the user trusted. */
export const mergeConfigs = (input: MergeInput): Either.Either<Merged, ConfigError> =>
  Either.gen(function*() {
    const user = input.user === undefined ? undefined : yield* readConfig(input.user.text, input.user.file)
    const chosen = input.chosen === undefined ? undefined : yield* readConfig(input.chosen.text, input.chosen.file)
    if (chosen === undefined || input.chosen === undefined) {
      return { config: user?.config ?? defaultConfig(), untrusted: undefined, hash: undefined, guarded: false }
    }
    if (user === undefined && !input.chosen.project) {
      return { config: chosen.config, untrusted: undefined, hash: undefined, guarded: false }
    }
    const userValues = user?.values ?? {}
    const full = user === undefined ? chosen.config : yield* decodeMerged(mergeValues(userValues, chosen.values), input)
    if (!input.chosen.project) return { config: full, untrusted: undefined, hash: undefined, guarded: false }
    const settings = guardedSettings(normalized(chosen.values), user?.config ?? defaultConfig(), full)
    const guarded = settings.length > 0
    if (!guarded || input.trustAll) return { config: full, untrusted: undefined, hash: undefined, guarded }
    // node:crypto is loaded only here: a project that asks for nothing guarded never needs it
    const hash = guardHash(settings)
    if (input.trustedHash === hash) return { config: full, untrusted: undefined, hash, guarded }
    const config = yield* decodeMerged(
      mergeValues(userValues, withoutGuarded(normalized(chosen.values), settings)),
      input
    )
    const untrusted: UntrustedSettings = {
      project: input.cwd,
      file: input.chosen.file,
      shown: input.chosen.shown,
      hash,
      settings,
      trusted: full
    }
    return { config, untrusted, hash, guarded }
  })
