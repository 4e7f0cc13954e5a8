// A background job run as a local process group: started at once, its output kept in a bounded
// buffer until the model reads it, and its whole group ended when it is killed, when its leader
// exits, or when mm goes (the exit hook; a watchdog that outlives a SIGKILLed mm).
import type { ChildProcess } from "node:child_process"
import { StringDecoder } from "node:string_decoder"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { forgetGroup, killGroup, killGroupOnExit } from "../lib/ProcessGroups"
import { isDirectory, KILL_GRACE_MS, spawnCommand, startWatchdog, stopWatchdog } from "./CommandProcess"
import type { JobExit, StartedCommand } from "./Job"
import { makeJobBuffer } from "./JobBuffer"
import type { CommandLine, ToolContext } from "./Tool"

/** After the leader exits, how long what it left holding its output may still write before the group is killed. */
const AFTER_EXIT_MS = 200
/** How long a kill waits for the job to be gone before it answers anyway. */
const KILL_WAIT_MS = KILL_GRACE_MS + 2000

/** Its output read into `push` as it comes. */
const readOutput = (child: ChildProcess, push: (text: string) => void): void => {
  for (const stream of [child.stdout!, child.stderr!]) {
    const decoder = new StringDecoder("utf8")
    stream.on("data", (chunk: Buffer) => push(decoder.write(chunk)))
    stream.on("end", () => push(decoder.end()))
    stream.on("error", () => {})
  }
}

/**
 * Starts `command` in a process group of its own and returns at once; Left says why it could not
 * start. `maxBuffer`: the bytes of output kept until they are read.
 */
export const startJob = (
  command: CommandLine,
  ctx: ToolContext,
  maxBuffer: number
): Effect.Effect<Either.Either<StartedCommand, string>> =>
  Effect.sync(() => {
    if (!isDirectory(ctx.cwd)) {
      return Either.left(`cannot run ${command.name}: the project directory ${ctx.cwd} does not exist`)
    }
    const spawned = spawnCommand(command.argv, ctx.cwd, command.env ?? ctx.env ?? process.env)
    if (Either.isLeft(spawned)) return Either.left(spawned.left)
    return Either.right(watchJob(spawned.right, ctx.cwd, maxBuffer))
  })

const watchJob = (child: ChildProcess, cwd: string, maxBuffer: number): StartedCommand => {
  const buffer = makeJobBuffer(maxBuffer)
  const pid = child.pid
  const watchdog = pid === undefined ? undefined : startWatchdog(pid, cwd)
  if (pid !== undefined) killGroupOnExit(pid)
  let ended: JobExit | undefined
  let exit: JobExit | undefined
  const listeners: Array<(exit: JobExit) => void> = []
  const end = (how: JobExit) => {
    if (ended !== undefined) return
    ended = how
    // whatever of the group is left goes with its leader: a job leaves nothing behind
    killGroup(pid, "SIGKILL")
    stopWatchdog(watchdog)
    if (pid !== undefined) forgetGroup(pid)
    for (const listener of listeners.splice(0)) listener(how)
  }
  readOutput(child, buffer.push)
  child.on("error", (error) => {
    buffer.push(`cannot run: ${error.message}\n`)
    end({ code: 127, signal: null })
  })
  child.on("exit", (code, signal) => {
    exit = { code, signal }
    setTimeout(() => end(exit!), AFTER_EXIT_MS).unref()
  })
  child.on("close", (code, signal) => end(exit ?? { code, signal }))
  const onExit = (listener: (exit: JobExit) => void) => {
    if (ended !== undefined) listener(ended)
    else listeners.push(listener)
  }
  return {
    pid,
    take: Effect.sync(buffer.take),
    tail: Effect.sync(buffer.tail),
    onExit,
    kill: Effect.async<void>((resume) => {
      if (ended !== undefined) return resume(Effect.void)
      killGroup(pid, "SIGTERM")
      const hard = setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS)
      const giveUp = setTimeout(() => {
        end(exit ?? { code: null, signal: "SIGKILL" })
      }, KILL_WAIT_MS)
      onExit(() => {
        clearTimeout(hard)
        clearTimeout(giveUp)
        resume(Effect.void)
      })
    })
  }
}
