import * as net from "node:net"

import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import * as TestClock from "effect/TestClock"

import { AppConfig, type LoadedConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { GenerationError } from "../../src/domain/Errors"
import { Completion } from "../../src/model/chat/Completion"
import { PROBE_TIMEOUT_MS } from "../../src/model/chat/ServerWatch"
import { type ChatRequest, ModelClient, type ModelEvent } from "../../src/model/ModelClient"
import {
  closedPort as closedPortNumber,
  type FakeModelServer,
  startFakeModelServer,
  type Step
} from "../support/FakeModelServer"
import { modelClientLayer, quickRetries, secretsLayer, serverCacheOff } from "../support/layers"
import { until } from "../support/until"

interface Options {
  readonly url?: string
  readonly name?: string
  readonly apiKeyEnv?: string
  readonly watchdogTimeout?: number
}

const configFor = (server: { readonly url: string } | undefined, options: Options = {}): LoadedConfig => ({
  config: {
    ...defaultConfig(),
    watchdogTimeout: options.watchdogTimeout ?? 5,
    model: {
      ...defaultConfig().model,
      url: options.url ?? server?.url ?? "http://127.0.0.1:9/v1",
      name: options.name ?? "fake-model",
      apiKeyEnv: options.apiKeyEnv
    }
  },
  file: undefined
})

/** Retries wait milliseconds here, not seconds. */

const clientLayer = (config: LoadedConfig) =>
  modelClientLayer.pipe(
    Layer.provide(Layer.mergeAll(Layer.succeed(AppConfig, config), quickRetries, secretsLayer(), serverCacheOff))
  )

const fakeServer = (options: Parameters<typeof startFakeModelServer>[0] = {}) =>
  Effect.acquireRelease(
    Effect.promise(() => startFakeModelServer(options)),
    (server) => Effect.promise(() => server.close())
  )

/** A port nothing listens on any more. */
const closedPort = Effect.promise(closedPortNumber)

const question: ChatRequest = {
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "hello" }
  ],
  tools: []
}

const bashTool = {
  name: "bash",
  description: "run a command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }
}

const collect = (config: LoadedConfig, request: ChatRequest = question) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    return Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(request)))
  }).pipe(Effect.provide(clientLayer(config)))

const failure = (config: LoadedConfig, request: ChatRequest = question) =>
  Effect.flip(collect(config, request)).pipe(
    Effect.tap((error) => Effect.sync(() => expectOneLine(error)))
  )

