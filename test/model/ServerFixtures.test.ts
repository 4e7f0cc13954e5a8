// The model client over what real servers send (test/fixtures/servers/README.md names each source).
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { AppConfig, type LoadedConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { GenerationError } from "../../src/domain/Errors"
import { looksNotOpenAi } from "../../src/model/Failures"
import { type ChatRequest, ModelClient, type ModelEvent } from "../../src/model/ModelClient"
import { retryAfterMs, retryDelayMs, type RetryTiming } from "../../src/model/Retry"
import { type Route, startFakeModelServer, type Step } from "../support/FakeModelServer"
import { modelClientLayer, quickRetries, secretsLayer, serverCacheOff } from "../support/layers"
import { SERVER_FIXTURES } from "../support/paths"
import { until } from "../support/until"

const FIXTURES = SERVER_FIXTURES
const read = (server: string, file: string) => fs.readFileSync(path.join(FIXTURES, server, file), "utf8")
const json = (server: string, file: string): any => JSON.parse(read(server, file))

/** An `.sse` fixture as the fake server's raw step: one write per event. */
const sseStep = (server: string, file: string): Step => ({
  kind: "raw",
  chunks: read(server, file)
    .split("\n\n")
    .filter((event) => event.trim() !== "")
    .map((event) => `${event}\n\n`)
})

const errorStep = (server: string, file = "error.json"): Step => {
  const fixture = json(server, file)
  return { kind: "status", status: fixture.status, body: fixture.body, headers: fixture.headers }
}

const configFor = (url: string, model: Partial<LoadedConfig["config"]["model"]> = {}): LoadedConfig => ({
  config: {
    ...defaultConfig(),
    watchdogTimeout: 5,
    model: { ...defaultConfig().model, url, name: "fake-model", ...model }
  },
  file: undefined
})

const withClient = <A, E>(
  options: Parameters<typeof startFakeModelServer>[0],
  model: Partial<LoadedConfig["config"]["model"]>,
  use: (client: ModelClient["Type"], server: Awaited<ReturnType<typeof startFakeModelServer>>) => Effect.Effect<A, E>,
  retries: Layer.Layer<RetryTiming> | Layer.Layer<never> = quickRetries
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startFakeModelServer(options)),
    (server) =>
      Effect.flatMap(ModelClient, (client) => use(client, server)).pipe(
        Effect.provide(
          modelClientLayer.pipe(
            Layer.provide(
              Layer.mergeAll(
                Layer.succeed(AppConfig, configFor(server.url, model)),
                retries,
                secretsLayer(),
                serverCacheOff
              )
            )
          )
        )
      ),
    (server) => Effect.promise(() => server.close())
  )

const tools: ChatRequest["tools"] = [
  {
    name: "bash",
    description: "run a command",
    parameters: { type: "object", properties: { command: { type: "string" } } }
  },
  {
    name: "read_file",
    description: "read a file",
    parameters: { type: "object", properties: { path: { type: "string" } } }
  }
]
const question: ChatRequest = { messages: [{ role: "user", content: "hello" }], tools }

const collect = (client: ModelClient["Type"]) =>
  Effect.map(Stream.runCollect(client.stream(question)), Chunk.toReadonlyArray)

const completedOf = (events: ReadonlyArray<ModelEvent>) => {
  const last = events.at(-1)
  if (last?._tag !== "Completed") throw new Error(`expected Completed last, got ${JSON.stringify(last)}`)
  return last
}
const textOf = (events: ReadonlyArray<ModelEvent>) =>
  events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")
const callsOf = (events: ReadonlyArray<ModelEvent>) =>
  completedOf(events).toolCalls.map((call) => [call.function.name, JSON.parse(call.function.arguments)])

/** Polls the client's context window until it is `expected` (the probe runs in the background). */
const windowBecomes = (client: ModelClient["Type"], expected: number) =>
  Effect.gen(function*() {
    // the server is asked about itself when something needs it (the banner, ACP's start, a first request)
    yield* client.askServer
    for (let i = 0; i < 100; i++) {
      if ((yield* client.contextWindow) === expected) return expected
      yield* Effect.sleep("20 millis")
    }
    return yield* client.contextWindow
  })

