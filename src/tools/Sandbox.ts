import * as os from "node:os"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { AppConfig } from "../config/Config"
import type { SandboxLimits, SandboxSettings } from "../config/SandboxConfig"
import { bwrapProgram, confinedCommand, type Confinement, probeBwrap, readOnlyCommand } from "../lib/Bubblewrap"
import { inGroup, openPidsGroup } from "../lib/PidsCgroup"
import { programPath } from "../lib/Programs"
import { ensureProjectDir, RECORDS_DIR_NAME } from "../lib/ProjectDir"
import { within } from "../lib/RealPath"
import { Secrets } from "../lib/Secrets"
import { existingProtected, protectedReason } from "./ProtectedPaths"
import { confinedEnv, hiddenDirs, maskedSockets } from "./SandboxHost"
import type { Confined, ToolResult } from "./Tool"

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
export const SANDBOX_BLOCKED =
  "[sandbox: writes outside the project, to .git/, .mm/ and agent.yaml, and the network are blocked]"

const writeBlocked = /Read-only file system|\bEROFS\b/
const networkBlocked =
  /Network is unreachable|\bENETUNREACH\b|Connection refused|\bECONNREFUSED\b|Couldn't connect to server|Could not resolve host|Temporary failure in name resolution|Name or service not known|\bEAI_AGAIN\b|\bENOTFOUND\b|getaddrinfo/

/** What a confined command may write, as the reason for a block is checked against it. */
export interface WritableView {
  readonly cwd: string
  readonly network: boolean
  /** Absolute paths it may write besides the project. */
  readonly writable: ReadonlyArray<string>
}

/** Why `file` is read-only in the sandbox, in mm's words; undefined when the sandbox lets it be written. */
const readOnlyBecause = (view: WritableView, file: string): string | undefined => {
  const protectedWhy = protectedReason(view.cwd, file)
  if (protectedWhy !== undefined) return `${file} is read-only in the sandbox: ${protectedWhy}`
  if (within("/tmp", file) || within("/dev", file) || within("/run", file)) return undefined
  if (within(view.cwd, file) || view.writable.some((dir) => within(dir, file))) return undefined
  return `${file} is read-only in the sandbox: it is outside the project`
}

