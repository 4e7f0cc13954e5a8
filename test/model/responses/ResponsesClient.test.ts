import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { type AgentConfig, AppConfig } from "../../../src/config/Config"
import { GenerationError } from "../../../src/domain/Errors"
import { type ChatRequest, ModelClient, type ModelEvent } from "../../../src/model/ModelClient"
import {
  type FakeResponsesServer,
  type ResponsesStep,
  startFakeResponsesServer
} from "../../support/FakeResponsesServer"
import { modelClientLayer, quickRetries, secretsLayer, serverCacheOff, testConfig } from "../../support/layers"
import { until } from "../../support/until"

const KEY_ENV = "MM_TEST_RESPONSES_KEY"
const KEY = "sk-test-responses-0123456789"

const configFor = (server: FakeResponsesServer, model: Partial<AgentConfig["model"]> = {}, watchdogTimeout = 5) =>
  testConfig(server.url, { model: { api: "responses", apiKeyEnv: KEY_ENV, ...model }, watchdogTimeout })

const clientLayer = (config: AgentConfig) =>
  modelClientLayer.pipe(
    Layer.provide(
      Layer.mergeAll(
        Layer.succeed(AppConfig, { config, file: undefined }),
        quickRetries,
        secretsLayer(),
        serverCacheOff
      )
    )
  )

const withServer = <A, E, R>(
  steps: ReadonlyArray<ResponsesStep>,
  f: (server: FakeResponsesServer) => Effect.Effect<A, E, R>
) =>
  Effect.acquireRelease(
    Effect.promise(() => {
      process.env[KEY_ENV] = KEY
      return startFakeResponsesServer({ steps })
    }),
    (server) => Effect.promise(() => server.close())
  ).pipe(Effect.flatMap(f))

const question: ChatRequest = {
  messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }],
  tools: []
}

const bashTool = {
  name: "bash",
  description: "run a command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }
}

const collect = (config: AgentConfig, request: ChatRequest = question) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    return Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(request)))
  }).pipe(Effect.provide(clientLayer(config)))

const failure = (config: AgentConfig, request: ChatRequest = question) =>
  Effect.flip(collect(config, request)).pipe(
    Effect.tap((error) =>
      Effect.sync(() => {
        expect(error).toBeInstanceOf(GenerationError)
        expect(error.message).not.toMatch(/[\r\n]/)
        expect(error.message).not.toContain(KEY)
        expect(error.raw).not.toContain(KEY)
      })
    )
  )

const completed = (events: ReadonlyArray<ModelEvent>) => {
  const last = events.at(-1)
  if (last?._tag !== "Completed") throw new Error(`expected Completed last, got ${JSON.stringify(last)}`)
  expect(events.filter((e) => e._tag === "Completed")).toHaveLength(1)
  return last
}

describe("ResponsesClient: the request", () => {
  it.scopedLive("is stateless: instructions, the whole input as items, tools, store false, encrypted reasoning", () =>
    withServer([{ text: "ok" }], (server) =>
      Effect.gen(function*() {
        const request: ChatRequest = {
          messages: [
            { role: "system", content: "be brief" },
            { role: "user", content: "list the files" },
            {
              role: "assistant",
              content: "Looking.",
              tool_calls: [{
                id: "call_1",
                type: "function",
                function: { name: "bash", arguments: "{\"command\":\"ls\"}" }
              }]
            },
            { role: "tool", tool_call_id: "call_1", content: "a.txt\nb.txt" },
            {
              role: "user",
              content: [{ type: "text", text: "and this?" }, {
                type: "image_url",
                image_url: { url: "data:image/png;base64,AAAA" }
              }]
            }
          ],
          tools: [bashTool]
        }
        yield* collect(
          configFor(server, { maxTokens: 900, temperature: 0.2, thinking: "high", extraBody: { user: "me" } }),
          request
        )
        const [sent] = server.posts()
        expect(sent.headers.authorization).toBe(`Bearer ${KEY}`)
        expect(sent.body).toEqual({
          user: "me",
          model: "fake-model",
          instructions: "be brief",
          input: [
            { type: "message", role: "user", content: [{ type: "input_text", text: "list the files" }] },
            { type: "message", role: "assistant", content: [{ type: "output_text", text: "Looking." }] },
            { type: "function_call", call_id: "call_1", name: "bash", arguments: "{\"command\":\"ls\"}" },
            { type: "function_call_output", call_id: "call_1", output: "a.txt\nb.txt" },
            {
              type: "message",
              role: "user",
              content: [
                { type: "input_text", text: "and this?" },
                { type: "input_image", image_url: "data:image/png;base64,AAAA" }
              ]
            }
          ],
          tools: [{ type: "function", ...bashTool, strict: false }],
          stream: true,
          store: false,
          reasoning: { effort: "high" },
          include: ["reasoning.encrypted_content"],
          temperature: 0.2,
          max_output_tokens: 900
        })
      })))

  it.scopedLive("asks the editor's model when the request names one; a budget in tokens is an effort", () =>
    withServer([{ text: "ok" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server, { thinking: 2000 }), { ...question, model: "other-model" })
        expect(server.posts()[0].body.model).toBe("other-model")
        expect(server.posts()[0].body.reasoning).toEqual({ effort: "low" })
      })))

  it.scopedLive("thinking off asks for no reasoning and leaves include out", () =>
    withServer([{ text: "ok" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server, { thinking: "off" }))
        expect(server.posts()[0].body).not.toHaveProperty("reasoning")
        expect(server.posts()[0].body).not.toHaveProperty("include")
      })))
})