const SERVERS = ["openai", "ollama", "llama.cpp", "vllm", "lmstudio"] as const

describe.each(SERVERS)("fixtures of %s", (name) => {
  it.live("a plain answer: the text as it came, then one Completed", () =>
    withClient({ steps: [sseStep(name, "plain.sse")] }, {}, (client) =>
      Effect.gen(function*() {
        const events = yield* collect(client)
        expect(textOf(events)).toBe("Hello! How can I help you today?")
        const done = completedOf(events)
        expect(done.content).toBe("Hello! How can I help you today?")
        expect(done.finishReason).toBe("stop")
        expect(done.toolCalls).toEqual([])
        // LM Studio's stream carries no usage
        if (name === "lmstudio") expect(done.usage).toBeUndefined()
        else expect(done.usage?.promptTokens).toBeGreaterThan(0)
      })))

  it.live("a streamed tool call", () =>
    withClient({ steps: [sseStep(name, "tool-call.sse")] }, {}, (client) =>
      Effect.gen(function*() {
        const events = yield* collect(client)
        expect(callsOf(events)).toEqual([["bash", { command: "ls -la" }]])
        expect(completedOf(events).toolCalls[0].id).not.toBe("")
        expect(completedOf(events).finishReason).toBe("tool_calls")
      })))

  it.live("parallel tool calls", () =>
    withClient({ steps: [sseStep(name, "parallel-tools.sse")] }, {}, (client) =>
      Effect.gen(function*() {
        const events = yield* collect(client)
        expect(callsOf(events)).toEqual([
          ["read_file", { path: "README.md" }],
          ["bash", { command: "git status" }]
        ])
        const ids = completedOf(events).toolCalls.map((call) => call.id)
        expect(new Set(ids).size).toBe(2)
      })))

  it.live("a reasoning model's answer: the answer alone is the text", () =>
    withClient({ steps: [sseStep(name, "reasoning.sse")] }, {}, (client) =>
      Effect.gen(function*() {
        const events = yield* collect(client)
        expect(completedOf(events).content).toBe("2 + 2 = 4.")
        expect(textOf(events)).toBe("2 + 2 = 4.")
      })))

  it.live("an error body: one line, classified", () =>
    withClient({ steps: [errorStep(name)], models: [] }, {}, (client) =>
      Effect.gen(function*() {
        const error = yield* Effect.flip(collect(client))
        expect(error).toBeInstanceOf(GenerationError)
        expect(error.reason).toBe(json(name, "error.json").reason)
        expect(error.message).not.toMatch(/[\r\n]/)
        expect(error.raw).toContain(String(json(name, "error.json").status))
      })))
})

/** Each server's model list and context answers, as the fake server's routes. */
const serverRoutes: Record<(typeof SERVERS)[number], { routes: Record<string, Route>; window: number; model: string }> =
  {
    openai: {
      routes: { "GET /v1/models": { body: json("openai", "models.json") } },
      window: 32768,
      model: "gpt-4o-mini"
    },
    ollama: {
      routes: {
        "GET /v1/models": { body: json("ollama", "models.json") },
        "POST /api/show": { body: json("ollama", "api-show.json") },
        "GET /api/ps": { body: json("ollama", "api-ps-empty.json") }
      },
      window: 4096,
      model: "qwen2.5-coder:7b"
    },
    "llama.cpp": {
      routes: {
        "GET /v1/models": { body: json("llama.cpp", "models.json") },
        "GET /props": { body: json("llama.cpp", "props.json") }
      },
      window: 512,
      model: "local"
    },
    vllm: {
      routes: { "GET /v1/models": { body: json("vllm", "models.json") } },
      window: 16384,
      model: "Qwen/Qwen2.5-Coder-7B-Instruct"
    },
    lmstudio: {
      routes: {
        "GET /v1/models": { body: json("lmstudio", "models.json") },
        "GET /api/v0/models/qwen2.5-7b-instruct": { body: json("lmstudio", "api-v0-model.json") }
      },
      window: 4096,
      model: "qwen2.5-7b-instruct"
    }
  }

