// The window a local server serves, learnt again at the right moments (src/model/chat/ServerWatch.ts):
// after a model load (`503 Loading model`), after a lost connection to a server restarted with
// another `-c`, and never kept as "no window" from a load or a refused key.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { AppConfig, type LoadedConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { ServerCache, type ServerCacheShape } from "../../src/model/chat/ServerCache"
import { type ChatRequest, ModelClient } from "../../src/model/ModelClient"
import { RetryTiming } from "../../src/model/Retry"
import { type FakeModelServer, type Route, startFakeModelServer, type Step } from "../support/FakeModelServer"
import { memoryServerCache, modelClientLayer, secretsLayer } from "../support/layers"
import { until } from "../support/until"

const configFor = (url: string): LoadedConfig => ({
  config: { ...defaultConfig(), watchdogTimeout: 5, model: { ...defaultConfig().model, url, name: "fake-model" } },
  file: undefined
})

/** mm's own waits (a second before asking a loading server again), the server's `Retry-After` shorter. */
const realRetries = Layer.succeed(RetryTiming, { baseMs: 1000, maxRetries: 3, capMs: 60_000 })

const clientOn = (url: string, cache: ServerCacheShape) =>
  modelClientLayer.pipe(
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(AppConfig, configFor(url)),
        Layer.succeed(ServerCache, cache),
        realRetries,
        secretsLayer()
      )
    )
  )

const question: ChatRequest = { messages: [{ role: "user", content: "hello" }], tools: [] }

/** The answer's text, and the window in force when it was complete: what its usage line says. */
const answerAndWindow = (client: ModelClient["Type"], request: ChatRequest = question) =>
  Effect.gen(function*() {
    let window = 0
    const events = yield* Stream.runCollect(
      client.stream(request).pipe(
        Stream.tap((event) =>
          event._tag === "Completed" ? Effect.map(client.contextWindow, (now) => (window = now)) : Effect.void
        )
      )
    )
    const completed = Chunk.toReadonlyArray(events).find((event) => event._tag === "Completed")
    return { text: completed?._tag === "Completed" ? completed.content : undefined, window }
  })

/** A llama-server with `-c window`. */
const llama = (window: number, delayMs?: number): Record<string, Route> => ({
  "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
  "GET /props": {
    body: { default_generation_settings: { n_ctx: window } },
    ...(delayMs === undefined ? {} : { delayMs })
  }
})

const propsAsked = (server: FakeModelServer) =>
  server.requests.filter((r) => r.method === "GET" && r.path === "/props").length

const withServer = <A, E, R>(
  options: Parameters<typeof startFakeModelServer>[0],
  use: (server: FakeModelServer) => Effect.Effect<A, E, R>
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startFakeModelServer(options)),
    use,
    (server) => Effect.promise(() => server.close())
  )

describe("a server loading its model", () => {
  it.live("a short load: the answer that follows it is measured against the window the server serves", () => {
    const { shape, writes } = memoryServerCache()
    return withServer(
      { loading: true, routes: llama(4096), steps: [{ text: "loaded" }] },
      (server) =>
        Effect.gen(function*() {
          server.setLoading(true, { "retry-after": "0.05" })
          const client = yield* ModelClient
          const answering = yield* Effect.fork(answerAndWindow(client))
          // both the request and the question about the server land inside the load
          yield* Effect.promise(() =>
            until(
              () =>
                server.refusedLoading.includes("POST /v1/chat/completions") &&
                server.refusedLoading.includes("GET /v1/models"),
              "the request and the model list refused while loading"
            )
          )
          server.setLoading(false)
          const { text, window } = yield* Fiber.join(answering)
          expect(text).toBe("loaded")
          expect(window).toBe(4096)
          // what the server said once ready is kept, never the load
          yield* Effect.promise(() => until(() => writes.length > 0, "the window kept"))
          expect(writes.every((memo) => memo.served.tokens === 4096)).toBe(true)
        }).pipe(Effect.provide(clientOn(server.url, shape)))
    )
  })

  it.live("a load that outlasts the request: nothing kept, the default in force, the window learnt with the next answer", () => {
    const { shape, writes } = memoryServerCache()
    return withServer(
      { loading: true, routes: llama(4096), steps: [{ text: "loaded" }] },
      (server) =>
        Effect.gen(function*() {
          server.setLoading(true, { "retry-after": "0.01" })
          const client = yield* ModelClient
          const error = yield* Effect.flip(answerAndWindow(client))
          expect(error.message).toContain("503")
          expect(yield* client.contextWindow).toBe(32768)
          expect(writes).toEqual([])
          server.setLoading(false)
          const { text, window } = yield* answerAndWindow(client)
          expect(text).toBe("loaded")
          expect(window).toBe(4096)
          yield* Effect.promise(() => until(() => writes.length > 0, "the window kept"))
          expect(writes.every((memo) => memo.served.tokens === 4096)).toBe(true)
        }).pipe(Effect.provide(clientOn(server.url, shape)))
    )
  })
})

