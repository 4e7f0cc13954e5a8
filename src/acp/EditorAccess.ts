import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as FiberRef from "effect/FiberRef"
import * as Layer from "effect/Layer"

import { AppConfig } from "../config/Config"
import { firstLineOf } from "../lib/OneLine"
import { commandResultOf } from "../tools/CommandProcess"
import { diskFileAccess, FileAccess, type FileAccessShape } from "../tools/FileAccess"
import { startJob } from "../tools/JobProcess"
import type { CommandLine, ToolContext, ToolResult } from "../tools/Tool"
import { CurrentPeer, type Peer } from "./AcpApprover"
import { startInTerminal } from "./EditorJob"
import { askEditor, deadlineMs, sendAndForget, showTerminalUnder, withWholeEnv } from "./EditorRequests"

/** `fs/read_text_file`: the editor's text of the file, unsaved changes included. */
const readInEditor = (peer: Peer, seconds: number, file: string, shown: string) =>
  askEditor(
    () => peer.client.request(acp.methods.client.fs.readTextFile, { sessionId: peer.sessionId, path: file }),
    seconds,
    `${shown}: the editor could not read it`
  ).pipe(
    // an answer without text (null, a number, an object) is a failed read, said in one line
    Effect.flatMap((response: unknown) => {
      const content = (response as { content?: unknown } | null)?.content
      return typeof content === "string"
        ? Effect.succeed(content)
        : Effect.fail(`${shown}: the editor's answer holds no text`)
    }),
    Effect.either
  )

/** `fs/write_text_file`: the editor writes (and shows) the new text. */
const writeInEditor = (peer: Peer, seconds: number, file: string, shown: string, content: string) =>
  Effect.sync(() => {
    try {
      fs.mkdirSync(path.dirname(file), { recursive: true })
    } catch {
      // the editor says what is wrong, if anything is
    }
  }).pipe(
    Effect.zipRight(
      askEditor(
        () =>
          peer.client.request(acp.methods.client.fs.writeTextFile, { sessionId: peer.sessionId, path: file, content }),
        seconds,
        `${shown}: the editor could not write it`
      ).pipe(
        // the editor may still write it later: the line says so
        Effect.mapError((line) => line.includes("(editorTimeout)") ? `${line}; it may still write it` : line)
      )
    ),
    Effect.asVoid,
    Effect.either
  )

/**
 * A command in the editor's terminal: `terminal/create` (shown live under the call),
 * `terminal/wait_for_exit` (with the call's timeout), `terminal/kill` on timeout or cancel, and
 * `terminal/release` always. The result is told as mm tells its own runs. Each request but
 * the wait has the editor's deadline; a cancel's kill and the release are sent, never waited for.
 */
const runInTerminal = (
  peer: Peer,
  editorSeconds: number,
  line: CommandLine,
  ctx: ToolContext
): Effect.Effect<ToolResult> => {
  const { seconds } = line
  const [command, ...commandArgs] = withWholeEnv(line, ctx.cwd)
  return Effect.acquireUseRelease(
    // interruptible, so that the deadline (and a cancel) can end a create the editor never answers
    Effect.interruptible(askEditor(
      () =>
        peer.client.createTerminal({
          sessionId: peer.sessionId,
          command,
          args: commandArgs,
          cwd: ctx.cwd,
          outputByteLimit: ctx.maxOutput
        }),
      editorSeconds,
      "the editor could not start it"
    )),
    (terminal) =>
      Effect.gen(function*() {
        yield* showTerminalUnder(peer, ctx.callId, terminal.id)
        const waited = yield* Effect.tryPromise({ try: () => terminal.waitForExit(), catch: firstLineOf }).pipe(
          Effect.timeout(deadlineMs(seconds)),
          Effect.either
        )
        const timedOut = Either.isLeft(waited) && typeof waited.left !== "string"
        if (Either.isLeft(waited) && !timedOut) return yield* Effect.fail(String(waited.left))
        // past the command's timeout the kill is waited for (its deadline at most), so that the output asked next is final
        if (timedOut) {
          yield* Effect.ignore(askEditor(() => terminal.kill(), editorSeconds, "the editor could not kill it"))
        }
        const output = yield* askEditor(
          () => terminal.currentOutput(),
          editorSeconds,
          "the editor could not give its output"
        )
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
      }).pipe(Effect.onInterrupt(() => sendAndForget(() => terminal.kill()))),
    (terminal) => sendAndForget(() => terminal.release())
  ).pipe(
    Effect.catchAll((why) =>
      Effect.succeed<ToolResult>({ output: `cannot run ${line.name} in the editor's terminal: ${why}`, failed: true })
    )
  )
}

/** The tools' files and commands under `mm acp`: the editor's where it offers them, the disk's otherwise. */
const editorAccess = (peer: Peer | undefined, seconds: number): FileAccessShape => {
  const caps = peer?.capabilities
  return {
    read: (file, shown) =>
      peer !== undefined && caps?.fs?.readTextFile === true
        ? readInEditor(peer, seconds, file, shown)
        : diskFileAccess.read(file, shown),
    readsDisk: Effect.succeed(!(peer !== undefined && caps?.fs?.readTextFile === true)),
    writesDisk: Effect.succeed(!(peer !== undefined && caps?.fs?.writeTextFile === true)),
    write: (file, shown, content) =>
      peer !== undefined && caps?.fs?.writeTextFile === true
        ? writeInEditor(peer, seconds, file, shown, content)
        : diskFileAccess.write(file, shown, content),
    run: (line, ctx) =>
      peer !== undefined && caps?.terminal === true
        ? runInTerminal(peer, seconds, line, ctx)
        : diskFileAccess.run(line, ctx),
    start: (line, ctx, maxBuffer) =>
      peer !== undefined && caps?.terminal === true
        ? startInTerminal(peer, seconds, line, ctx, maxBuffer)
        : startJob(line, ctx, maxBuffer)
  }
}

/** Chooses per call, from the editor thread the prompt runs for; each request waits `editorTimeout` at most. */
export const EditorAccessLive = Layer.effect(
  FileAccess,
  Effect.map(AppConfig, ({ config }): FileAccessShape => {
    const forPeer = <A>(use: (access: FileAccessShape) => Effect.Effect<A>) =>
      Effect.flatMap(FiberRef.get(CurrentPeer), (peer) => use(editorAccess(peer, config.editorTimeout)))
    return {
      read: (file, shown) => forPeer((access) => access.read(file, shown)),
      readsDisk: forPeer((access) => access.readsDisk),
      writesDisk: forPeer((access) => access.writesDisk),
      write: (file, shown, content) => forPeer((access) => access.write(file, shown, content)),
      run: (line, ctx) => forPeer((access) => access.run(line, ctx)),
      start: (line, ctx, maxBuffer) => forPeer((access) => (access.start ?? startJob)(line, ctx, maxBuffer))
    }
  })
)