describe("the context window each server says it serves", () => {
  for (const name of SERVERS) {
    it.live(`${name}: the banner's check and the window in force`, () => {
      const { routes, window, model } = serverRoutes[name]
      return withClient({ routes }, { name: model }, (client) =>
        Effect.gen(function*() {
          const check = yield* client.check
          expect(check.answering).toBe(true)
          expect(check.missing).toBe(false)
          expect(yield* windowBecomes(client, window)).toBe(window)
        }))
    })
  }

  it.live("LM Studio 0.4's /api/v1/models gives the loaded context too", () =>
    withClient(
      {
        routes: {
          "GET /v1/models": { body: json("lmstudio", "models.json") },
          "GET /api/v1/models": { body: json("lmstudio", "api-v1-models.json") }
        }
      },
      { name: "qwen2.5-7b-instruct" },
      (client) => Effect.map(windowBecomes(client, 4096), (w) => expect(w).toBe(4096))
    ))

  it.live("Ollama: a small window is said once, with the fix", () =>
    withClient(
      { routes: serverRoutes.ollama.routes },
      { name: "qwen2.5-coder:7b" },
      (client) =>
        Effect.gen(function*() {
          yield* windowBecomes(client, 4096)
          expect(yield* client.takeWarning).toBe(
            "ollama serves qwen2.5-coder:7b with 4096 tokens of context — set OLLAMA_CONTEXT_LENGTH=32768 and restart ollama"
          )
          expect(yield* client.takeWarning).toBeUndefined()
        })
    ))

  it.live("Ollama: a model not loaded yet is asked about again once it has answered", () => {
    // no num_ctx of its own, and /api/ps does not list it until it has answered once
    const routes: Record<string, Route> = {
      "GET /v1/models": { body: json("ollama", "models.json") },
      "POST /api/show": { body: json("ollama", "api-show-default.json") },
      "GET /api/ps": { body: json("ollama", "api-ps-empty.json") }
    }
    return withClient(
      { steps: [sseStep("ollama", "plain.sse")], routes },
      { name: "qwen2.5-coder:7b" },
      (client, server) =>
        Effect.gen(function*() {
          yield* client.askServer
          // the first probe is over once /api/ps is answered and the window settled
          yield* Effect.promise(() => until(() => server.answered.includes("GET /api/ps"), "/api/ps to be answered"))
          yield* client.settledWindow
          expect(yield* client.contextWindow).toBe(32768)
          routes["GET /api/ps"] = { body: json("ollama", "api-ps-loaded.json") }
          yield* collect(client)
          expect(yield* windowBecomes(client, 8192)).toBe(8192)
          expect(yield* client.takeWarning).toContain("ollama serves qwen2.5-coder:7b with 8192 tokens of context")
        })
    )
  })

  it.live("a configured window larger than the server's: the server's wins, and it is said", () =>
    withClient(
      { routes: serverRoutes.vllm.routes },
      { name: "Qwen/Qwen2.5-Coder-7B-Instruct", contextWindow: 65536 },
      (client) =>
        Effect.gen(function*() {
          expect(yield* windowBecomes(client, 16384)).toBe(16384)
          expect(yield* client.takeWarning).toBe(
            "the server serves Qwen/Qwen2.5-Coder-7B-Instruct with 16384 tokens of context, less than model.contextWindow (65536) — restart vllm with --max-model-len 65536, or lower model.contextWindow"
          )
        })
    ))

  it.live("a configured window smaller than the server's stays, silently", () =>
    withClient(
      { routes: serverRoutes["llama.cpp"].routes },
      { contextWindow: 400 },
      (client, server) =>
        Effect.gen(function*() {
          // the server's window is known once /props is answered and the window settled
          yield* client.askServer
          yield* Effect.promise(() => until(() => server.answered.includes("GET /props"), "/props to be answered"))
          yield* client.settledWindow
          expect(yield* client.contextWindow).toBe(400)
          expect(yield* client.takeWarning).toBeUndefined()
        })
    ))

  it.live("a server slow to answer /props never holds the check up", () =>
    withClient(
      {
        routes: {
          ...serverRoutes["llama.cpp"].routes,
          "GET /props": { body: json("llama.cpp", "props.json"), delayMs: 2000 }
        }
      },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const check = yield* client.check
          expect(check.answering).toBe(true)
          // the banner has what it needs while /props is still unanswered
          yield* Effect.promise(() =>
            until(() => server.requests.some((r) => r.path === "/props"), "/props to be asked")
          )
          expect(yield* client.contextWindow).toBe(32768)
          expect(yield* windowBecomes(client, 512)).toBe(512)
        })
    ))
})

