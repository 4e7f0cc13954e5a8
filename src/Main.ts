import { makeRunMain, type Teardown } from "@effect/platform/Runtime"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

import { parseArgs, usageText } from "./cli/Args"
import { type ExitCode, run } from "./cli/Run"
import { firstLineOf } from "./lib/OneLine"
import { SecretRegistry, Secrets } from "./lib/Secrets"
import { onStartedUp } from "./lib/StartedUp"
import { VERSION } from "./lib/Version"

const oneLine = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  const error = failure._tag === "Some" ? failure.value : Cause.squash(cause)
  return firstLineOf(error)
}

/** `--no-color` (before any `--`) is NO_COLOR for this run, everywhere: taken out of the arguments, set in the environment. */
const withoutNoColor = (argv: ReadonlyArray<string>): ReadonlyArray<string> => {
  const end = argv.indexOf("--")
  const at = argv.indexOf("--no-color")
  if (at === -1 || (end !== -1 && at > end)) return argv
  process.env.NO_COLOR = "1"
  return [...argv.slice(0, at), ...argv.slice(at + 1)]
}

/**
 * The program a command line asks for; it resolves with the exit code. `mm`, `mm "QUESTION"`
 * and `mm -p …` start at once; a subcommand's, the help page's and the completions' modules
 * are loaded only for them.
 */
const programOf = (full: ReadonlyArray<string>): Effect.Effect<ExitCode, unknown, Secrets> => {
  const argv = withoutNoColor(full)
  const parsed = parseArgs(argv.slice(2))
  switch (parsed._tag) {
    case "Run":
      return run(parsed.run)
    case "Subcommand":
      return Effect.flatMap(
        Effect.promise(() => import("./cli/Cli")),
        ({ subcommand }) => subcommand(parsed.top, parsed.args)
      )
    case "Help":
      return Effect.map(
        Effect.promise(() => import("./cli/Help")),
        ({ helpText }) => (process.stdout.write(`${helpText(parsed.topic)}\n`), 0)
      )
    case "Completions":
      return Effect.map(
        Effect.promise(() => import("./cli/Completions")),
        ({ completionScript }) => (process.stdout.write(completionScript(parsed.shell)), 0)
      )
    case "Version":
      return Effect.sync(() => (process.stdout.write(`mm ${VERSION}\n`), 0))
    case "Usage":
      return Effect.sync(() => (process.stderr.write(`mm: ${parsed.message}\n${usageText(parsed.topic)}\n`), 2))
  }
}

/**
 * The exit code of how the program ended: its own code, 130 when a signal ended it, otherwise
 * one redacted line on stderr and 1.
 */
const teardownWith = (secrets: SecretRegistry): Teardown => (exit, onExit) => {
  if (Exit.isSuccess(exit)) return onExit(typeof exit.value === "number" ? exit.value : 0)
  if (Cause.isInterruptedOnly(exit.cause)) return onExit(130)
  process.stderr.write(`mm: ${secrets.redact(oneLine(exit.cause))}\n`)
  onExit(1)
}

/**
 * Ends the process once stdout and stderr have handed everything written to them to their
 * readers: a slow reader of a pipe (`mm -p … | slow`) still gets every byte. A reader that
 * went away ends mm at once (the EPIPE handler in `main`).
 */
const exitWhenDrained = (code: number): void => {
  // a failed write whose 'error' event has not run yet (it comes on the next tick) decides now
  const failed = process.stdout.errored as NodeJS.ErrnoException | null
  if (failed !== null) return onStdoutError(failed)
  const pending = [process.stdout, process.stderr].filter((stream) => !stream.destroyed && stream.writableLength > 0)
  if (pending.length === 0) return process.exit(code)
  let left = pending.length
  for (const stream of pending) {
    stream.write("", () => {
      if (--left === 0) process.exit(code)
    })
  }
}

/**
 * The Effect runtime owns the process: it runs the program and ends the process with the code
 * the teardown reads from its exit. Ctrl-C (and SIGTERM, and SIGHUP from a closed terminal
 * window) belongs to the façade while it listens for it (a running turn); otherwise it
 * interrupts the program, which saves what was shown and kills the tools' process groups.
 */
const runMain = makeRunMain(({ fiber, teardown }) => {
  const signals: ReadonlyArray<NodeJS.Signals> = ["SIGINT", "SIGTERM", "SIGHUP"]
  let signalled = false
  const onSignal = (signal: NodeJS.Signals) => {
    if (process.listenerCount(signal) > 1) return
    signalled = true
    fiber.unsafeInterruptAsFork(fiber.id())
  }
  for (const signal of signals) process.on(signal, onSignal)
  fiber.addObserver((exit) => {
    for (const signal of signals) process.off(signal, onSignal)
    // ended by a signal: 130, however the program wound down (unless it failed of its own)
    const ended = Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)
    teardown(exit, (code) => exitWhenDrained(signalled && ended ? 130 : code))
  })
})

const writeErrorWords: Record<string, string> = {
  ENOSPC: "no space left on device",
  EDQUOT: "disk quota exceeded",
  EIO: "input/output error",
  EBADF: "it is closed",
  EACCES: "permission denied"
}

const writeErrorText = (error: NodeJS.ErrnoException): string =>
  (error.code !== undefined ? writeErrorWords[error.code] : undefined) ?? (error.message.split("\n")[0] ?? "")

let stdoutFailed = false

/**
 * stdout failed: a reader that went away (`mm -p … | head -1`, an editor that quit) ends mm
 * quietly; any other failed write (a full disk, `> /dev/full`) is one line and exit 1.
 */
const onStdoutError = (error: NodeJS.ErrnoException): void => {
  if (error.code === "EPIPE") return process.exit(0)
  if (stdoutFailed) return
  stdoutFailed = true
  process.stderr.write(`mm: cannot write to stdout: ${writeErrorText(error)}\n`, () => process.exit(1))
}

/**
 * Runs the command line. No stack trace or Cause dump reaches the user. `startedUp` is called
 * once the run's start-up is over (see lib/StartedUp.ts).
 */
export const main = (argv: ReadonlyArray<string>, hooks: { readonly startedUp?: () => void } = {}) => {
  onStartedUp(hooks.startedUp)
  process.stdout.on("error", onStdoutError)
  // nowhere is left to say anything: stderr's own errors never crash mm
  process.stderr.on("error", () => undefined)
  // the program's one registry of secrets: what any layer learns is redacted everywhere, this last line included
  const secrets = new SecretRegistry()
  const program = programOf(argv).pipe(Effect.provideService(Secrets, secrets))
  runMain(program, { disableErrorReporting: true, disablePrettyLogger: true, teardown: teardownWith(secrets) })
}