const expectOneLine = (error: GenerationError) => {
  expect(error).toBeInstanceOf(GenerationError)
  expect(error.message).not.toMatch(/[\r\n]/)
  expect(error.message).not.toMatch(/Error:|\bat .+:\d+:\d+|\[object /)
  expect(error.message.length).toBeGreaterThan(10)
  expect(error.message.length).toBeLessThan(400)
}

const completed = (events: ReadonlyArray<ModelEvent>) => {
  const last = events[events.length - 1]
  if (last?._tag !== "Completed") throw new Error(`expected Completed last, got ${JSON.stringify(last)}`)
  expect(events.filter((e) => e._tag === "Completed")).toHaveLength(1)
  return last
}

const sse = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`
const delta = (d: object, finish: string | null = null) =>
  sse({ choices: [{ index: 0, delta: d, finish_reason: finish }] })

const withServer = <A, E, R>(
  steps: ReadonlyArray<Step>,
  f: (server: FakeModelServer) => Effect.Effect<A, E, R>,
  ollama = false,
  models?: ReadonlyArray<string>
) => Effect.flatMap(fakeServer({ steps, ollama, models }), f)

describe("ChatClient: streaming", () => {
  it.scopedLive("streams the text as several deltas, then one Completed with usage", () =>
    withServer([{
      text: ["Hel", "lo, ", "world"],
      chunkDelayMs: 5,
      usage: { prompt_tokens: 12, completion_tokens: 3 }
    }], (server) =>
      Effect.gen(function*() {
        const events = yield* collect(configFor(server))
        const deltas = events.filter((e) => e._tag === "TextDelta")
        expect(deltas.map((e) => e.text)).toEqual(["Hel", "lo, ", "world"])
        const done = completed(events)
        expect(done.content).toBe("Hello, world")
        expect(done.toolCalls).toEqual([])
        expect(done.finishReason).toBe("stop")
        expect(done.usage).toEqual({ promptTokens: 12, completionTokens: 3 })
      })))

  it.scopedLive("assembles two tool calls whose deltas are interleaved, by index", () =>
    withServer(
      [
        {
          kind: "raw",
          chunks: [
            delta({ role: "assistant", content: null }),
            delta({
              tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "bash", arguments: "" } }]
            }),
            delta({
              tool_calls: [{
                index: 1,
                id: "call_b",
                type: "function",
                function: { name: "read_file", arguments: "{\"pa" }
              }]
            }),
            delta({ tool_calls: [{ index: 0, function: { arguments: "{\"command\":" } }] }),
            delta({ tool_calls: [{ index: 1, function: { arguments: "th\":\"a.txt\"}" } }] }),
            delta({ tool_calls: [{ index: 0, function: { arguments: " \"ls\"}" } }] }),
            delta({}, "tool_calls"),
            "data: [DONE]\n\n"
          ]
        }
      ],
      (server) =>
        Effect.gen(function*() {
          const done = completed(yield* collect(configFor(server)))
          expect(done.finishReason).toBe("tool_calls")
          expect(done.content).toBe("")
          expect(done.toolCalls).toEqual([
            { id: "call_a", type: "function", function: { name: "bash", arguments: "{\"command\": \"ls\"}" } },
            { id: "call_b", type: "function", function: { name: "read_file", arguments: "{\"path\":\"a.txt\"}" } }
          ])
        })
    ))

  it.scopedLive("assembles the fake server's split tool calls and keeps text beside them", () =>
    withServer(
      [{
        text: "let me look",
        toolCalls: [{ name: "bash", arguments: { command: "ls -la" }, id: "c1" }, {
          name: "read_file",
          arguments: { path: "x" }
        }]
      }],
      (server) =>
        Effect.gen(function*() {
          const done = completed(yield* collect(configFor(server)))
          expect(done.content).toBe("let me look")
          expect(done.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
            ["bash", { command: "ls -la" }],
            ["read_file", { path: "x" }]
          ])
          expect(done.toolCalls[0].id).toBe("c1")
        })
    ))

  it.scopedLive("sends model, stream, messages and tools in the chat-completions shape, without a key", () =>
    withServer([{ text: "ok" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server, { name: "qwen2.5-coder:7b" }), { ...question, tools: [bashTool] })
        const [request] = server.completions()
        expect(request.method).toBe("POST")
        expect(request.path).toBe("/v1/chat/completions")
        expect(request.headers["content-type"]).toMatch(/^application\/json/)
        expect(request.headers.authorization).toBeUndefined()
        expect(request.body).toEqual({
          model: "qwen2.5-coder:7b",
          messages: question.messages,
          stream: true,
          stream_options: { include_usage: true },
          tools: [{ type: "function", function: bashTool }]
        })
      })))

  it.scopedLive("leaves tools out when there are none, and strips a trailing slash from the url", () =>
    withServer([{ text: "ok" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server, { url: `${server.url}/` }))
        const [request] = server.completions()
        expect(request.path).toBe("/v1/chat/completions")
        expect(request.body).not.toHaveProperty("tools")
      })))

  it.scopedLive("sends the bearer token from the variable named by apiKeyEnv", () =>
    Effect.gen(function*() {
      const name = `MM_TEST_KEY_${process.pid}`
      yield* Effect.acquireRelease(
        Effect.sync(() => (process.env[name] = "sk-test-123")),
        () => Effect.sync(() => delete process.env[name])
      )
      const server = yield* fakeServer({ steps: [{ text: "ok" }] })
      yield* collect(configFor(server, { apiKeyEnv: name }))
      expect(server.completions()[0].headers.authorization).toBe("Bearer sk-test-123")
    }))

  it.scopedLive("fails in one line naming the variable when apiKeyEnv's variable is unset, before any request", () =>
    withServer([{ text: "ok" }], (server) =>
      Effect.gen(function*() {
        const name = "MM_TEST_SURELY_UNSET_KEY"
        delete process.env[name]
        const error = yield* failure(configFor(server, { apiKeyEnv: name }))
        expect(error.message).toContain(name)
        expect(error.message).not.toContain("Bearer")
        expect(server.completions()).toHaveLength(0)
      })))

  it.scopedLive("drops stream_options for good when the server refuses it", () =>
    withServer(
      [
        {
          kind: "status",
          status: 400,
          body: { error: { message: "Unrecognized request argument supplied: stream_options" } }
        },
        { text: "fine" },
        { text: "again" }
      ],
      (server) =>
        Effect.gen(function*() {
          const layer = clientLayer(configFor(server))
          const run = Effect.flatMap(ModelClient, (client) => Stream.runCollect(client.stream(question)))
          const [first, second] = yield* Effect.all([run, run]).pipe(Effect.provide(layer))
          expect(completed(Chunk.toReadonlyArray(first)).content).toBe("fine")
          expect(completed(Chunk.toReadonlyArray(second)).content).toBe("again")
          const bodies = server.completions().map((r) => r.body)
          expect(bodies).toHaveLength(3)
          expect(bodies[0]).toHaveProperty("stream_options")
          expect(bodies[1]).not.toHaveProperty("stream_options")
          expect(bodies[2]).not.toHaveProperty("stream_options")
        })
    ))

  it.scopedLive("a chunk carrying \"error\": null is an ordinary chunk", () =>
    withServer(
      [
        {
          kind: "raw",
          chunks: [
            sse({ choices: [{ index: 0, delta: { content: "fine" }, finish_reason: null }], error: null }),
            delta({}, "stop"),
            "data: [DONE]\n\n"
          ]
        }
      ],
      (server) =>
        Effect.gen(function*() {
          expect(completed(yield* collect(configFor(server))).content).toBe("fine")
        })
    ))

  it.scopedLive("reads a burst of 5,000 events in one network write, CRLF lines and an event cut mid-line included", () => {
    const words = Array.from({ length: 5000 }, (_, n) => `w${n} `)
    const burst = words.map((
      word,
      n
    ) => (n % 2 === 0 ? delta({ content: word }) : delta({ content: word }).replace(/\n/g, "\r\n"))).join("")
    const last = delta({}, "stop")
    return withServer(
      [{ kind: "raw", chunks: [burst + last.slice(0, 9), last.slice(9), "data: [DONE]\n\n"] }],
      (server) =>
        Effect.gen(function*() {
          const events = yield* collect(configFor(server))
          expect(events.filter((e) => e._tag === "TextDelta")).toHaveLength(5000)
          expect(completed(events).content).toBe(words.join(""))
        })
    )
  })

  it.scopedLive("accepts an answer whose socket is cut after finish_reason", () =>
    withServer(
      [{ kind: "raw", chunks: [delta({ content: "all there" }), delta({}, "stop")], end: "destroy" }],
      (server) =>
        Effect.gen(function*() {
          const done = completed(yield* collect(configFor(server)))
          expect(done.content).toBe("all there")
        })
    ))

  it.scopedLive("accepts a server that ignored stream: true and answered with one JSON body", () =>
    withServer(
      [
        {
          kind: "raw",
          headers: { "content-type": "application/json" },
          chunks: [
            JSON.stringify({
              choices: [
                {
                  index: 0,
                  message: {
                    role: "assistant",
                    content: "whole",
                    tool_calls: [{
                      id: "t1",
                      type: "function",
                      function: { name: "bash", arguments: "{\"command\":\"ls\"}" }
                    }]
                  },
                  finish_reason: "tool_calls"
                }
              ],
              usage: { prompt_tokens: 1, completion_tokens: 2 }
            })
          ]
        }
      ],
      (server) =>
        Effect.gen(function*() {
          const events = yield* collect(configFor(server))
          expect(events[0]).toEqual({ _tag: "TextDelta", text: "whole" })
          const done = completed(events)
          expect(done.toolCalls).toEqual([{
            id: "t1",
            type: "function",
            function: { name: "bash", arguments: "{\"command\":\"ls\"}" }
          }])
          expect(done.usage).toEqual({ promptTokens: 1, completionTokens: 2 })
        })
    ))
})

describe("ChatClient: failures", () => {
  it.scopedLive("404 from Ollama: the model is named, with `ollama pull`", () =>
    withServer(
      [{
        kind: "status",
        status: 404,
        body: { error: { message: "model \"qwen3:4b\" not found, try pulling it first", type: "api_error" } }
      }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server, { name: "qwen3:4b" }))
          expect(error.reason).toBe("model-not-found")
          expect(error.message).toBe(
            `model "qwen3:4b" is not available on ${server.url} — run \`ollama pull qwen3:4b\``
          )
          expect(error.raw).toContain("try pulling it first")
        }),
      false,
      ["qwen3:4b"]
    ))

  it.scopedLive("404 from a server that is not Ollama: the model is named, no Ollama hint", () =>
    withServer(
      [{
        kind: "status",
        status: 404,
        body: { object: "error", message: "The model `gpt-x` does not exist.", type: "NotFoundError", code: 404 }
      }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server, { name: "gpt-x" }))
          expect(error.reason).toBe("model-not-found")
          expect(error.message).toContain(`model "gpt-x" is not available on ${server.url}`)
          expect(error.message).toContain("does not exist")
          expect(error.message).not.toMatch(/ollama/i)
        }),
      false,
      ["gpt-x"]
    ))

  it.scopedLive("a bare 404 (wrong path) still names the model and points at model.url", () =>
    withServer([{ kind: "status", status: 404, body: "404 page not found" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.reason).toBe("model-not-found")
        expect(error.message).toContain("HTTP 404: 404 page not found")
        expect(error.message).toContain("model.url")
        expect(error.message).not.toMatch(/ollama pull/)
      })))

  it.scopedLive("a model-not-found body under another status is still model-not-found", () =>
    withServer(
      [{ kind: "status", status: 400, body: { error: { message: "model 'nope' not found" } } }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server, { name: "nope" }), question)
          expect(error.reason).toBe("model-not-found")
        })
    ))

  it.scopedLive("500: status and the first line of the server's message", () =>
    withServer(
      [{
        kind: "status",
        status: 500,
        body: { error: { message: `out of memory\nwhile loading ${"x".repeat(400)}` } }
      }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(error.reason).toBe("http")
          expect(error.message).toMatch(
            /^model server answered HTTP 500: out of memory while loading x+… — check the server's log$/
          )
          expect(error.message.length).toBeLessThan(260)
          expect(error.raw).toContain("x".repeat(400))
        })
    ))

  it.scopedLive("401: says where the key comes from", () =>
    withServer(
      [{ kind: "status", status: 401, body: { error: { message: "Incorrect API key provided" } } }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(error.reason).toBe("http")
          expect(error.message).toContain("HTTP 401: Incorrect API key provided")
          expect(error.message).toContain("model.apiKeyEnv")
        })
    ))

  it.scopedLive("an error event in the middle of the stream is an http failure with the server's words", () =>
    withServer(
      [{
        kind: "raw",
        chunks: [
          delta({ content: "par" }),
          sse({ error: { message: "context length exceeded", type: "server_error" } })
        ]
      }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(error.reason).toBe("http")
          expect(error.message).toContain("context length exceeded")
        })
    ))

  it.scopedLive("watchdog: silence between two tokens gives the turn up", () =>
    withServer([{ kind: "stall", text: "I was say" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { watchdogTimeout: 0.3 }))
        expect(error.reason).toBe("watchdog")
        expect(error.message).toBe(
          "no token from the model for 0.3 s (watchdogTimeout) — the turn was given up; if the model is slow to load, raise watchdogTimeout in agent.yaml"
        )
        expect(yield* Effect.promise(() => server.waitForAbort())).toBe(true)
      })))

  it.scopedLive("watchdog: a server that never sends its headers", () =>
    withServer([{ kind: "silent" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { watchdogTimeout: 0.3 }))
        expect(error.reason).toBe("watchdog")
        expect(yield* Effect.promise(() => server.waitForAbort())).toBe(true)
      })))

  it.scopedLive("a stream closed before finish_reason is a stream cut", () =>
    withServer([{ kind: "cut", text: "half an ans" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.reason).toBe("stream-cut")
        expect(error.message).toBe(
          "the model server closed the stream before the answer was complete — check the server's log, then ask again"
        )
      })))

  it.scopedLive("a stream that ends cleanly without finish_reason or [DONE] is a stream cut", () =>
    withServer([{ kind: "raw", chunks: [delta({ content: "half" })], end: "end" }], (server) =>
      Effect.gen(function*() {
        expect((yield* failure(configFor(server))).reason).toBe("stream-cut")
      })))

  it.scopedLive("a data line that is not JSON is malformed, and says so", () =>
    withServer([{ kind: "malformed" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.reason).toBe("malformed")
        expect(error.message).toBe("the model server sent a chunk that is not JSON: {this is not json")
      })))

  it.scopedLive("tool arguments that are not JSON are malformed, naming the tool", () =>
    withServer([{ kind: "bad-arguments" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.reason).toBe("malformed")
        expect(error.message).toContain("tool \"bash\" arguments that are not JSON")
      })))

  it.scopedLive("connection refused: unreachable, naming the URL", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const url = `http://127.0.0.1:${port}/v1`
      const error = yield* failure(configFor(undefined, { url }))
      expect(error.reason).toBe("unreachable")
      expect(error.message).toBe(`cannot reach the model server at ${url} (connection refused) — is it running?`)
      expect(error.raw).toContain("ECONNREFUSED")
    }))

  it.scopedLive("connection refused on Ollama's port suggests `ollama serve`", () =>
    Effect.gen(function*() {
      const listening = yield* Effect.promise(
        () =>
          new Promise<boolean>((resolve) => {
            const socket = net.connect(11434, "127.0.0.1")
            socket.once("connect", () => (socket.destroy(), resolve(true)))
            socket.once("error", () => resolve(false))
          })
      )
      if (listening) return // something really serves 11434 here; nothing to assert
      const error = yield* failure(configFor(undefined, { url: "http://127.0.0.1:11434/v1" }))
      expect(error.message).toBe(
        "cannot reach the model server at http://127.0.0.1:11434/v1 (connection refused) — is it running? (e.g. `ollama serve`)"
      )
    }))

  it.scopedLive("a connection reset before any byte is retried, then unreachable, with every attempt in raw", () =>
    withServer(
      [{ kind: "reset" }, { kind: "reset" }, { kind: "reset" }, { kind: "reset" }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(error.reason).toBe("unreachable")
          expect(error.message).toBe(
            `cannot reach the model server at ${server.url} (connection reset before any answer) — is it running?`
          )
          expect(server.completions()).toHaveLength(4)
          expect(error.raw.split("\n").map((line) => line.split(":")[0])).toEqual([
            "attempt 1",
            "attempt 2",
            "attempt 3",
            "attempt 4"
          ])
        })
    ))

  it.scopedLive("a url that is not a URL is one line too", () =>
    Effect.gen(function*() {
      const error = yield* failure(configFor(undefined, { url: "not a url" }))
      expect(error.reason).toBe("unreachable")
      expect(error.message).toContain("model.url")
    }))
})