describe("ResponsesClient: the answer", () => {
  it.scopedLive("streams text deltas, then one Completed with the usage and its cached tokens", () =>
    withServer(
      [{ text: ["Hel", "lo, ", "world"], usage: { input_tokens: 120, output_tokens: 3, cached_tokens: 64 } }],
      (
        server
      ) =>
        Effect.gen(function*() {
          const events = yield* collect(configFor(server))
          expect(events.filter((e) => e._tag === "TextDelta").map((e) => e.text)).toEqual(["Hel", "lo, ", "world"])
          const done = completed(events)
          expect(done.content).toBe("Hello, world")
          expect(done.finishReason).toBe("stop")
          expect(done.usage).toEqual({ promptTokens: 120, completionTokens: 3, cachedTokens: 64 })
          expect(done.opaque).toBeUndefined()
        })
    ))

  it.scopedLive("assembles function calls by output index, with their call ids", () =>
    withServer([{
      text: "Let me look.",
      calls: [{ name: "bash", arguments: { command: "ls" }, callId: "call_A" }, {
        name: "read",
        arguments: { path: "a.txt" },
        callId: "call_B"
      }]
    }], (server) =>
      Effect.gen(function*() {
        const done = completed(yield* collect(configFor(server), { ...question, tools: [bashTool] }))
        expect(done.finishReason).toBe("tool_calls")
        expect(done.toolCalls).toEqual([
          { id: "call_A", type: "function", function: { name: "bash", arguments: "{\"command\":\"ls\"}" } },
          { id: "call_B", type: "function", function: { name: "read", arguments: "{\"path\":\"a.txt\"}" } }
        ])
      })))

  it.scopedLive("shows the reasoning summary as reasoning and keeps the encrypted item for the same model", () =>
    withServer(
      [{ reasoning: { summary: ["First part.", "Second part."], encrypted: "gAAAA-secret-blob" }, text: "4" }],
      (
        server
      ) =>
        Effect.gen(function*() {
          const events = yield* collect(configFor(server))
          const thought = events.flatMap((e) => (e._tag === "ReasoningDelta" ? [e.text] : [])).join("")
          expect(thought).toBe("First part.\n\nSecond part.")
          const done = completed(events)
          expect(done.reasoning).toBe("First part.\n\nSecond part.")
          expect(done.opaque).toEqual({
            api: "responses",
            model: "fake-model",
            items: [{
              type: "reasoning",
              id: expect.stringMatching(/^rs_/),
              summary: [{ type: "summary_text", text: "First part." }, { type: "summary_text", text: "Second part." }],
              encrypted_content: "gAAAA-secret-blob"
            }]
          })
        })
    ))

  it.scopedLive("sends reasoning items back before their message to the same model only", () =>
    withServer([{ text: "a" }, { text: "b" }], (server) =>
      Effect.gen(function*() {
        const item = { type: "reasoning", id: "rs_9", summary: [], encrypted_content: "ENC" }
        const history = (model: string, api: "responses" | "anthropic" = "responses"): ChatRequest => ({
          messages: [
            { role: "system", content: "s" },
            { role: "user", content: "q1" },
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{}" } }],
              opaque: { api, model, items: [item] }
            },
            { role: "tool", tool_call_id: "c1", content: "out" }
          ],
          tools: [bashTool]
        })
        yield* collect(configFor(server), history("fake-model"))
        expect(server.posts()[0].body.input.slice(1, 3)).toEqual([
          { type: "reasoning", summary: [], encrypted_content: "ENC" },
          { type: "function_call", call_id: "c1", name: "bash", arguments: "{}" }
        ])
        yield* collect(configFor(server), history("another-model"))
        expect(server.posts()[1].body.input.map((i: { type: string }) => i.type)).toEqual([
          "message",
          "function_call",
          "function_call_output"
        ])
      })))

  it.scopedLive("an answer cut by max_output_tokens is length; a content filter is content_filter", () =>
    withServer(
      [{ text: "half an ans", incomplete: "max_output_tokens" }, { text: "x", incomplete: "content_filter" }],
      (
        server
      ) =>
        Effect.gen(function*() {
          expect(completed(yield* collect(configFor(server))).finishReason).toBe("length")
          expect(completed(yield* collect(configFor(server))).finishReason).toBe("content_filter")
        })
    ))

  it.scopedLive("a function call cut by the output limit is said as such", () =>
    withServer([{ calls: [{ name: "bash", arguments: "{\"command\": \"ec" }], incomplete: "max_output_tokens" }], (
      server
    ) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { maxTokens: 50 }), { ...question, tools: [bashTool] })
        expect(error.reason).toBe("output-limit")
        expect(error.message).toContain("raise model.maxTokens (now 50)")
      })))

  it.scopedLive("a complete call before one the output limit cut is kept; the cut one is left out with its line", () =>
    withServer([{
      calls: [{ name: "bash", arguments: { command: "ls" } }, { name: "bash", arguments: "{\"command\": \"ec" }],
      incomplete: "max_output_tokens"
    }], (server) =>
      Effect.gen(function*() {
        const done = completed(yield* collect(configFor(server, { maxTokens: 50 }), { ...question, tools: [bashTool] }))
        expect(done.toolCalls.map((call) => call.function.arguments)).toEqual(["{\"command\":\"ls\"}"])
        expect(done.cutCalls).toEqual([{
          name: "bash",
          line: expect.stringContaining("raise model.maxTokens (now 50)")
        }])
      })))

  it.scopedLive("the key never shows in streamed text", () =>
    withServer([{ text: ["the key is ", KEY.slice(0, 10), KEY.slice(10), " ok"] }], (server) =>
      Effect.gen(function*() {
        const events = yield* collect(configFor(server))
        const shown = events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")
        expect(shown).toBe("the key is [redacted] ok")
        expect(completed(events).content).toBe("the key is [redacted] ok")
      })))
})

