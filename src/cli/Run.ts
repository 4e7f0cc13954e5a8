import * as Effect from "effect/Effect"

import { printLayer, storeLayer, terminalAgentLayer, terminalLayer } from "../app/Layers"
import { loadConfig, type LoadedConfig } from "../config/Config"
import type { ChosenStart } from "../domain/StartOn"
import { probeBwrap } from "../lib/Bubblewrap"
import { Secrets } from "../lib/Secrets"
import type { RunArgs } from "./Args"

/** The exit code mm ends with: 0 done, 1 failed, 2 bad usage, 130 cancelled. */
export type ExitCode = number

/**
 * The credentials written in the configuration's URLs (`http://user:KEY@host`), known as
 * secrets from the start: those of the settings that wait for trust too, which a yes applies.
 */
const registerUrls = (loaded: LoadedConfig) =>
  Effect.map(Secrets, (secrets) => {
    for (const config of [loaded.config, loaded.untrusted?.trusted]) {
      if (config === undefined) continue
      secrets.registerUrl(config.model.url)
      for (const server of Object.values(config.mcpServers)) if ("url" in server) secrets.registerUrl(server.url)
    }
  })

/** `MM_TRUST_PROJECT=1`: as `--trust`, for a CI job or a script. */
const trustedByEnv = (): boolean => process.env.MM_TRUST_PROJECT === "1"

/** Loads the configuration; a bad file is one line on stderr and exit code 2. `trust`: `--trust` was given. */
export const withConfig = <E, R>(
  flag: string | undefined,
  use: (loaded: LoadedConfig) => Effect.Effect<ExitCode, E, R>,
  trust = false
): Effect.Effect<ExitCode, E, R | Secrets> =>
  loadConfig({ flag, env: process.env.AGENT_CONFIG, cwd: process.cwd(), trust: trust || trustedByEnv() }).pipe(
    Effect.matchEffect({
      onFailure: (error) => Effect.sync(() => (process.stderr.write(`mm: ${error.message}\n`), 2)),
      onSuccess: (loaded) => Effect.zipRight(registerUrls(loaded), use(loaded))
    })
  )

/** The line that says which of the project's settings wait for trust, on stderr (none when nothing waits). */
export const sayIgnored = (loaded: LoadedConfig): Effect.Effect<void> => {
  const untrusted = loaded.untrusted
  if (untrusted === undefined) return Effect.void
  return Effect.map(
    Effect.promise(() => import("../config/ProjectTrust")),
    ({ ignoredLine }) => void process.stderr.write(`mm: ${ignoredLine(untrusted.shown, untrusted.settings)}\n`)
  )
}

/**
 * The project's settings that wait for trust: asked about on a terminal (the REPL with stdin a
 * TTY), else left out with one line on stderr (`mm -p`, piped input). On the terminal, the
 * project's own slash commands not trusted yet are asked about in the same question (`-p`
 * expands none: it asks nothing of them). The configuration to run with; undefined when the
 * question was answered with Ctrl-C (mm ends, 130).
 */
const settleTrust = (args: RunArgs, loaded: LoadedConfig): Effect.Effect<LoadedConfig | undefined> => {
  const untrusted = loaded.untrusted
  if (args.print || process.stdin.isTTY !== true) return Effect.as(sayIgnored(loaded), loaded)
  if (loaded.trustAll === true && untrusted === undefined) return Effect.succeed(loaded)
  return Effect.flatMap(
    Effect.promise(() => import("../commands/UserCommands")),
    ({ commandsWaiting }) => {
      const commands = commandsWaiting(loaded, process.cwd())
      if (untrusted === undefined && commands === undefined) return Effect.succeed(loaded)
      return Effect.flatMap(
        Effect.promise(() => import("./TrustQuestion")),
        ({ askTrust }) => askTrust(loaded, { untrusted, commands }, process.cwd())
      )
    }
  )
}

/**
 * `sandbox: on` where bubblewrap cannot start is a configuration error: one line and exit code 2,
 * before anything runs. Other modes do not wait here (the probe runs beside start-up).
 */
export const withSandbox = <E, R>(
  loaded: LoadedConfig,
  use: () => Effect.Effect<ExitCode, E, R>
): Effect.Effect<ExitCode, E, R> =>
  loaded.config.sandbox.mode !== "on"
    ? use()
    : Effect.flatMap(Effect.promise(probeBwrap), (probe) =>
      probe.ok
        ? use()
        : Effect.sync(() => {
          const where = loaded.file === undefined ? "" : ` in ${loaded.file}`
          process.stderr.write(`mm: sandbox: on${where}, but ${probe.reason}\n`)
          return 2
        }))

/** `--yes`: every tool allowed for this run, whatever `permissions` says. */
const allowAllWhen = (yes: boolean, loaded: LoadedConfig): LoadedConfig =>
  yes ? { ...loaded, config: { ...loaded.config, permissions: "allow" } } : loaded

type Chosen =
  | { readonly _tag: "Chosen"; readonly start: ChosenStart; readonly lines: ReadonlyArray<string> }
  | { readonly _tag: "Failed"; readonly line: string; readonly code: number }

/** `--resume` without an id is picked from a list on the terminal, before anything else reads the keys. */
const chooseStart = (args: RunArgs, loaded: LoadedConfig): Effect.Effect<Chosen, never, Secrets> =>
  args.start._tag !== "Pick"
    ? Effect.succeed({ _tag: "Chosen", start: args.start, lines: [] })
    : Effect.flatMap(
      Effect.promise(() => import("../terminal/StartPicker")),
      ({ pickStart }) => pickStart(process.cwd())
    ).pipe(
      Effect.map((picked): Chosen =>
        picked._tag === "Failed" ? picked : { _tag: "Chosen", start: picked.start, lines: picked.lines }
      ),
      Effect.provide(storeLayer(loaded))
    )

const startIn = (args: RunArgs, loaded: LoadedConfig, chosen: Extract<Chosen, { _tag: "Chosen" }>) => {
  if (args.print) {
    const options = { ...args, start: chosen.start, notes: chosen.lines }
    // each façade's modules are initialised on its own path only
    return Effect.flatMap(
      Effect.promise(() => import("../print/Print")),
      ({ runPrint }) => runPrint(options, process.cwd()).pipe(Effect.provide(printLayer(loaded)))
    )
  }
  for (const line of chosen.lines) process.stdout.write(`${line}\n`)
  return Effect.flatMap(
    Effect.promise(() => import("../terminal/Repl")),
    ({ runTerminal }) =>
      runTerminal(process.cwd(), terminalAgentLayer, { start: chosen.start, question: args.question }).pipe(
        Effect.provide(terminalLayer(loaded))
      )
  )
}

/** `mm [options] [QUESTION]`: the REPL, or with `-p` one answer; resolves with the exit code. */
export const run = (args: RunArgs): Effect.Effect<ExitCode, never, Secrets> =>
  withConfig(
    args.config,
    (found) =>
      Effect.flatMap(settleTrust(args, found), (settled) => {
        if (settled === undefined) return Effect.succeed(130)
        const loaded = allowAllWhen(args.yes, settled)
        return withSandbox(loaded, () =>
          Effect.flatMap(chooseStart(args, loaded), (chosen) => {
            if (chosen._tag === "Chosen") return startIn(args, loaded, chosen)
            if (chosen.line !== "") process.stderr.write(`mm: ${chosen.line}\n`)
            return Effect.succeed(chosen.code)
          }))
      }),
    args.trust
  )