describe("a side question refused for want of a key (llama-server --api-key)", () => {
  const refused: Route = { status: 401, body: { error: { code: 401, message: "Invalid API Key" } } }

  it.live("is never kept as no window: the next run asks again, and learns it once the key is right", () => {
    const { shape, writes } = memoryServerCache()
    return withServer(
      {
        // llama-server lists its models without a key; /props wants one
        routes: { ...llama(4096), "GET /props": [refused, llama(4096)["GET /props"] as Route] },
        steps: [{ text: "one" }, { text: "two" }]
      },
      (server) =>
        Effect.gen(function*() {
          // one run, its client's layer closed at its end
          const run = Effect.flatMap(ModelClient, answerAndWindow).pipe(Effect.provide(clientOn(server.url, shape)))
          const first = yield* run
          expect(first.window).toBe(32768)
          expect(propsAsked(server)).toBe(1)
          expect(writes).toEqual([])
          // the next run has nothing kept to start from: it asks, and the answer is kept
          const second = yield* run
          expect(second.window).toBe(4096)
          expect(writes.map((memo) => memo.served.tokens)).toEqual([4096])
        })
    )
  })
})

describe("a server restarted between turns with a smaller -c", () => {
  it.live("met with a reset connection: the turn's answer is measured against the new window, asked once", () =>
    withServer(
      {
        routes: {
          ...llama(8192),
          // the second answer is the restarted server's, and takes a moment
          "GET /props": [llama(8192)["GET /props"] as Route, llama(4096, 150)["GET /props"] as Route]
        },
        steps: [{ text: "one" }, { kind: "reset" }, { text: "two" }, { text: "three" }, { text: "four" }] as Array<
          Step
        >
      },
      (server) =>
        Effect.gen(function*() {
          const client = yield* ModelClient
          expect(yield* answerAndWindow(client)).toEqual({ text: "one", window: 8192 })
          expect(yield* answerAndWindow(client)).toEqual({ text: "two", window: 4096 })
          expect(propsAsked(server)).toBe(2)
          // nothing was lost since: the next turns ask nothing
          expect(yield* answerAndWindow(client)).toEqual({ text: "three", window: 4096 })
          expect(yield* answerAndWindow(client)).toEqual({ text: "four", window: 4096 })
          expect(propsAsked(server)).toBe(2)
        }).pipe(Effect.provide(clientOn(server.url, memoryServerCache().shape)))
    ))

  it.live("met with a refused connection: the first answer after it is measured against the new window", () =>
    Effect.gen(function*() {
      const first = yield* Effect.promise(() => startFakeModelServer({ routes: llama(8192), steps: [{ text: "one" }] }))
      let second: FakeModelServer | undefined
      yield* Effect.gen(function*() {
        const client = yield* ModelClient
        expect(yield* answerAndWindow(client)).toEqual({ text: "one", window: 8192 })
        yield* Effect.promise(() => first.close())
        expect((yield* Effect.flip(answerAndWindow(client))).reason).toBe("unreachable")
        second = yield* Effect.promise(() =>
          startFakeModelServer({ port: first.port, routes: llama(4096, 150), steps: [{ text: "two" }, { text: "3" }] })
        )
        expect(yield* answerAndWindow(client)).toEqual({ text: "two", window: 4096 })
        expect(yield* answerAndWindow(client)).toEqual({ text: "3", window: 4096 })
        expect(propsAsked(second)).toBe(1)
      }).pipe(
        Effect.provide(clientOn(first.url, memoryServerCache().shape)),
        Effect.ensuring(Effect.promise(() => second?.close() ?? Promise.resolve()))
      )
    }))

  it.live("restarted in silence, between two turns: the next turn's answer is measured against the new window", () =>
    Effect.gen(function*() {
      const first = yield* Effect.promise(() => startFakeModelServer({ routes: llama(8192), steps: [{ text: "one" }] }))
      let second: FakeModelServer | undefined
      yield* Effect.gen(function*() {
        const client = yield* ModelClient
        const turn = { ...question, newTurn: true }
        expect(yield* answerAndWindow(client, turn)).toEqual({ text: "one", window: 8192 })
        // the server goes and comes back on its port before mm asks anything: no refusal, no reset
        yield* Effect.promise(() => first.close())
        second = yield* Effect.promise(() =>
          startFakeModelServer({
            port: first.port,
            routes: llama(4096, 150),
            steps: [{ text: "two" }, { text: "step" }, { text: "three" }]
          })
        )
        expect(yield* answerAndWindow(client, turn)).toEqual({ text: "two", window: 4096 })
        expect(propsAsked(second)).toBe(1)
        // a later call of the same turn asks nothing; the next turn asks once more
        expect(yield* answerAndWindow(client)).toEqual({ text: "step", window: 4096 })
        expect(propsAsked(second)).toBe(1)
        expect(yield* answerAndWindow(client, turn)).toEqual({ text: "three", window: 4096 })
        expect(propsAsked(second)).toBe(2)
      }).pipe(
        Effect.provide(clientOn(first.url, memoryServerCache().shape)),
        Effect.ensuring(Effect.promise(() => second?.close() ?? Promise.resolve()))
      )
    }))
})