describe("ResponsesClient: failures", () => {
  it.scopedLive("429 with retry-after is asked again, and the wait announced", () =>
    withServer([
      {
        kind: "status",
        status: 429,
        headers: { "retry-after": "0" },
        body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } }
      },
      { text: "done" }
    ], (server) =>
      Effect.gen(function*() {
        const events = yield* collect(configFor(server))
        expect(events[0]).toEqual({ _tag: "Retrying", text: "rate limited (429) — retrying in 0 s" })
        expect(completed(events).content).toBe("done")
        expect(server.posts()).toHaveLength(2)
      })))

  it.scopedLive("an exhausted quota is not asked again", () =>
    withServer([{
      kind: "status",
      status: 429,
      body: {
        error: { message: "You exceeded your current quota", type: "insufficient_quota", code: "insufficient_quota" }
      }
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.message).toContain("quota is used up")
        expect(server.posts()).toHaveLength(1)
      })))

  it.scopedLive("401 is one line naming model.apiKeyEnv's variable", () =>
    withServer([{
      kind: "status",
      status: 401,
      body: {
        error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error", code: "invalid_api_key" }
      }
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.message).toBe(
          `the Responses API refused the key (HTTP 401: Incorrect API key provided: [redacted]) — check the key in $${KEY_ENV} (model.apiKeyEnv)`
        )
        expect(server.posts()).toHaveLength(1)
      })))

  it.scopedLive("a model the API does not have is model-not-found", () =>
    withServer([{
      kind: "status",
      status: 404,
      body: {
        error: { message: "The model `nope` does not exist", type: "invalid_request_error", code: "model_not_found" }
      }
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { name: "nope" }))
        expect(error.reason).toBe("model-not-found")
        expect(error.message).toContain("model \"nope\" is not available")
      })))

  it.scopedLive("context_length_exceeded is mm's context overflow", () =>
    withServer([{
      kind: "status",
      status: 400,
      body: {
        error: {
          message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
          type: "invalid_request_error",
          param: "input",
          code: "context_length_exceeded"
        }
      }
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { contextWindow: 8000 }))
        expect(error.reason).toBe("context-overflow")
        expect(error.message).toBe("the request is larger than the model's window of 8,000 tokens")
      })))

  it.scopedLive("response.failed and an error event mid-answer are one line each", () =>
    withServer([
      { kind: "failed", code: "server_error", message: "The server had an error while processing your request." },
      { kind: "error-event", code: "context_length_exceeded", message: "Your input exceeds the context window." }
    ], (server) =>
      Effect.gen(function*() {
        const failed = yield* failure(configFor(server))
        expect(failed.message).toBe("the answer failed: The server had an error while processing your request.")
        const overflow = yield* failure(configFor(server))
        expect(overflow.reason).toBe("context-overflow")
      })))

  it.scopedLive("a missing key is said before any request", () =>
    withServer([], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { apiKeyEnv: "MM_TEST_UNSET_KEY" }))
        expect(error.message).toContain("MM_TEST_UNSET_KEY")
        expect(server.posts()).toHaveLength(0)
      })))
})