describe("ChatClient: cancellation", () => {
  it.scopedLive("interrupting the consumer mid-stream closes the request at once", () =>
    withServer([{ kind: "stall", text: "thinking about it" }], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server, { watchdogTimeout: 30 }))))
        const firstToken = yield* Deferred.make<void>()
        const fiber = yield* client.stream(question).pipe(
          Stream.runForEach((
            event
          ) => (event._tag === "TextDelta" ? Deferred.succeed(firstToken, undefined) : Effect.void)),
          Effect.fork
        )
        yield* Deferred.await(firstToken)
        expect(server.aborted()).toBe(0)
        const exit = yield* Fiber.interrupt(fiber)
        expect(exit._tag).toBe("Failure")
        expect(yield* Effect.promise(() => server.waitForAbort({ timeoutMs: 1000 }))).toBe(true)
      })))

  it.scopedLive("interrupting while waiting for the headers closes the request too", () =>
    withServer([{ kind: "silent" }], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server, { watchdogTimeout: 30 }))))
        const fiber = yield* client.stream(question).pipe(Stream.runDrain, Effect.fork)
        yield* Effect.promise(() => until(() => server.completions().length > 0, "the request"))
        yield* Fiber.interrupt(fiber)
        expect(yield* Effect.promise(() => server.waitForAbort({ timeoutMs: 1000 }))).toBe(true)
      })))

  it.scopedLive("taking only the first delta ends the request as well", () =>
    withServer([{ text: ["a", "b", "c", "d"], chunkDelayMs: 50 }], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server))))
        const first = yield* client.stream(question).pipe(Stream.take(1), Stream.runCollect)
        expect(Chunk.toReadonlyArray(first)).toEqual([{ _tag: "TextDelta", text: "a" }])
        expect(yield* Effect.promise(() => server.waitForAbort({ timeoutMs: 1000 }))).toBe(true)
      })))
})

