import * as os from "node:os"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { AppConfig } from "../config/Config"
import type { SandboxSettings } from "../config/SandboxConfig"
import { bwrapArgs, bwrapProgram, probeBwrap } from "../lib/Bubblewrap"
import { Secrets } from "../lib/Secrets"

/**
 * Whether the model's `bash` calls run confined: `On` with what they may do, or `Off` with
 * why (`sandbox: off` in agent.yaml, or bubblewrap cannot start here under `sandbox: auto`).
 */
export type SandboxState =
  | { readonly _tag: "On"; readonly network: boolean; readonly writable: ReadonlyArray<string> }
  | { readonly _tag: "Off"; readonly reason: string }

/** The line the banner, `/context` and `mm acp`'s log show. */
export const sandboxLine = (state: SandboxState): string =>
  state._tag === "Off"
    ? `sandbox: off (${state.reason})`
    : `sandbox: on — bash writes only the project${
      state.writable.length > 0 ? ` and ${state.writable.join(", ")}` : ""
    }, ${state.network ? "network allowed" : "no network"}`

/** The last line of a confined command's result when the sandbox blocked it. */
export const SANDBOX_BLOCKED = "[sandbox: writes outside the project and network are blocked]"

const writeBlocked = /Read-only file system|\bEROFS\b/
const networkBlocked =
  /Network is unreachable|\bENETUNREACH\b|Connection refused|\bECONNREFUSED\b|Couldn't connect to server|Could not resolve host|Temporary failure in name resolution|Name or service not known|\bEAI_AGAIN\b|\bENOTFOUND\b|getaddrinfo/

/** Why a failed confined command's output says the sandbox stopped it; undefined when it does not. */
export const blockedBy = (output: string, network: boolean): string | undefined =>
  writeBlocked.test(output)
    ? "it tried to write outside the project, which the sandbox makes read-only"
    : !network && networkBlocked.test(output)
    ? "it tried to reach the network, which the sandbox cuts off"
    : undefined

/** A `sandbox.writable` entry as an absolute path: `~/` is the home directory, a relative one is in the project. */
export const writablePath = (cwd: string, written: string): string =>
  written === "~" || written.startsWith("~/")
    ? path.join(os.homedir(), written.slice(1))
    : path.resolve(cwd, written)

/** Puts a command line (`bash -c …`) under the sandbox, for a command run in `cwd`. */
export type Confine = (argv: ReadonlyArray<string>) => ReadonlyArray<string>

export interface SandboxShape {
  /** The state, once bubblewrap was tried (at most once per run, when first asked). */
  readonly state: Effect.Effect<SandboxState>
  /** The state if already known, without waiting (undefined while the probe runs). */
  readonly known: () => SandboxState | undefined
  /** How a command run in `cwd` is confined under `state` (undefined when it is not). */
  readonly confine: (state: SandboxState, cwd: string) => Confine | undefined
}

/** Whether and how the model's commands are confined (src/lib/Bubblewrap.ts does the confining). */
export class Sandbox extends Context.Tag("mm/Sandbox")<Sandbox, SandboxShape>() {}

/** The state `settings` give once the probe answered. */
export const stateOf = (
  settings: SandboxSettings,
  probe: { readonly ok: true } | { readonly ok: false; readonly reason: string } | undefined
): SandboxState =>
  settings.mode === "off"
    ? { _tag: "Off", reason: "set in agent.yaml" }
    : probe === undefined || probe.ok
    ? { _tag: "On", network: settings.network, writable: settings.writable }
    : { _tag: "Off", reason: probe.reason }

/**
 * The sandbox service for `settings`. Unless the sandbox is off, bubblewrap is tried the first
 * time the state is asked for (the banner's line, the first command, `mode: on` at start), not
 * before: starting a process costs start-up time that nothing before the banner needs.
 */
export const makeSandbox = (
  settings: SandboxSettings,
  unset: () => ReadonlyArray<string>
): SandboxShape => {
  let known: SandboxState | undefined = settings.mode === "off" ? stateOf(settings, undefined) : undefined
  let probing: Promise<SandboxState> | undefined = known === undefined ? undefined : Promise.resolve(known)
  const probe = () => (probing ??= probeBwrap().then((answer) => (known = stateOf(settings, answer))))
  return {
    state: Effect.promise(probe),
    known: () => known,
    confine: (state, cwd) =>
      state._tag === "Off" ? undefined : (argv) => [
        bwrapProgram(),
        ...bwrapArgs({
          dir: cwd,
          writable: state.writable.map((p) => writablePath(cwd, p)),
          network: state.network,
          unset: unset()
        }, argv)
      ]
  }
}

/** The sandbox of the configuration in force; API keys and other secret variables are unset inside. */
export const configuredSandbox = Effect.map(
  Effect.all([AppConfig, Secrets]),
  ([{ config }, secrets]) => makeSandbox(config.sandbox, () => secrets.variableNames())
)
