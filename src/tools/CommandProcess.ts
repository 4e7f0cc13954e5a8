// A command line run as a local process group: its output collected (the start and the end
// kept), a timeout, and the group killed when the call is interrupted or mm goes.
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import { StringDecoder } from "node:string_decoder"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Stream from "effect/Stream"

import { nodeChildProcesses } from "../lib/NodeModules"
import { forgetGroup, killGroup, killGroupOnExit } from "../lib/ProcessGroups"
import { programPath } from "../lib/Programs"
import type { CommandLine, ToolContext, ToolResult } from "./Tool"
import { type Collector, makeCollector, truncateOutput } from "./Truncate"

/** After a timeout, the group gets SIGTERM, then SIGKILL this much later. */
export const KILL_GRACE_MS = 2000
/** After bash exits, how long background processes that still hold its output may keep the result waiting. */
const PIPE_GRACE_MS = 200

/**
 * A tiny process that outlives mm: it waits on a pipe only mm holds, and when the pipe closes
 * (mm ended, even by SIGKILL) it kills the command's process group. mm kills it first when
 * the command ends on its own, so what the command left running in the background stays.
 */
export const startWatchdog = (pid: number, cwd: string): ChildProcess | undefined => {
  try {
    const watchdog = nodeChildProcesses().spawn(programPath("sh", [cwd]), [
      "-c",
      "read _ ; kill -9 -\"$1\" 2>/dev/null",
      "mm-watchdog",
      String(pid)
    ], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"]
    })
    watchdog.on("error", () => {})
    watchdog.stdin?.on("error", () => {})
    watchdog.unref()
    ;(watchdog.stdin as { unref?: () => void } | null)?.unref?.()
    return watchdog
  } catch {
    return undefined // no sh: the exit hook and the signal handlers still end the group
  }
}

export const stopWatchdog = (watchdog: ChildProcess | undefined): void => {
  if (watchdog?.pid === undefined || watchdog.exitCode !== null) return
  try {
    process.kill(watchdog.pid, "SIGKILL")
  } catch {
    // gone already
  }
}

export const isDirectory = (dir: string): boolean => {
  try {
    return fs.statSync(dir).isDirectory()
  } catch {
    return false
  }
}

const formatSeconds = (seconds: number): string => (Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1))

type Exit = { code: number | null; signal: NodeJS.Signals | null }

/** One running command and what is learned of it until its result is given. */
interface BashRun {
  readonly child: ChildProcess
  readonly pid: number | undefined
  readonly seconds: number
  readonly output: Collector
  readonly watchdog: ChildProcess | undefined
  /** Stops collecting its output. */
  readonly detachStreams: () => void
  timer: NodeJS.Timeout | undefined
  pipeGrace: NodeJS.Timeout | undefined
  settled: boolean
  timedOut: boolean
  exit: Exit | undefined
  spawnError: Error | undefined
}

/**
 * Starts the command line in a process group of its own, stdin closed; Left says why it could
 * not. Its program is looked for on PATH outside the project (lib/Programs.ts).
 */
export const spawnCommand = (
  argv: ReadonlyArray<string>,
  cwd: string,
  env: NodeJS.ProcessEnv
): Either.Either<ChildProcess, string> => {
  try {
    return Either.right(
      nodeChildProcesses().spawn(programPath(argv[0], [cwd], env), argv.slice(1), {
        cwd,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      })
    )
  } catch (cause) {
    return Either.left(`cannot run ${argv[0]}: ${(cause as Error).message}`)
  }
}

/**
 * Collects stdout and stderr into `output` (and hands them to `onOutput` as they come);
 * returns what stops collecting.
 */
const collectOutput = (child: ChildProcess, output: Collector, onOutput: ((text: string) => void) | undefined) => {
  const streams = [child.stdout!, child.stderr!]
  const decoders = streams.map((stream) => {
    const decoder = new StringDecoder("utf8")
    stream.on("data", (chunk: Buffer) => {
      const text = decoder.write(chunk)
      output.push(text)
      if (text !== "") onOutput?.(text)
    })
    return decoder
  })
  /** Stops collecting; background processes that still hold the pipes may go on writing into the void. */
  return () => {
    for (const [i, stream] of streams.entries()) {
      stream.removeAllListeners("data")
      output.push(decoders[i].end())
      stream.on("data", () => {})
      stream.on("error", () => {})
      ;(stream as { unref?: () => void }).unref?.()
    }
  }
}

/** On timeout the group gets SIGTERM, then SIGKILL KILL_GRACE_MS later. */
const startTimeout = (run: BashRun): NodeJS.Timeout =>
  setTimeout(
    () => {
      run.timedOut = true
      killGroup(run.pid, "SIGTERM")
      setTimeout(() => killGroup(run.pid, "SIGKILL"), KILL_GRACE_MS).unref()
    },
    Math.min(run.seconds * 1000, 2 ** 31 - 1)
  )

/** Watches a started command: its group killed if mm goes, its output collected, its timeout running. */
const startRun = (
  child: ChildProcess,
  seconds: number,
  ctx: ToolContext,
  onOutput: ((text: string) => void) | undefined
): BashRun => {
  const output = makeCollector(Math.max(ctx.maxOutput, 1024))
  const pid = child.pid
  let watchdog: ChildProcess | undefined
  if (pid !== undefined) {
    killGroupOnExit(pid)
    watchdog = startWatchdog(pid, ctx.cwd)
  }
  const detachStreams = collectOutput(child, output, onOutput)
  const run: BashRun = {
    child,
    pid,
    seconds,
    output,
    watchdog,
    detachStreams,
    timer: undefined,
    pipeGrace: undefined,
    settled: false,
    timedOut: false,
    exit: undefined,
    spawnError: undefined
  }
  run.timer = startTimeout(run)
  return run
}