describe("ChatClient: probe", () => {
  const probe = (config: LoadedConfig) =>
    Effect.flatMap(ModelClient, (c) => c.probe).pipe(Effect.provide(clientLayer(config)))

  it.scopedLive("true when the server answers, even with a 404", () =>
    withServer([], (server) =>
      Effect.gen(function*() {
        expect(yield* probe(configFor(server))).toBe(true)
        expect(server.requests.some((r) => r.method === "GET" && r.path === "/v1/models")).toBe(true)
        expect(yield* probe(configFor(server, { url: `http://127.0.0.1:${server.port}/elsewhere` }))).toBe(true)
      })))

  it.scopedLive("false when nothing listens", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      expect(yield* probe(configFor(undefined, { url: `http://127.0.0.1:${port}/v1` }))).toBe(false)
    }))

  it.scoped("false once PROBE_TIMEOUT_MS has passed, when the server accepts but never answers", () =>
    Effect.gen(function*() {
      const mute = yield* Effect.acquireRelease(
        Effect.promise(
          () =>
            new Promise<{ server: net.Server; sockets: Set<net.Socket> }>((resolve) => {
              const sockets = new Set<net.Socket>()
              const server = net.createServer((socket) => sockets.add(socket))
              server.listen(0, "127.0.0.1", () => resolve({ server, sockets }))
            })
        ),
        ({ server, sockets }) =>
          Effect.promise(() => {
            for (const socket of sockets) socket.destroy()
            return new Promise<void>((resolve) => server.close(() => resolve()))
          })
      )
      const port = (mute.server.address() as net.AddressInfo).port
      const answer = yield* Effect.fork(probe(configFor(undefined, { url: `http://127.0.0.1:${port}/v1` })))
      yield* Effect.promise(() => until(() => mute.sockets.size > 0, "the probe to connect"))
      // the test's clock: the probe's wait ends when its timeout says, however loaded the machine
      yield* TestClock.adjust(PROBE_TIMEOUT_MS)
      expect(yield* Fiber.join(answer)).toBe(false)
    }))
})

