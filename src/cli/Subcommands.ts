import * as Effect from "effect/Effect"

import { acpLayer, storeLayer } from "../app/Layers"
import { Secrets } from "../lib/Secrets"
import type { OptionOf, Runnable } from "./CommandLine"
import { type ExitCode, sayIgnored, withConfig, withSandbox } from "./Run"
import { listSessions, removeSessions, searchSessions, showSession } from "./SessionsCommand"

/**
 * What each subcommand of CommandLine.ts runs, once @effect/cli has read its line (Cli.ts):
 * one handler per command that runs, typed so that one missing, or one reading an option its
 * command does not take, does not compile. Loaded only for a subcommand.
 */

/** A subcommand as typed: which one, its options by their long names (a switch is `true`) and its operands. */
export interface Given {
  readonly path: Runnable
  readonly options: ReadonlyMap<string, string | true>
  readonly operands: ReadonlyArray<string>
}

/** A switch's presence, or an option's value, for the options the command `P` takes. */
export const flag = <P extends Runnable>(given: Given & { readonly path: P }, long: OptionOf<P>): boolean =>
  given.options.has(long)

export const value = <P extends Runnable>(
  given: Given & { readonly path: P },
  long: OptionOf<P>
): string | undefined => {
  const found = given.options.get(long)
  return typeof found === "string" ? found : undefined
}

type Handler<P extends Runnable> = (given: Given & { readonly path: P }) => Effect.Effect<ExitCode, unknown, Secrets>

const list: Handler<"sessions" | "sessions list"> = (given) =>
  listSessions(value(given, "--config"), flag(given, "--json"), flag(given, "--all"))

/** `mm checkpoints gc`: the module is loaded for it alone. */
const checkpointsGc: Handler<"checkpoints gc"> = (given) =>
  withConfig(value(given, "--config"), (loaded) =>
    Effect.gen(function*() {
      const { checkpointsGc, gcLine } = yield* Effect.promise(() => import("../changes/CheckpointsGc"))
      const done = yield* Effect.either(checkpointsGc(process.cwd()))
      if (done._tag === "Left") {
        process.stderr.write(`mm: ${done.left.message}\n`)
        return 1
      }
      process.stdout.write(`${gcLine(done.right)}\n`)
      return 0
    }).pipe(Effect.provide(storeLayer(loaded))))

/**
 * `mm acp`: the ACP façade, and the SDK with it, loaded for it alone. The project's settings
 * that wait for trust are left out (one line on stderr) and asked about through the editor at
 * the first prompt (acp/ProjectTrustAsk.ts).
 */
const acp: Handler<"acp"> = (given) =>
  withConfig(
    value(given, "--config"),
    (loaded) =>
      Effect.zipRight(
        sayIgnored(loaded),
        withSandbox(loaded, () =>
          Effect.flatMap(
            Effect.promise(() => import("../acp/AcpMain")),
            ({ acpChoice, runAcp }) =>
              Effect.flatMap(Secrets, (secrets) => Effect.as(runAcp(loaded, acpLayer(loaded, acpChoice(secrets))), 0))
          ))
      ),
    flag(given, "--trust")
  )

const HANDLERS: { readonly [P in Runnable]: Handler<P> } = {
  sessions: list,
  "sessions list": list,
  "sessions show": (given) => showSession(value(given, "--config"), given.operands[0]),
  "sessions search": (given) =>
    searchSessions(
      value(given, "--config"),
      { pattern: given.operands[0], regex: flag(given, "--regex"), ignoreCase: flag(given, "--ignore-case") },
      flag(given, "--json")
    ),
  "sessions rm": (given) => removeSessions(value(given, "--config"), given.operands, flag(given, "--yes")),
  // `mm init` alone needs the configuration's defaults and the model picker: loaded here, not at every start
  init: (given) =>
    Effect.flatMap(
      Effect.promise(() => import("./Init")),
      ({ initProject }) =>
        initProject({
          preset: value(given, "--preset"),
          url: value(given, "--url"),
          model: value(given, "--model"),
          force: flag(given, "--force")
        })
    ),
  "checkpoints gc": checkpointsGc,
  acp
}

/** Runs a subcommand read from the command line; resolves with its exit code. */
export const runSubcommand = <P extends Runnable>(given: Given & { readonly path: P }) =>
  (HANDLERS[given.path] as Handler<P>)(given)