/** Stops watching: no watchdog, no timers, no collecting, no kill on exit. */
const settle = (run: BashRun): void => {
  stopWatchdog(run.watchdog)
  clearTimeout(run.timer)
  clearTimeout(run.pipeGrace)
  if (run.pid !== undefined) forgetGroup(run.pid)
  run.detachStreams()
}

/** Calls `finish` once the command is done: closed, or exited and PIPE_GRACE_MS later, or never started. */
const onDone = (run: BashRun, finish: () => void): void => {
  run.child.on("error", (error) => {
    run.spawnError = error
    finish()
  })
  run.child.on("exit", (code, signal) => {
    run.exit = { code, signal }
    run.pipeGrace = setTimeout(finish, PIPE_GRACE_MS)
  })
  run.child.on("close", finish)
}

/** Interrupting a call: the group is killed at once, and the command waited for (a second at most). */
const interrupt = (run: BashRun): Effect.Effect<void> =>
  Effect.async<void>((done) => {
    killGroup(run.pid, "SIGKILL")
    const running = !run.settled && run.exit === undefined && run.pid !== undefined
    if (!run.settled) {
      run.settled = true
      settle(run)
    }
    if (!running) return done(Effect.void)
    const fallback = setTimeout(() => done(Effect.void), 1000)
    run.child.once("exit", () => {
      clearTimeout(fallback)
      done(Effect.void)
    })
  })

/** What a running command tells: its output as it comes, then its result, once. */
type CommandEvent = { readonly _tag: "Output"; readonly text: string } | {
  readonly _tag: "Done"
  readonly result: ToolResult
}

/**
 * The command's life as a stream: its output (when `live`), then its result. Ending the stream
 * before the result (an interrupted call) kills the command's group; once the result is in,
 * what the command left running in the background is left alone.
 */
const commandEvents = (
  command: CommandLine,
  ctx: ToolContext,
  live: boolean
): Stream.Stream<CommandEvent> =>
  Stream.async<CommandEvent>((emit) => {
    const done = (result: ToolResult) => {
      void emit.single({ _tag: "Done", result })
      void emit.end()
    }
    if (!isDirectory(ctx.cwd)) {
      return done({
        output: `cannot run ${command.name}: the project directory ${ctx.cwd} does not exist`,
        failed: true
      })
    }
    const spawned = spawnCommand(command.argv, ctx.cwd, command.env ?? ctx.env ?? process.env)
    if (Either.isLeft(spawned)) return done({ output: spawned.left, failed: true })
    const onOutput = live ? (text: string) => void emit.single({ _tag: "Output", text }) : undefined
    const run = startRun(spawned.right, command.seconds, ctx, onOutput)
    let answered = false
    onDone(run, () => {
      if (run.settled) return
      run.settled = true
      settle(run)
      answered = true
      done(processResult({ ...run, name: command.name, max: ctx.maxOutput }))
    })
    return Effect.suspend(() => (answered ? Effect.void : interrupt(run)))
  }, "unbounded")

/**
 * Runs a command line in a process group of its own; its output goes to `ctx.onOutput` as it
 * comes, in order, before the result is returned. Interrupting it kills the group at once.
 */
export const runCommand = (command: CommandLine, ctx: ToolContext): Effect.Effect<ToolResult> => {
  const { onOutput } = ctx
  return Stream.runFoldEffect(
    commandEvents(command, ctx, onOutput !== undefined),
    undefined as ToolResult | undefined,
    (result, event) =>
      event._tag === "Done" ? Effect.succeed(event.result) : Effect.as(onOutput?.(event.text) ?? Effect.void, result)
  ).pipe(Effect.map((result) => result ?? { output: `${command.name} ended without a result`, failed: true }))
}

const processResult = (run: {
  readonly name: string
  readonly timedOut: boolean
  readonly seconds: number
  readonly exit: Exit | undefined
  readonly spawnError: Error | undefined
  readonly output: Collector
  readonly max: number
}): ToolResult => {
  if (run.spawnError !== undefined && run.exit === undefined) {
    return { output: `cannot run ${run.name}: ${run.spawnError.message}`, failed: true }
  }
  const status = commandStatus(run.timedOut, run.seconds, run.exit?.code ?? null, run.exit?.signal ?? null)
  const body = run.output.isEmpty() ? "(no output)" : run.output.render(Math.max(0, run.max - status.length - 1))
  return { output: `${status}\n${body}`, failed: run.timedOut || run.exit?.code !== 0 }
}

/** The first line of a command's result: `exit code N`, `killed after N s (timeout)` or `killed by signal S`. */
const commandStatus = (timedOut: boolean, seconds: number, code: number | null, signal: string | null): string =>
  timedOut
    ? `killed after ${formatSeconds(seconds)} s (timeout)`
    : code !== null
    ? `exit code ${code}`
    : `killed by signal ${signal ?? "unknown"}`

/** A command's result from its whole output once finished (the editor's terminal gives it so). */
export const commandResultOf = (run: {
  readonly timedOut: boolean
  readonly seconds: number
  readonly code: number | null
  readonly signal: string | null
  readonly output: string
  readonly max: number
}): ToolResult => {
  const status = commandStatus(run.timedOut, run.seconds, run.code, run.signal)
  const body = run.output === "" ? "(no output)" : truncateOutput(run.output, Math.max(0, run.max - status.length - 1))
  return { output: `${status}\n${body}`, failed: run.timedOut || run.code !== 0 }
}