describe("Completion (pure)", () => {
  it("assembles tool calls that come without an index, by id", () => {
    const completion = new Completion()
    completion.absorb(
      JSON.stringify({
        choices: [{
          delta: { tool_calls: [{ id: "a", function: { name: "bash", arguments: "{\"command\":\"ls\"}" } }] }
        }]
      }),
      "message"
    )
    completion.absorb(
      JSON.stringify({
        choices: [{ delta: { tool_calls: [{ id: "b", function: { name: "read_file", arguments: { path: "x" } } }] } }]
      }),
      "message"
    )
    completion.absorb(JSON.stringify({ choices: [{ delta: {}, finish_reason: "tool_calls" }] }), "message")
    const done = completion.complete()
    expect(done).toMatchObject({
      _tag: "Completed",
      toolCalls: [
        { id: "a", function: { name: "bash", arguments: "{\"command\":\"ls\"}" } },
        { id: "b", function: { name: "read_file", arguments: "{\"path\":\"x\"}" } }
      ]
    })
  })

  it("gives empty tool arguments as {} and invents an id when the server gave none", () => {
    const completion = new Completion()
    completion.absorb(
      JSON.stringify({
        choices: [{
          delta: { tool_calls: [{ index: 0, function: { name: "list", arguments: "" } }] },
          finish_reason: "tool_calls"
        }]
      }),
      "message"
    )
    const done = completion.complete()
    if (done._tag !== "Completed") throw new Error("expected Completed")
    expect(done.toolCalls[0].function.arguments).toBe("{}")
    expect(done.toolCalls[0].id).toMatch(/^call_/)
  })

  it("ignores role-only and empty deltas, and takes [DONE] as the end", () => {
    const completion = new Completion()
    expect(completion.absorb(JSON.stringify({ choices: [{ delta: { role: "assistant", content: "" } }] }), "message"))
      .toBeUndefined()
    expect(completion.absorb(JSON.stringify({ choices: [{ delta: { content: "hi" } }] }), "message")).toBe("hi")
    expect(completion.finished).toBe(false)
    expect(completion.absorb("[DONE]", "message")).toBeUndefined()
    expect(completion.finished).toBe(true)
  })
})