describe("the model is checked", () => {
  it.live("a list without the configured model: the check says so, and so does the first failure", () =>
    withClient(
      {
        models: ["a", "b", "c"],
        steps: [{ kind: "status", status: 404, body: { error: { message: "model 'm' not found" } } }]
      },
      { name: "m" },
      (client, server) =>
        Effect.gen(function*() {
          expect(yield* client.check).toEqual({ answering: true, models: ["a", "b", "c"], missing: true })
          const error = yield* Effect.flip(collect(client))
          expect(error.reason).toBe("model-not-found")
          expect(error.message).toBe(
            `model "m" is not available on ${server.url} — available: a, b, c — check model.name`
          )
        })
    ))

  it.live("llama-server serves its one model under any name: not missing", () =>
    withClient(
      { routes: serverRoutes["llama.cpp"].routes },
      { name: "whatever" },
      (client) => Effect.map(client.check, (check) => expect(check.missing).toBe(false))
    ))

  it.live("Ollama's `:latest` is the same model", () =>
    withClient(
      { routes: serverRoutes.ollama.routes },
      { name: "llama3.2" },
      (client) => Effect.map(client.check, (check) => expect(check.missing).toBe(false))
    ))
})

describe("protocol quirks", () => {
  const quirk = (file: string) => (use: (events: ReadonlyArray<ModelEvent>) => void) =>
    withClient({ steps: [sseStep("quirks", file)] }, {}, (client) => Effect.map(collect(client), use))

  it.live("tool calls without ids get stable, distinct ones", () =>
    quirk("missing-ids.sse")((events) => {
      expect(callsOf(events)).toEqual([
        ["bash", { command: "ls" }],
        ["read_file", { path: "a.txt" }]
      ])
      const ids = completedOf(events).toolCalls.map((call) => call.id)
      expect(ids[0]).toMatch(/^call_[a-z0-9]+_0$/)
      expect(ids[1]).toBe(ids[0].replace(/_0$/, "_1"))
    }))

  it.live("arguments sent as an object", () =>
    quirk("object-arguments.sse")((events) => expect(callsOf(events)).toEqual([["bash", { command: "ls -la" }]])))

  it.live("several tool calls in one delta", () =>
    quirk("several-calls-one-delta.sse")((events) =>
      expect(callsOf(events)).toEqual([
        ["read_file", { path: "README.md" }],
        ["bash", { command: "git status" }]
      ])
    ))

  it.live("whole calls that all say index 0, with their own ids", () =>
    quirk("same-index-whole-calls.sse")((events) => {
      expect(callsOf(events)).toEqual([
        ["read_file", { path: "README.md" }],
        ["bash", { command: "git status" }]
      ])
      expect(completedOf(events).toolCalls.map((call) => call.id)).toEqual(["c0", "c1"])
    }))

  it.live("whole calls with neither index nor id", () =>
    quirk("no-index-no-id.sse")((events) =>
      expect(callsOf(events)).toEqual([
        ["read_file", { path: "README.md" }],
        ["bash", { command: "git status" }]
      ])
    ))

  it.live("the id repeated in every delta", () =>
    quirk("repeated-ids.sse")((events) => {
      expect(callsOf(events)).toEqual([["bash", { command: "ls -la" }]])
      expect(completedOf(events).toolCalls[0].id).toBe("call_rep")
    }))

  it.live("[DONE] without any finish_reason ends the answer", () =>
    quirk("done-without-finish-reason.sse")((events) => {
      expect(completedOf(events).content).toBe("Hello")
      expect(completedOf(events).finishReason).toBe("stop")
    }))

  it.live("usage in the last chunk beside finish_reason", () =>
    quirk("usage-in-last-chunk.sse")((events) =>
      expect(completedOf(events).usage).toEqual({ promptTokens: 12, completionTokens: 3 })
    ))

  it.live("no usage at all", () => quirk("no-usage.sse")((events) => expect(completedOf(events).usage).toBeUndefined()))
})

