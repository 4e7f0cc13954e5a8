import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"

import { firstLineOf } from "../lib/OneLine"
import { programPath } from "../lib/Programs"
import { commandResultOf } from "../tools/CommandProcess"
import { diskFileAccess, FileAccess, type FileAccessShape } from "../tools/FileAccess"
import type { CommandLine, ToolContext, ToolResult } from "../tools/Tool"
import { CurrentPeer, type Peer } from "./AcpApprover"

/** `fs/read_text_file`: the editor's text of the file, unsaved changes included. */
const readInEditor = (peer: Peer, file: string, shown: string) =>
  Effect.tryPromise({
    try: () => peer.client.request(acp.methods.client.fs.readTextFile, { sessionId: peer.sessionId, path: file }),
    catch: (cause) => `${shown}: the editor could not read it (${firstLineOf(cause)})`
  }).pipe(Effect.map((response) => response.content), Effect.either)

/** `fs/write_text_file`: the editor writes (and shows) the new text. */
const writeInEditor = (peer: Peer, file: string, shown: string, content: string) =>
  Effect.sync(() => {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true })
    } catch {
      // the editor says what is wrong, if anything is
    }
  }).pipe(
    Effect.zipRight(
      Effect.tryPromise({
        try: () =>
          peer.client.request(acp.methods.client.fs.writeTextFile, { sessionId: peer.sessionId, path: file, content }),
        catch: (cause) => `${shown}: the editor could not write it (${firstLineOf(cause)})`
      })
    ),
    Effect.asVoid,
    Effect.either
  )

const quietly = (work: () => Promise<unknown>) => Effect.promise(() => work().then(() => undefined, () => undefined))

/**
 * The argv the editor runs: a command that must have exactly its own environment (a confined
 * one) is started by `env -i` with it, since the editor's terminal adds its own variables.
 */
const withWholeEnv = (line: CommandLine, cwd: string): ReadonlyArray<string> =>
  line.env === undefined
    ? line.argv
    : [
      programPath("env", [cwd]),
      "-i",
      ...Object.entries(line.env).map(([name, value]) => `${name}=${value}`),
      ...line.argv
    ]

/**
 * A command in the editor's terminal: `terminal/create` (shown live under the call),
 * `terminal/wait_for_exit` (with the call's timeout), `terminal/kill` on timeout or cancel, and
 * `terminal/release` always. The result is told as mm tells its own runs.
 */
const runInTerminal = (peer: Peer, line: CommandLine, ctx: ToolContext): Effect.Effect<ToolResult> => {
  const { seconds } = line
  const [command, ...commandArgs] = withWholeEnv(line, ctx.cwd)
  return Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () =>
        peer.client.createTerminal({
          sessionId: peer.sessionId,
          command,
          args: commandArgs,
          cwd: ctx.cwd,
          outputByteLimit: ctx.maxOutput
        }),
      catch: firstLineOf
    }),
    (terminal) =>
      Effect.gen(function*() {
        if (ctx.callId !== undefined) {
          yield* quietly(() =>
            peer.client.notify(acp.methods.client.session.update, {
              sessionId: peer.sessionId,
              update: {
                sessionUpdate: "tool_call_update",
                toolCallId: ctx.callId!,
                content: [{ type: "terminal", terminalId: terminal.id }]
              }
            })
          )
        }
        const waited = yield* Effect.tryPromise({ try: () => terminal.waitForExit(), catch: firstLineOf }).pipe(
          Effect.timeout(Math.min(seconds * 1000, 2 ** 31 - 1)),
          Effect.either
        )
        const timedOut = Either.isLeft(waited) && typeof waited.left !== "string"
        if (Either.isLeft(waited) && !timedOut) return yield* Effect.fail(String(waited.left))
        if (timedOut) yield* quietly(() => terminal.kill())
        const output = yield* Effect.tryPromise({ try: () => terminal.currentOutput(), catch: firstLineOf })
        const status = Either.isRight(waited)
          ? waited.right
          : (output.exitStatus ?? { exitCode: null, signal: "SIGTERM" })
        const text = output.truncated
          ? `… [earlier output cut by the editor's terminal] …\n${output.output}`
          : output.output
        return commandResultOf({
          timedOut,
          seconds,
          code: status.exitCode ?? null,
          signal: status.signal ?? null,
          output: text,
          max: ctx.maxOutput
        })
      }).pipe(Effect.onInterrupt(() => quietly(() => terminal.kill()))),
    (terminal) => quietly(() => terminal.release())
  ).pipe(
    Effect.catchAll((why) =>
      Effect.succeed<ToolResult>({ output: `cannot run ${line.name} in the editor's terminal: ${why}`, failed: true })
    )
  )
}

/** The tools' files and commands under `mm acp`: the editor's where it offers them, the disk's otherwise. */
const editorAccess = (peer: Peer | undefined): FileAccessShape => {
  const caps = peer?.capabilities
  return {
    read: (file, shown) =>
      peer !== undefined && caps?.fs?.readTextFile === true
        ? readInEditor(peer, file, shown)
        : diskFileAccess.read(file, shown),
    readsDisk: Effect.succeed(!(peer !== undefined && caps?.fs?.readTextFile === true)),
    writesDisk: Effect.succeed(!(peer !== undefined && caps?.fs?.writeTextFile === true)),
    write: (file, shown, content) =>
      peer !== undefined && caps?.fs?.writeTextFile === true
        ? writeInEditor(peer, file, shown, content)
        : diskFileAccess.write(file, shown, content),
    run: (line, ctx) =>
      peer !== undefined && caps?.terminal === true ? runInTerminal(peer, line, ctx) : diskFileAccess.run(line, ctx)
  }
}

/** Chooses per call, from the editor thread the prompt runs for. */
export const EditorAccessLive = Layer.succeed(FileAccess, {
  read: (file, shown) => Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => editorAccess(peer).read(file, shown)),
  readsDisk: Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => editorAccess(peer).readsDisk),
  writesDisk: Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => editorAccess(peer).writesDisk),
  write: (file, shown, content) =>
    Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => editorAccess(peer).write(file, shown, content)),
  run: (line, ctx) => Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => editorAccess(peer).run(line, ctx))
})