describe("ChatClient: llama-server reading a long prompt", () => {
  /** llama-server as it says so: `owned_by: llamacpp` in its list, and `/props` with its window. */
  const llamaServer = {
    "GET /v1/models": {
      body: { object: "list", data: [{ id: "fake-model", object: "model", owned_by: "llamacpp" }] }
    },
    "GET /props": { body: { default_generation_settings: { n_ctx: 8192 } } }
  }

  /** The client, once it has heard the server about itself; then the events of one answer. */
  const streamAfterProbe = (server: FakeModelServer, step: Step, config: LoadedConfig) =>
    Effect.gen(function*() {
      const client = yield* ModelClient
      yield* client.check
      yield* client.freshWindow
      server.push(step)
      return Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(question)))
    }).pipe(Effect.provide(clientLayer(config)))

  it.scopedLive("asks for progress chunks, shows them, and outlasts a short watchdog with them", () =>
    Effect.flatMap(fakeServer({ routes: llamaServer }), (server) =>
      Effect.gen(function*() {
        // 7 chunks 300 ms apart: 2.1 s of reading, against a watchdog of 1 s
        const step: Step = { text: "read it all", promptProgress: { total: 4858, chunks: 7, everyMs: 300 } }
        const events = yield* streamAfterProbe(server, step, configFor(server, { watchdogTimeout: 1 }))
        expect(server.completions().at(-1)?.body.return_progress).toBe(true)
        const progress = events.filter((e) => e._tag === "PromptProgress")
        expect(progress).toHaveLength(7)
        expect(progress.at(-1)).toEqual({ _tag: "PromptProgress", processed: 4858, total: 4858 })
        // the progress came before any of the answer, and none of it is the answer
        const lastProgress = events.map((e) => e._tag).lastIndexOf("PromptProgress")
        expect(events.findIndex((e) => e._tag === "TextDelta")).toBeGreaterThan(lastProgress)
        expect(completed(events).content).toBe("read it all")
      })))

  it.scopedLive("never asks a server not known to be llama.cpp", () =>
    withServer([], (server) =>
      Effect.gen(function*() {
        const events = yield* streamAfterProbe(server, { text: "hi" }, configFor(server))
        expect(completed(events).content).toBe("hi")
        expect(server.completions().at(-1)?.body).not.toHaveProperty("return_progress")
      })))
})