describe("retries", () => {
  const busy = errorStep("openai", "busy.json")

  it.live("429 with Retry-After: 1 twice, then an answer: one answer and two notices", () =>
    withClient(
      { steps: [busy, busy, sseStep("openai", "plain.sse")] },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const events = yield* collect(client)
          expect(events.filter((e) => e._tag === "Retrying")).toEqual([
            { _tag: "Retrying", text: "server busy (429) — retrying in 1 s" },
            { _tag: "Retrying", text: "server busy (429) — retrying in 1 s" }
          ])
          expect(textOf(events)).toBe("Hello! How can I help you today?")
          expect(server.completions()).toHaveLength(3)
        }),
      Layer.empty
    ))

  it.live("502, 503 and 504 are retried too; after the last try, the usual error with every attempt in raw", () =>
    withClient(
      {
        steps: [
          { kind: "status", status: 502, body: "Bad Gateway" },
          {
            kind: "status",
            status: 503,
            body: { error: { message: "Loading model", type: "unavailable_error", code: 503 } }
          },
          { kind: "status", status: 504, body: "Gateway Timeout" },
          {
            kind: "status",
            status: 503,
            body: { error: { message: "Loading model", type: "unavailable_error", code: 503 } }
          }
        ]
      },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const failed = yield* Effect.either(
            Stream.runCollect(client.stream(question)).pipe(Effect.map(Chunk.toReadonlyArray))
          )
          if (failed._tag === "Right") throw new Error("expected a failure")
          const error = failed.left
          expect(error.message).toBe("model server answered HTTP 503: Loading model — check the server's log")
          expect(error.raw.split("\n").map((line) => line.slice(0, 18))).toEqual([
            "attempt 1: HTTP 50",
            "attempt 2: HTTP 50",
            "attempt 3: HTTP 50",
            "attempt 4: HTTP 50"
          ])
          expect(server.completions()).toHaveLength(4)
        })
    ))

  it.live("other statuses are not retried", () =>
    withClient(
      { steps: [{ kind: "status", status: 500, body: { error: { message: "boom" } } }] },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(collect(client))
          expect(error.message).toBe("model server answered HTTP 500: boom — check the server's log")
          expect(server.completions()).toHaveLength(1)
        })
    ))

  it.live("nothing is retried once a token has been shown", () =>
    withClient(
      { steps: [{ kind: "cut", text: "partial" }, { text: "never asked" }] },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(collect(client))
          expect(error.reason).toBe("stream-cut")
          expect(server.completions()).toHaveLength(1)
        })
    ))

  it.live("interrupting during the wait stops at once, without another request", () =>
    withClient(
      {
        steps: [{
          kind: "status",
          status: 429,
          body: { error: { message: "slow down" } },
          headers: { "retry-after": "30" }
        }]
      },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const seen: Array<ModelEvent> = []
          const fiber = yield* Effect.fork(
            Stream.runForEach(client.stream(question), (e) => Effect.sync(() => seen.push(e)))
          )
          yield* Effect.promise(() => until(() => seen.length > 0, "the first event"))
          expect(seen).toEqual([{ _tag: "Retrying", text: "server busy (429) — retrying in 30 s" }])
          yield* Fiber.interrupt(fiber)
          expect(server.completions()).toHaveLength(1)
        }),
      Layer.empty
    ))

  it("reads Retry-After as seconds or as a date, and caps the wait at 60 s", () => {
    const now = Date.parse("2026-09-16T10:00:00Z")
    expect(retryAfterMs("3", now)).toBe(3000)
    expect(retryAfterMs("Wed, 16 Sep 2026 10:00:05 GMT", now)).toBe(5000)
    expect(retryAfterMs("Wed, 16 Sep 2026 09:00:00 GMT", now)).toBe(0)
    expect(retryAfterMs("soon", now)).toBeUndefined()
    expect(retryAfterMs(undefined, now)).toBeUndefined()
    const timing = { baseMs: 1000, capMs: 60_000 }
    expect(retryDelayMs(1, 120_000, timing)).toBe(60_000)
    expect(retryDelayMs(1, undefined, timing, 0.5)).toBe(1000)
    expect(retryDelayMs(3, undefined, timing, 0.5)).toBe(4000)
    expect(retryDelayMs(3, undefined, timing, 0)).toBe(3000)
    expect(retryDelayMs(3, undefined, timing, 1)).toBe(5000)
  })
})

