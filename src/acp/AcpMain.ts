import { Readable } from "node:stream"
import { format } from "node:util"

import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Logger from "effect/Logger"

import type { LoadedConfig } from "../config/Config"
import { type SecretRegistry, Secrets } from "../lib/Secrets"
import { VERSION } from "../lib/Version"
import { ModelClient } from "../model/ModelClient"
import { Sandbox, sandboxLine } from "../tools/Sandbox"
import { makeAcpAgent } from "./AcpAgent"
import { AcpApproverLive } from "./AcpApprover"
import type { AcpServices } from "./Connection"
import { EditorAccessLive } from "./EditorAccess"
import { type DroppedLine, guardLines, MAX_LINE_BYTES } from "./LineGuard"
import { makePromptOrder } from "./PromptOrder"

type Log = (line: string) => void

/** Every line mm itself writes in ACP mode: on stderr, prefixed, never on stdout, no secret in it. */
const acpLog = (secrets: SecretRegistry): Log => (line) => {
  process.stderr.write(`[acp] ${secrets.redact(line)}\n`)
}

const stderrLogger = (log: Log) =>
  Logger.replace(
    Logger.defaultLogger,
    Logger.make(({ logLevel, message }) => {
      const parts = Array.isArray(message) ? message : [message]
      log(
        `${logLevel.label.toLowerCase()}: ${
          parts.map((part) => (typeof part === "string" ? part : format("%o", part))).join(" ")
        }`
      )
    })
  )

/**
 * stdout carries protocol messages only: anything else that would print goes to stderr, while
 * the scope lasts. The console is given back as it was when the scope closes.
 */
const keepStdoutForProtocol = (log: Log) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const saved = {
        log: console.log,
        info: console.info,
        debug: console.debug,
        warn: console.warn,
        error: console.error
      }
      const toStderr = (...args: ReadonlyArray<unknown>) => log(format(...args))
      Object.assign(console, { log: toStderr, info: toStderr, debug: toStderr, warn: toStderr, error: toStderr })
      return saved
    }),
    (saved) => Effect.sync(() => void Object.assign(console, saved))
  )

/** A message on its way to the editor, with every known secret replaced by `[redacted]`. */
const redactBytes = (secrets: SecretRegistry, chunk: Uint8Array): Uint8Array => {
  if (!secrets.known()) return chunk
  const text = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8")
  return secrets.holds(text) ? Buffer.from(secrets.redact(text), "utf8") : chunk
}

/**
 * stdout as the SDK's byte sink. Lines written in one turn of the event loop leave in one
 * system call (cork until the loop comes round), and only backpressure is waited for: a
 * replay of thousands of notifications is not paced by one write per line.
 */
const stdoutSink = (out: NodeJS.WriteStream, secrets: SecretRegistry): WritableStream<Uint8Array> => {
  let failure: Error | undefined
  let corked = false
  out.on("error", (error) => {
    failure = error
  })
  const flush = () => {
    if (!corked) return
    corked = false
    out.uncork()
  }
  const drained = () =>
    new Promise<void>((resolve, reject) => {
      const done = () => {
        out.off("drain", done)
        out.off("error", done)
        if (failure !== undefined) reject(failure)
        else resolve()
      }
      out.on("drain", done)
      out.on("error", done)
    })
  return new WritableStream<Uint8Array>({
    write: (chunk) => {
      if (failure !== undefined) return Promise.reject(failure)
      if (!corked) {
        corked = true
        out.cork()
        setImmediate(flush)
      }
      if (out.write(redactBytes(secrets, chunk))) return undefined
      flush()
      return out.writableNeedDrain ? drained() : undefined
    },
    close: () => flush()
  })
}

/**
 * A line over the limit was dropped unread: one `[acp]` line, and a JSON-RPC error for the
 * request when its id could be read. mm goes on serving the editor.
 */
const answerDropped = (log: Log) => (dropped: DroppedLine): void => {
  log(
    `dropped an incoming message of ${dropped.bytes} bytes, over the limit of ${MAX_LINE_BYTES}${
      dropped.id !== undefined
        ? ` (request id ${JSON.stringify(dropped.id)})`
        : dropped.answerTo !== undefined
        ? ` (the answer to mm's request ${JSON.stringify(dropped.answerTo)}, which fails)`
        : ""
    }`
  )
  if (dropped.id === undefined) return
  const answer = {
    jsonrpc: "2.0",
    id: dropped.id,
    error: {
      code: -32600,
      message: `message too large: ${dropped.bytes} bytes, over the limit of ${MAX_LINE_BYTES}; it was discarded`
    }
  }
  process.stdout.write(`${JSON.stringify(answer)}\n`)
}

/** What the ACP façade chooses for the application's layers (src/app/Layers.ts): the editor answers approvals and holds the files. */
export const acpChoice = (secrets: SecretRegistry) => {
  const log = acpLog(secrets)
  return { approver: AcpApproverLive, files: EditorAccessLive, extra: stderrLogger(log), log }
}

/** `mm acp`: serves one editor over stdio until it closes stdin. */
export const runAcp = <E, R>(
  loaded: LoadedConfig,
  layer: Layer.Layer<AcpServices, E, R>
): Effect.Effect<void, E, Secrets | R> =>
  Effect.scoped(
    Effect.gen(function*() {
      const secrets = yield* Secrets
      const log = acpLog(secrets)
      yield* keepStdoutForProtocol(log)
      const runtime = yield* Layer.toRuntime(layer)
      if (!loaded.config.sessions.enabled) {
        log("sessions are off (sessions.enabled: false): threads are not saved, and session/load finds nothing")
      }
      // what the server says of itself is asked now, in the background (known from the cache, its list alone)
      yield* Effect.flatMap(ModelClient, (model) => model.askServer).pipe(Effect.provide(runtime))
      const order = makePromptOrder()
      // said once the probe answers; nothing waits for it
      yield* Effect.forkScoped(
        Effect.flatMap(Sandbox, (sandbox) => Effect.map(sandbox.state, (state) => log(sandboxLine(state)))).pipe(
          Effect.provide(runtime)
        )
      )
      const { app, drained, shutdown } = yield* makeAcpAgent(runtime, { version: VERSION, log, order })
      const stream = acp.ndJsonStream(
        stdoutSink(process.stdout, secrets),
        // prompts and cancels are numbered here, in the order they arrive (PromptOrder.ts)
        order.watch(
          guardLines(Readable.toWeb(process.stdin) as unknown as ReadableStream<Uint8Array>, answerDropped(log))
        ),
        // the guard lets no longer line through; this only keeps the SDK from refusing one at the edge
        { maxMessageBytes: MAX_LINE_BYTES + 2 }
      )
      const connection = app.connect(stream)
      yield* Effect.addFinalizer(() => Effect.zipRight(shutdown, Effect.sync(() => connection.close())))
      yield* Effect.promise(() => connection.closed)
      // the editor closed our input: stop running turns, answer what was asked, then flush
      yield* shutdown
      yield* Effect.promise(drained)
      yield* Effect.promise(() => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve))))
      yield* Effect.promise(() => new Promise<void>((resolve) => process.stdout.write("", () => resolve())))
    })
  )
