// A background job in the editor's terminal (`mm acp`, when the editor offers terminals):
// `terminal/create` starts it and shows it under its `bash` call; `terminal/output` gives what it
// printed on each `job_output`; `terminal/wait_for_exit`, awaited in the background, says when it
// ended; `terminal/kill` and `terminal/release` end it. Its last output is kept once released.
import type * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"

import type { JobExit, StartedCommand } from "../tools/Job"
import type { Taken } from "../tools/JobBuffer"
import { TAIL_BYTES } from "../tools/JobBuffer"
import type { CommandLine, ToolContext } from "../tools/Tool"
import type { Peer } from "./AcpApprover"
import { askEditor, showTerminalUnder, withWholeEnv } from "./EditorRequests"

const CUT = "… [earlier output cut by the editor's terminal] …\n"

/** Resolves after the editor's deadline: what mm waits for an answer at most. */
const timeUp = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000).unref())

type Terminal = Awaited<ReturnType<acp.AgentContext["createTerminal"]>>

/** What the editor's terminal printed since `seen` characters were read, from its whole (perhaps cut) output. */
const newSince = (output: string, truncated: boolean, seen: number, lastRead: string): Taken => {
  if (!truncated && output.length >= seen) return { text: output.slice(seen), dropped: 0 }
  // the editor dropped the start: what follows the end of the last read, when it is still there
  const at = lastRead === "" ? -1 : output.lastIndexOf(lastRead)
  return at >= 0 ? { text: output.slice(at + lastRead.length), dropped: 0 } : { text: CUT + output, dropped: 0 }
}

/** Starts `line` in a terminal of the editor and returns at once; Left says why the editor could not. */
export const startInTerminal = (
  peer: Peer,
  seconds: number,
  line: CommandLine,
  ctx: ToolContext,
  maxBuffer: number
): Effect.Effect<Either.Either<StartedCommand, string>> => {
  const [command, ...args] = withWholeEnv(line, ctx.cwd)
  return askEditor(
    () =>
      peer.client.createTerminal({
        sessionId: peer.sessionId,
        command,
        args,
        cwd: ctx.cwd,
        outputByteLimit: maxBuffer
      }),
    seconds,
    "the editor could not start it"
  ).pipe(
    Effect.tap((terminal) => showTerminalUnder(peer, ctx.callId, terminal.id)),
    Effect.map((terminal) => watchTerminal(terminal, seconds)),
    Effect.mapError((why) => `cannot run ${line.name} in the editor's terminal: ${why}`),
    Effect.either
  )
}

const watchTerminal = (terminal: Terminal, seconds: number): StartedCommand => {
  let seen = 0
  let lastRead = ""
  /** The whole output as last read; kept once the terminal is released. */
  let final: { output: string; truncated: boolean } | undefined
  let ended: JobExit | undefined
  const listeners: Array<(exit: JobExit) => void> = []
  const read = async () => final ?? (await terminal.currentOutput())
  /** Its output read one last time, then the terminal released; listeners told. */
  const finish = async (exit: JobExit) => {
    if (ended !== undefined) return
    try {
      const last = await terminal.currentOutput()
      final = { output: last.output, truncated: last.truncated }
    } catch {
      final = { output: "", truncated: false }
    }
    ended = exit
    await Promise.race([terminal.release().catch(() => undefined), timeUp(seconds)])
    for (const listener of listeners.splice(0)) listener(exit)
  }
  terminal.waitForExit().then(
    (status) => finish({ code: status.exitCode ?? null, signal: status.signal ?? null }),
    () => finish({ code: null, signal: null })
  )
  return {
    pid: undefined,
    take: Effect.promise(async () => {
      try {
        const now = await read()
        const taken = newSince(now.output, now.truncated, seen, lastRead)
        seen = now.output.length
        lastRead = now.output.slice(-200)
        return taken
      } catch {
        return { text: "", dropped: 0 }
      }
    }),
    tail: Effect.promise(async () => {
      try {
        return (await read()).output.slice(-TAIL_BYTES)
      } catch {
        return ""
      }
    }),
    onExit: (listener) => (ended !== undefined ? listener(ended) : void listeners.push(listener)),
    kill: Effect.promise(async () => {
      if (ended !== undefined) return
      await Promise.race([terminal.kill().catch(() => undefined), timeUp(seconds)])
      await Promise.race([new Promise<void>((resolve) => listeners.push(() => resolve())), timeUp(seconds)])
      await finish({ code: null, signal: "SIGTERM" })
    })
  }
}
