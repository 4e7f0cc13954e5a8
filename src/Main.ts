import * as Cause from "effect/Cause"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

import { parseArgs, USAGE } from "./cli/Args"
import { helpText } from "./cli/Help"
import { ExitCode, run } from "./cli/Run"
import { redact } from "./lib/Secrets"

const oneLine = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  const error = failure._tag === "Some" ? failure.value : Cause.squash(cause)
  const message = error instanceof Error ? error.message : String((error as { message?: unknown })?.message ?? error)
  return message.split("\n")[0]
}

const ansi = /\u001b\[[0-9;]*m/g
const strip = (args: ReadonlyArray<unknown>) =>
  args.map((arg) => (typeof arg === "string" ? arg.replace(ansi, "") : arg))

/** @effect/cli colours its help and usage errors always; mm only colours a terminal without NO_COLOR. */
const plainWhenNoColor = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  process.stdout.isTTY === true && (process.env.NO_COLOR ?? "") === ""
    ? self
    : Console.consoleWith((console) =>
      Console.withConsole(self, {
        ...console,
        log: (...args) => console.log(...strip(args)),
        error: (...args) => console.error(...strip(args)),
        unsafe: {
          ...console.unsafe,
          log: (...args) => console.unsafe.log(...strip(args)),
          error: (...args) => console.unsafe.error(...strip(args))
        }
      })
    )

/**
 * Runs the CLI. Ctrl-C belongs to the façade while it listens for it (a running turn);
 * otherwise it ends the program. No stack trace or Cause dump reaches the user.
 */
export const main = (argv: ReadonlyArray<string>) => {
  // a reader that went away (`mm sessions | head -1`, an editor that quit) ends mm quietly
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(0)
  })
  // `mm`, `mm "QUESTION"`, `mm -p …` start at once; subcommands and --help are parsed by @effect/cli, loaded then
  const parsed = parseArgs(argv.slice(2))
  const program: Effect.Effect<void, unknown> = parsed._tag === "Run"
    ? run(parsed.run)
    : parsed._tag === "Help"
    ? Effect.sync(() => void process.stdout.write(`${helpText(parsed.topic)}\n`))
    : parsed._tag === "Usage"
    ? Effect.sync(() => {
      process.stderr.write(`mm: ${parsed.message}\n${USAGE}\n`)
      ExitCode.code = 2
    })
    : Effect.flatMap(
      Effect.promise(() => import("./cli/Cli")),
      ({ cli }) => cli(argv)
    )
  const fiber = Effect.runFork(plainWhenNoColor(program))
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return
    process.exitCode = 130
    Effect.runFork(Fiber.interrupt(fiber))
  }
  process.on("SIGINT", onSignal)
  process.on("SIGTERM", onSignal)
  // a closed terminal window: like SIGTERM, what was shown is saved and the tools' groups are killed
  process.on("SIGHUP", onSignal)
  fiber.addObserver((exit) => {
    process.off("SIGINT", onSignal)
    process.off("SIGTERM", onSignal)
    process.off("SIGHUP", onSignal)
    if (Exit.isFailure(exit) && !Cause.isInterruptedOnly(exit.cause)) {
      const failure = Cause.failureOption(exit.cause)
      // @effect/cli has already shown its own usage errors
      if (failure._tag === "Some" && isCliValidation(failure.value)) process.exit(2)
      process.stderr.write(`mm: ${redact(oneLine(exit.cause))}\n`)
      process.exit(ExitCode.code !== 0 ? ExitCode.code : 1)
    }
    process.exit(process.exitCode !== undefined && process.exitCode !== 0 ? process.exitCode : ExitCode.code)
  })
}

const isCliValidation = (value: unknown): boolean =>
  typeof value === "object" && value !== null && "_tag" in value &&
  [
    "CommandMismatch",
    "CorrectedFlag",
    "HelpRequested",
    "InvalidArgument",
    "InvalidValue",
    "MissingValue",
    "MissingFlag",
    "MultipleValuesDetected",
    "MissingSubcommand",
    "NoBuiltInMatch",
    "UnclusteredFlag"
  ].includes(
    String((value as { _tag: unknown })._tag)
  )