describe("request options from agent.yaml", () => {
  it.live("temperature, max_tokens, extra body fields and headers (with ${VAR}) go with every request", () => {
    process.env.MM_TEST_HEADER_TOKEN = "tok-12345"
    return withClient(
      { steps: [{ text: "ok" }] },
      {
        temperature: 0.2,
        maxTokens: 512,
        extraBody: { options: { num_ctx: 16384 }, top_k: 20, model: "not-this-one" },
        headers: { "X-Team": "mm", "X-Token": "Bearer ${MM_TEST_HEADER_TOKEN}" }
      },
      (client, server) =>
        Effect.gen(function*() {
          yield* collect(client)
          const request = server.completions()[0]
          expect(request.body).toMatchObject({
            model: "fake-model",
            temperature: 0.2,
            max_tokens: 512,
            top_k: 20,
            options: { num_ctx: 16384 },
            stream: true
          })
          expect(request.headers["x-team"]).toBe("mm")
          expect(request.headers["x-token"]).toBe("Bearer tok-12345")
          // the server's own routes get the headers too
          yield* client.check
          expect(server.requests.find((r) => r.path === "/v1/models")?.headers["x-team"]).toBe("mm")
        })
    )
  })

  it.live("a header naming an unset variable fails in one line before any request", () => {
    delete process.env.MM_TEST_UNSET_VARIABLE
    return withClient(
      { steps: [{ text: "ok" }] },
      { headers: { "X-Key": "${MM_TEST_UNSET_VARIABLE}" } },
      (client, server) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(collect(client))
          expect(error.message).toBe(
            "agent.yaml names the environment variable MM_TEST_UNSET_VARIABLE (model.headers.X-Key), but it is not set — export it before starting mm"
          )
          expect(server.completions()).toHaveLength(0)
        })
    )
  })
})