describe("ChatClient: parallel calls and the length limit", () => {
  it.scopedLive("keeps the complete calls when a later one is cut, and says which was cut", () =>
    withServer([{
      toolCalls: [
        { id: "a", name: "bash", arguments: { command: "ls" } },
        { id: "b", name: "read_file", arguments: { path: "a.txt" } },
        { id: "c", name: "write_file", arguments: "{\"path\": \"b.txt\", \"content\": \"the start of a lo" }
      ],
      finishReason: "length"
    }], (server) =>
      Effect.gen(function*() {
        const done = completed(yield* collect(configFor(server), { ...question, tools: [bashTool] }))
        expect(done.toolCalls.map((call) => [call.id, call.function.name])).toEqual([["a", "bash"], [
          "b",
          "read_file"
        ]])
        expect(done.cutCalls).toEqual([{
          name: "write_file",
          line:
            "the model's output limit cut tool call \"write_file\" before its arguments were complete (finish_reason: length) — set model.maxTokens higher (the server's own output limit applies now)"
        }])
      })))
})

describe("Completion (pure): progress", () => {
  it("a llama-server progress chunk is neither text nor the end, and is handed out once", () => {
    const completion = new Completion()
    const chunk = {
      choices: [{ finish_reason: null, index: 0, delta: { role: "assistant", content: null } }],
      object: "chat.completion.chunk",
      prompt_progress: { total: 4858, cache: 0, processed: 2048, time_ms: 1234 }
    }
    expect(completion.absorb(JSON.stringify(chunk), "message")).toBeUndefined()
    expect(completion.content).toBe("")
    expect(completion.finished).toBe(false)
    expect(completion.takeProgress()).toEqual({ processed: 2048, total: 4858 })
    expect(completion.takeProgress()).toBeUndefined()
  })
})