/** Paths named on the lines of `output` that report a read-only file system, made absolute against `cwd`. */
const pathsBlocked = (output: string, cwd: string): Array<string> =>
  output.split("\n").filter((line) => writeBlocked.test(line)).flatMap((line) =>
    [...line.matchAll(/(?:^|[\s'"`\u2018\u201c(])((?:\/|\.{1,2}\/|[\w.-]+\/)[^\s'"`\u2019\u201d):]*)/g)].map((m) =>
      path.resolve(cwd, m[1])
    )
  )

/**
 * Why a failed confined command was stopped by the sandbox, in mm's own words, or undefined
 * when nothing says it was. A path the output names is said only once mm has checked that the
 * sandbox does keep it read-only; the network only when the sandbox cut it off. Nothing of the
 * output itself is ever the reason: a command can print anything.
 */
export const blockedBy = (output: string, view: WritableView): string | undefined => {
  if (writeBlocked.test(output)) {
    const checked = pathsBlocked(output, view.cwd).map((file) => readOnlyBecause(view, file)).find((why) =>
      why !== undefined
    )
    return checked ??
      "a write failed on a read-only file system: outside the project, the sandbox lets nothing be written"
  }
  return !view.network && networkBlocked.test(output)
    ? "the network is off in the sandbox (sandbox.network: false)"
    : undefined
}

/** A `sandbox.writable` entry as an absolute path: `~/` is the home directory, a relative one is in the project. */
export const writablePath = (cwd: string, written: string): string =>
  written === "~" || written.startsWith("~/")
    ? path.join(os.homedir(), written.slice(1))
    : path.resolve(cwd, written)

/** The paths besides the project a command in `cwd` may write under `state`, absolute. */
export const writableOf = (state: Extract<SandboxState, { _tag: "On" }>, cwd: string): ReadonlyArray<string> =>
  state.writable.map((p) => writablePath(cwd, p))

/** Puts a command line (`bash -c …`) under the sandbox, for a command run in `cwd`. */
export type Confine = (argv: ReadonlyArray<string>) => Confined

/** One confined call: how its command line is confined, and what is done once it ended. */
export interface ConfinedCall {
  readonly confine: Confine
  /** The line added to its result when one of the sandbox's limits stopped it; undefined when none did. */
  readonly limitLine: (result: ToolResult) => string | undefined
  /** Frees what the call held (its process group's control group). */
  readonly release: () => void
}

export interface SandboxShape {
  /** The state, once bubblewrap was tried (at most once per run, when first asked). */
  readonly state: Effect.Effect<SandboxState>
  /** The state if already known, without waiting (undefined while the probe runs). */
  readonly known: () => SandboxState | undefined
  /** A call run in `cwd` under `state`, confined (undefined when the sandbox is off). */
  readonly confine: (state: SandboxState, cwd: string) => ConfinedCall | undefined
  /** mm's own program (its `git status`) run in `cwd` with nothing writable and no network; undefined when off. */
  readonly readOnly: (state: SandboxState, cwd: string) => Confine | undefined
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

/** SIGXFSZ's exit status through bash (128 + 25): a process wrote past the file-size limit. */
const FILE_SIZE_STATUS = /^(exit code 153|killed by signal SIGXFSZ)\b|File size limit exceeded/m
/** What bash prints when a fork is refused. */
const FORK_REFUSED = /fork: (retry: )?(Resource temporarily unavailable|Interrupted system call)/

/**
 * Whether `output` says a fork was refused: bash's words, or a line naming EAGAIN and, after
 * it, a fork or a spawn (node's, python's). Only a line's first EAGAIN is looked after: a
 * `\bEAGAIN\b.*\b(fork|spawn)` tried from every EAGAIN of a long line took quadratic time.
 */
const forkRefused = (output: string): boolean => {
  if (FORK_REFUSED.test(output)) return true
  if (!output.includes("EAGAIN")) return false
  for (const line of output.split(/[\n\r\u2028\u2029]/)) {
    const at = line.search(/\bEAGAIN\b/)
    if (at >= 0 && /\b(fork|spawn)/.test(line.slice(at + "EAGAIN".length))) return true
  }
  return false
}

/** The line said when a limit stopped a call: the file-size limit, or the process limit (counted, or seen refused). */
export const limitLineOf = (
  result: ToolResult,
  limits: SandboxLimits,
  processesRefused: boolean
): string | undefined =>
  FILE_SIZE_STATUS.test(result.output)
    ? `[sandbox: a file reached the limit of ${limits.fileSize} MiB a call may write (sandbox.limits.fileSize)]`
    : processesRefused || (result.failed && forkRefused(result.output))
    ? `[sandbox: the call reached its limit of ${limits.processes} processes at once (sandbox.limits.processes)]`
    : undefined

/**
 * A `SHELL -c SCRIPT` line whose shell is found on PATH outside the project, as mm's own
 * programs are (lib/Programs.ts): inside the sandbox PATH is the same, and a `bash` a command
 * put in the project's `node_modules/.bin` would otherwise run every later command. The
 * shell's name stays its `$0`, so that its messages read as before.
 */
const shellOutsideProject = (argv: ReadonlyArray<string>, cwd: string): ReadonlyArray<string> => {
  const shell = programPath(argv[0], [cwd])
  return argv.length === 3 ? [shell, argv[1], argv[2], argv[0]] : [shell, ...argv.slice(1)]
}

/**
 * Makes `.mm/` if it is missing, so that it is bound read-only like the rest of mm's records
 * (only where mm keeps sessions: with them off, it writes nothing in the project).
 */
const ensureRecordsDir = (cwd: string): void => {
  try {
    ensureProjectDir(path.join(cwd, RECORDS_DIR_NAME))
  } catch {
    // a project that cannot be written: nothing to protect there
  }
}

/** What one call in `cwd` is given: the confinement's view of this machine, read now. */
const confinementOf = (
  settings: SandboxSettings,
  state: Extract<SandboxState, { _tag: "On" }>,
  cwd: string
): Confinement => {
  const hidden = hiddenDirs(process.env)
  return {
    dir: cwd,
    writable: writableOf(state, cwd),
    readOnly: existingProtected(cwd),
    hidden,
    masked: maskedSockets(process.env, hidden),
    network: state.network,
    limits: { processes: settings.limits.processes, fileSizeMiB: settings.limits.fileSize },
    userNamespace: process.getuid?.() !== 0
  }
}

/**
 * The sandbox service for `settings`. Unless the sandbox is off, bubblewrap is tried the first
 * time the state is asked for (the banner's line, the first command, `mode: on` at start), not
 * before: starting a process costs start-up time that nothing before the banner needs.
 * `toolEnv` is mm's environment without its own secrets; `keepsRecords`, whether mm keeps its
 * records under the project's `.mm/` (sessions on).
 */
export const makeSandbox = (
  settings: SandboxSettings,
  toolEnv: () => NodeJS.ProcessEnv,
  keepsRecords = false
): SandboxShape => {
  let known: SandboxState | undefined = settings.mode === "off" ? stateOf(settings, undefined) : undefined
  let probing: Promise<SandboxState> | undefined = known === undefined ? undefined : Promise.resolve(known)
  const probe = () => (probing ??= probeBwrap().then((answer) => (known = stateOf(settings, answer))))
  return {
    state: Effect.promise(probe),
    known: () => known,
    confine: (state, cwd) => {
      if (state._tag === "Off") return undefined
      if (keepsRecords) ensureRecordsDir(cwd)
      const confinement = confinementOf(settings, state, cwd)
      const env = confinedEnv(toolEnv(), settings.env)
      const group = openPidsGroup(settings.limits.processes + 3)
      return {
        confine: (argv) => {
          const command = confinedCommand(bwrapProgram([cwd]), confinement, shellOutsideProject(argv, cwd))
          return { argv: group === undefined ? command : inGroup(group, command, programPath("sh", [cwd])), env }
        },
        limitLine: (result) => limitLineOf(result, settings.limits, group?.reached() ?? false),
        release: () => group?.close()
      }
    },
    readOnly: (state, cwd) => {
      if (state._tag === "Off") return undefined
      const confinement = confinementOf(settings, state, cwd)
      const env = confinedEnv(toolEnv(), settings.env)
      return (argv) => ({ argv: readOnlyCommand(bwrapProgram([cwd]), confinement, argv), env })
    }
  }
}

/** The sandbox of the configuration in force; API keys and other secret variables are left out inside. */
export const configuredSandbox = Effect.map(
  Effect.all([AppConfig, Secrets]),
  ([{ config }, secrets]) => makeSandbox(config.sandbox, () => secrets.toolEnv(), config.sessions.enabled)
)