/** What a real llama-server answered (issue 27): the bodies in test/fixtures/servers/llama.cpp. */
describe("a real llama-server's answers", () => {
  const llama = (file: string): Route => ({ body: json("llama.cpp", file) })
  const loading: Route = { status: 503, body: json("llama.cpp", "loading.json").body }
  const up = { "GET /v1/models": llama("models.json"), "GET /props": llama("props.json") }

  it.live("the banner's window is the one /props says it serves (512), waited for a moment", () =>
    withClient({ routes: up }, { name: "local" }, (client) =>
      Effect.gen(function*() {
        expect(yield* client.settledWindow).toBe(512)
        expect((yield* client.check).answering).toBe(true)
      })))

  it.live("a server loading its model (503) is asked again until it serves: the window ends on 512", () =>
    withClient(
      { routes: { "GET /v1/models": [loading, loading, llama("models.json")], "GET /props": llama("props.json") } },
      { name: "local" },
      (client, server) =>
        Effect.gen(function*() {
          const check = yield* client.check
          expect(check).toMatchObject({ answering: false, loading: true })
          expect(yield* windowBecomes(client, 512)).toBe(512)
          expect(server.answered.filter((route) => route === "GET /v1/models")).toHaveLength(3)
        })
    ))

  it.live("the window is learnt again from an overflow's n_ctx, and the overflow says both numbers", () =>
    withClient(
      { routes: up, steps: [errorStep("llama.cpp")], models: ["other-model"] },
      { name: "not-listed" },
      (client) =>
        Effect.gen(function*() {
          expect(yield* windowBecomes(client, 512)).toBe(512)
          const error = yield* Effect.flip(collect(client))
          // a model missing from the list does not turn the overflow into "model not available"
          expect(error.reason).toBe("context-overflow")
          expect(error.message).toBe("the request is 4,858 tokens; the server's window is 4,096")
          expect(yield* client.contextWindow).toBe(4096)
        })
    ))

  it.live("a template without tools: the tools go in the system prompt, once said with the fix", () =>
    withClient(
      {
        routes: { ...up, "GET /props": llama("props-no-tools.json") },
        steps: [{ text: "<tool_call>\n{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>" }, {
          text: "done"
        }]
      },
      { name: "local" },
      (client, server) =>
        Effect.gen(function*() {
          yield* client.settledWindow
          expect(yield* client.toolsAsText).toBe(true)
          const first = yield* collect(client)
          expect(first[0]).toEqual({
            _tag: "Notice",
            text:
              "the server's chat template cannot take tools (chat_template_caps.supports_tools: false) — start llama-server with --jinja and a model or --chat-template that supports tools; meanwhile mm describes its tools in the prompt",
            textTools: true
          })
          const again = yield* collect(client)
          expect(again.some((event) => event._tag === "Notice")).toBe(false)
          const body = server.completions()[0].body
          expect(body.tools).toBeUndefined()
          expect(body.messages[0].role).toBe("system")
          expect(body.messages[0].content).toContain("- bash: run a command")
        })
    ))

  it.live("`tools param requires --jinja flag`: asked again at once with the tools as text", () =>
    withClient(
      { routes: up, steps: [errorStep("llama.cpp", "no-jinja.json"), { text: "fine" }] },
      { name: "local" },
      (client, server) =>
        Effect.gen(function*() {
          const events = yield* collect(client)
          expect(events[0]).toMatchObject({ _tag: "Notice", textTools: true })
          expect((events[0] as { text: string }).text).toContain("start llama-server with --jinja")
          expect(completedOf(events).content).toBe("fine")
          const [refused, asked] = server.completions()
          expect(refused.body.tools).toHaveLength(2)
          expect(asked.body.tools).toBeUndefined()
          expect(asked.body.messages[0].content).toContain("<tool_call>")
        })
    ))

  it.live("a tool call cut by the output limit says so, and names model.maxTokens", () =>
    withClient(
      { routes: up, steps: [sseStep("llama.cpp", "length-cut-call.sse")] },
      { name: "local" },
      (client) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(collect(client))
          expect(error.reason).toBe("output-limit")
          expect(error.message).toBe(
            "the model's output limit cut tool call \"write_file\" before its arguments were complete (finish_reason: length) — set model.maxTokens higher (the server's own output limit applies now)"
          )
        })
    ))

  it.live("a tool call cut because the window filled up says that instead", () =>
    withClient(
      { routes: { ...up, "GET /props": { body: { default_generation_settings: { n_ctx: 190 } } } } },
      { name: "local" },
      (client, server) =>
        Effect.gen(function*() {
          expect(yield* windowBecomes(client, 190)).toBe(190)
          server.push(sseStep("llama.cpp", "length-cut-call.sse"))
          const error = yield* Effect.flip(collect(client))
          expect(error.message).toContain("the context window filled up while the model wrote tool call \"write_file\"")
        })
    ))

  it.live("a parser failure mid-stream (a bare error event, no [DONE]) is one line", () =>
    withClient(
      { routes: up, steps: [sseStep("llama.cpp", "parser-error.sse")] },
      { name: "local" },
      (client) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(collect(client))
          expect(error.message).toMatch(
            /^the model server reported an error mid-answer: Failed to parse input at pos 9/
          )
        })
    ))

  it.live("a web page where the server should be: not an OpenAI-compatible server, on the probe and the request", () =>
    withClient(
      {
        routes: {
          "GET /v1/models": {
            body: "<!doctype html><html><body>Welcome</body></html>",
            headers: { "content-type": "text/html; charset=utf-8" }
          }
        },
        steps: [{
          kind: "status",
          status: 404,
          body: "<html><body>Not Found</body></html>",
          headers: { "content-type": "text/html" }
        }]
      },
      {},
      (client, server) =>
        Effect.gen(function*() {
          const check = yield* client.check
          expect(check.answering).toBe(false)
          const line =
            `${server.url} does not look like an OpenAI-compatible server (got text/html) — check model.url (usually the API base, often ending in /v1)`
          expect(check.notOpenAi).toBe(line)
          const error = yield* Effect.flip(collect(client))
          expect(error.message).toBe(line)
        })
    ))

  it.live("a server restarted with a smaller window is measured again once it answers after being lost", () =>
    Effect.gen(function*() {
      const props = (n_ctx: number): Route => ({ body: { default_generation_settings: { n_ctx } } })
      const first = yield* Effect.promise(() =>
        startFakeModelServer({ routes: { ...up, "GET /props": props(4096) }, steps: [{ text: "first" }] })
      )
      let second: Awaited<ReturnType<typeof startFakeModelServer>> | undefined
      yield* Effect.gen(function*() {
        const client = yield* ModelClient
        expect(yield* windowBecomes(client, 4096)).toBe(4096)
        yield* Effect.promise(() => first.close())
        expect((yield* Effect.flip(collect(client))).reason).toBe("unreachable")
        second = yield* Effect.promise(() =>
          startFakeModelServer({
            port: first.port,
            routes: { ...up, "GET /props": props(512) },
            steps: [{ text: "back" }]
          })
        )
        expect(completedOf(yield* collect(client)).content).toBe("back")
        expect(yield* windowBecomes(client, 512)).toBe(512)
      }).pipe(
        Effect.provide(
          modelClientLayer.pipe(
            Layer.provide(
              Layer.mergeAll(
                Layer.succeed(AppConfig, configFor(first.url, { name: "local" })),
                quickRetries,
                secretsLayer(),
                serverCacheOff
              )
            )
          )
        ),
        Effect.ensuring(Effect.promise(() => second?.close() ?? Promise.resolve()))
      )
    }))

  it.live("an answer whose usage is beyond the window in force has the window asked again", () =>
    withClient(
      {
        routes: {
          ...up,
          "GET /props": [llama("props.json"), { body: { default_generation_settings: { n_ctx: 4096 } } }]
        },
        steps: [{ text: "long", usage: { prompt_tokens: 900, completion_tokens: 100 } }]
      },
      { name: "local" },
      (client) =>
        Effect.gen(function*() {
          expect(yield* windowBecomes(client, 512)).toBe(512)
          yield* collect(client)
          expect(yield* windowBecomes(client, 4096)).toBe(4096)
        })
    ))

  it("what counts as not OpenAI-compatible: a web page, or a success that is not JSON — not a plain-text refusal", () => {
    expect(looksNotOpenAi(404, "text/html; charset=utf-8", "<html></html>")).toBe(true)
    expect(looksNotOpenAi(200, "", "<!DOCTYPE html><html>")).toBe(true)
    expect(looksNotOpenAi(200, "text/plain", "hello")).toBe(true)
    expect(looksNotOpenAi(500, "text/plain", "Internal Server Error")).toBe(false)
    expect(looksNotOpenAi(404, "text/plain", "404 page not found")).toBe(false)
    expect(looksNotOpenAi(200, "application/json", "{\"data\":[]}")).toBe(false)
  })
})