describe("ResponsesClient: what the model or the server cannot take", () => {
  it.scopedLive("a model that refuses reasoning is asked again without it, and the user told once", () =>
    withServer([
      {
        kind: "status",
        status: 400,
        body: {
          error: {
            message: "Encrypted content is not supported with this model.",
            type: "invalid_request_error",
            param: "include",
            code: null
          }
        }
      },
      { text: "one" },
      { text: "two" }
    ], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(
          Effect.provide(
            clientLayer(configFor(server, { thinking: "low", extraBody: { reasoning: { summary: "auto" } } }))
          )
        )
        const first = Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(question)))
        expect(first.filter((e) => e._tag === "Notice")).toEqual([{
          _tag: "Notice",
          text:
            "model \"fake-model\" takes no reasoning parameters: asking without them (set model.thinking: off to skip this)"
        }])
        expect(completed(first).content).toBe("one")
        const second = Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(question)))
        expect(second.filter((e) => e._tag === "Notice")).toEqual([])
        const bodies = server.posts().map((p) => p.body)
        expect(bodies.map((b) => [b.reasoning, b.include])).toEqual([
          [{ effort: "low", summary: "auto" }, ["reasoning.encrypted_content"]],
          [undefined, undefined],
          [undefined, undefined]
        ])
      })))

  it.scopedLive("a server that ignores stream: true answers with the whole response", () =>
    withServer(
      [{ kind: "whole", text: "all at once", usage: { input_tokens: 30, output_tokens: 3 } }],
      (server) =>
        Effect.gen(function*() {
          const events = yield* collect(configFor(server))
          expect(events.filter((e) => e._tag === "TextDelta").map((e) => e.text)).toEqual(["all at once"])
          expect(completed(events)).toMatchObject({
            content: "all at once",
            finishReason: "stop",
            usage: { promptTokens: 30, completionTokens: 3 }
          })
        })
    ))

  it.scopedLive("an answer past model.maxAnswerBytes is given up", () =>
    withServer([{ text: ["x".repeat(600), "y".repeat(600)] }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { maxAnswerBytes: 1000 }))
        expect(error.reason).toBe("too-large")
      })))

  it.scopedLive("silence after the first event is the watchdog's", () =>
    withServer([{ kind: "stall" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, {}, 0.5))
        expect(error.reason).toBe("watchdog")
        expect(error.message).toContain("no token from the model for 0.5 s")
      })))

  it.scopedLive("403 names the model the key's project may not use", () =>
    withServer([{
      kind: "status",
      status: 403,
      body: { error: { message: "Project does not have access to model", type: "invalid_request_error", code: null } }
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.message).toBe(
          "the Responses API refused the request (HTTP 403: Project does not have access to model) — check that the key's project may use model \"fake-model\""
        )
      })))
})

describe("ResponsesClient: cancel and the server's questions", () => {
  it.scopedLive("interrupting the consumer mid-answer closes the request", () =>
    withServer([{ kind: "stall", text: "thinking about it" }], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server, {}, 30))))
        const firstToken = yield* Deferred.make<void>()
        const fiber = yield* client.stream(question).pipe(
          Stream.runForEach((event) =>
            event._tag === "TextDelta" ? Deferred.succeed(firstToken, undefined) : Effect.void
          ),
          Effect.fork
        )
        yield* Deferred.await(firstToken)
        expect(server.aborted()).toBe(0)
        yield* Fiber.interrupt(fiber)
        yield* Effect.promise(() => until(() => server.aborted() === 1, "the server to see the request closed"))
      })))

  it.scopedLive("check lists the models with the key; the window and vision are the configured ones", () =>
    withServer([], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(
          Effect.provide(clientLayer(configFor(server, { contextWindow: 200000 })))
        )
        expect(yield* client.check).toEqual({ answering: true, models: ["fake-model"], missing: false })
        expect(server.requests[0].headers.authorization).toBe(`Bearer ${KEY}`)
        expect(yield* client.contextWindow).toBe(200000)
        expect(yield* client.vision).toBe(true)
        expect(client.api).toBe("responses")
      })))

  it.scopedLive("check never fails when nothing answers", () =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(() => startFakeResponsesServer())
      yield* Effect.promise(() => server.close())
      const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server))))
      expect(yield* client.probe).toBe(false)
      expect(yield* client.models).toEqual([])
      expect(yield* client.contextWindow).toBe(128000)
    }))
})
