import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { AppConfig, type LoadedConfig } from "../../../src/config/Config"
import { defaultConfig } from "../../../src/config/ConfigSchema"
import type { GenerationError } from "../../../src/domain/Errors"
import type { WireMessage } from "../../../src/domain/Session"
import { AnthropicAnswer } from "../../../src/model/anthropic/AnthropicAnswer"
import { contextOverflow } from "../../../src/model/Failures"
import { type ChatRequest, ModelClient, type ModelEvent } from "../../../src/model/ModelClient"
import {
  type AnthropicStep,
  type FakeAnthropicServer,
  startFakeAnthropicServer
} from "../../support/FakeAnthropicServer"
import { modelClientLayer, quickRetries, secretsLayer, serverCacheOff } from "../../support/layers"
import { until } from "../../support/until"

const KEY_ENV = "MM_TEST_ANTHROPIC_KEY"
process.env[KEY_ENV] = "sk-ant-test-key-0123456789"

type Model = LoadedConfig["config"]["model"]

const configFor = (
  server: { readonly url: string },
  model: Partial<Model> = {},
  watchdogTimeout = 5
): LoadedConfig => ({
  config: {
    ...defaultConfig(),
    watchdogTimeout,
    model: {
      ...defaultConfig().model,
      api: "anthropic",
      url: server.url,
      name: "claude-fake",
      apiKeyEnv: KEY_ENV,
      ...model
    }
  },
  file: undefined
})

const clientLayer = (config: LoadedConfig) =>
  modelClientLayer.pipe(
    Layer.provide(Layer.mergeAll(Layer.succeed(AppConfig, config), quickRetries, secretsLayer(), serverCacheOff))
  )

const withServer = <A, E, R>(
  steps: ReadonlyArray<AnthropicStep>,
  f: (server: FakeAnthropicServer) => Effect.Effect<A, E, R>
) =>
  Effect.flatMap(
    Effect.acquireRelease(
      Effect.promise(() => startFakeAnthropicServer({ steps })),
      (server) => Effect.promise(() => server.close())
    ),
    f
  )

const bash = {
  name: "bash",
  description: "run a command",
  parameters: { type: "object", properties: { command: { type: "string" } }, required: ["command"] }
}
const read = { name: "read", description: "read a file", parameters: { type: "object", properties: {} } }

const question: ChatRequest = {
  messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }],
  tools: [bash, read]
}

const collect = (config: LoadedConfig, request: ChatRequest = question) =>
  Effect.gen(function*() {
    const client = yield* ModelClient
    return Chunk.toReadonlyArray(yield* Stream.runCollect(client.stream(request)))
  }).pipe(Effect.provide(clientLayer(config)))

const failure = (config: LoadedConfig, request: ChatRequest = question) =>
  Effect.flip(collect(config, request)).pipe(
    Effect.tap((error: GenerationError) =>
      Effect.sync(() => {
        expect(error.message).not.toMatch(/[\r\n]/)
        expect(error.message).not.toContain(process.env[KEY_ENV])
        expect(error.raw).not.toContain(process.env[KEY_ENV])
      })
    )
  )

const completed = (events: ReadonlyArray<ModelEvent>) => {
  const last = events.at(-1)
  if (last?._tag !== "Completed") throw new Error(`expected Completed last, got ${JSON.stringify(last)}`)
  return last
}

const cacheMarks = (body: any): Array<string> => {
  const marks: Array<string> = []
  for (const block of body.system ?? []) if (block.cache_control !== undefined) marks.push("system")
  for (const tool of body.tools ?? []) if (tool.cache_control !== undefined) marks.push(`tool ${tool.name}`)
  for (const [i, message] of body.messages.entries()) {
    for (const block of message.content) if (block.cache_control !== undefined) marks.push(`message ${i} ${block.type}`)
  }
  return marks
}

describe("AnthropicClient: the request", () => {
  it.scopedLive("sends the system apart, the tools with input_schema, the key and version, max_tokens and stream", () =>
    withServer([{ text: "hi" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server))
        const [sent] = server.messages()
        expect(sent.headers["x-api-key"]).toBe(process.env[KEY_ENV])
        expect(sent.headers["anthropic-version"]).toBe("2023-06-01")
        expect(sent.headers.authorization).toBeUndefined()
        expect(sent.body).toMatchObject({
          model: "claude-fake",
          max_tokens: 8192,
          stream: true,
          system: [{ type: "text", text: "be brief", cache_control: { type: "ephemeral" } }],
          messages: [{ role: "user", content: [{ type: "text", text: "hello" }] }]
        })
        expect(sent.body.tools.map((t: any) => Object.keys(t).sort())).toEqual([
          ["description", "input_schema", "name"],
          ["cache_control", "description", "input_schema", "name"]
        ])
        expect(sent.body.tools[0].input_schema).toEqual(bash.parameters)
        expect(sent.body.thinking).toBeUndefined()
      })))

  it.scopedLive("tool calls become tool_use blocks, consecutive tool results one user message, images base64", () =>
    withServer([{ text: "done" }], (server) =>
      Effect.gen(function*() {
        const messages: ReadonlyArray<WireMessage> = [
          { role: "system", content: "sys" },
          {
            role: "user",
            content: [{ type: "text", text: "what is this?" }, {
              type: "image_url",
              image_url: { url: "data:image/png;base64,iVBORw0KGgo=" }
            }]
          },
          {
            role: "assistant",
            content: "let me look",
            tool_calls: [
              { id: "toolu_1", type: "function", function: { name: "bash", arguments: "{\"command\":\"ls\"}" } },
              { id: "toolu_2", type: "function", function: { name: "read", arguments: "" } }
            ]
          },
          { role: "tool", tool_call_id: "toolu_1", content: "a.txt" },
          { role: "tool", tool_call_id: "toolu_2", content: "" }
        ]
        yield* collect(configFor(server, { temperature: 0.2, maxTokens: 1000 }), { messages, tools: [] })
        const body = server.messages()[0].body
        expect(body.temperature).toBe(0.2)
        expect(body.max_tokens).toBe(1000)
        expect(body.tools).toBeUndefined()
        expect(body.messages.map((m: any) => m.role)).toEqual(["user", "assistant", "user"])
        expect(body.messages[0].content[1]).toEqual({
          type: "image",
          source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" }
        })
        expect(body.messages[1].content).toEqual([
          { type: "text", text: "let me look" },
          { type: "tool_use", id: "toolu_1", name: "bash", input: { command: "ls" } },
          { type: "tool_use", id: "toolu_2", name: "read", input: {} }
        ])
        expect(body.messages[2].content.map((b: any) => [b.type, b.tool_use_id])).toEqual([
          ["tool_result", "toolu_1"],
          ["tool_result", "toolu_2"]
        ])
        expect(body.messages[2].content[0].content).toEqual([{ type: "text", text: "a.txt" }])
      })))

  it.scopedLive("cache breakpoints: system, last tool, the end of the previous turn and the end of the request", () =>
    withServer([{ text: "second" }], (server) =>
      Effect.gen(function*() {
        const messages: ReadonlyArray<WireMessage> = [
          { role: "system", content: "sys" },
          { role: "user", content: "first question" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "toolu_1", type: "function", function: { name: "bash", arguments: "{}" } }]
          },
          { role: "tool", tool_call_id: "toolu_1", content: "out" },
          { role: "assistant", content: "first answer" },
          { role: "user", content: "second question" }
        ]
        yield* collect(configFor(server), { messages, tools: [bash, read] })
        const body = server.messages()[0].body
        expect(cacheMarks(body)).toEqual(["system", "tool read", "message 3 text", "message 4 text"])
        expect(body.messages[3].content).toEqual([
          { type: "text", text: "first answer", cache_control: { type: "ephemeral" } }
        ])
      })))

  it.scopedLive("with model.thinking: the budget, max_tokens above it, no temperature", () =>
    withServer([{ text: "a" }, { text: "b" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server, { thinking: "medium", temperature: 0.5 }))
        yield* collect(configFor(server, { thinking: 4000, maxTokens: 3000 }))
        const [medium, tight] = server.messages().map((r) => r.body)
        expect(medium.thinking).toEqual({ type: "enabled", budget_tokens: 8192 })
        expect(medium.max_tokens).toBeGreaterThan(8192)
        expect(medium.temperature).toBeUndefined()
        expect(tight.thinking.budget_tokens).toBeLessThan(tight.max_tokens)
        expect(tight.thinking.budget_tokens).toBeGreaterThanOrEqual(1024)
      })))

  it.scopedLive("a tool loop begun without this model's signed thinking goes on without thinking until the next question", () =>
    withServer([{ text: "a" }, { text: "b" }], (server) =>
      Effect.gen(function*() {
        const call = { id: "call_1", type: "function" as const, function: { name: "bash", arguments: "{}" } }
        // the turn's first answer came from chat completions: no thinking to give back
        const resumed: ReadonlyArray<WireMessage> = [
          { role: "user", content: "list the files" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", tool_call_id: "call_1", content: "a.txt" }
        ]
        yield* collect(configFor(server, { thinking: "medium" }), { messages: resumed, tools: [bash] })
        yield* collect(configFor(server, { thinking: "medium" }), {
          messages: [...resumed, { role: "assistant", content: "one file" }, { role: "user", content: "thanks" }],
          tools: [bash]
        })
        const [inLoop, next] = server.messages().map((r) => r.body)
        expect(inLoop.thinking).toBeUndefined()
        expect(inLoop.max_tokens).toBeGreaterThan(0)
        expect(next.thinking).toEqual({ type: "enabled", budget_tokens: 8192 })
      })))

  it.scopedLive("model.extraBody is merged and request.model overrides the configured name", () =>
    withServer([{ text: "a" }], (server) =>
      Effect.gen(function*() {
        yield* collect(configFor(server, { extraBody: { metadata: { user_id: "u1" } } }), {
          ...question,
          model: "claude-other"
        })
        expect(server.messages()[0].body).toMatchObject({ model: "claude-other", metadata: { user_id: "u1" } })
      })))
})

describe("AnthropicClient: the answer", () => {
  it.scopedLive("streams text deltas, then one Completed with usage counting cache reads and writes", () =>
    withServer([{
      text: ["Hel", "lo"],
      usage: { input_tokens: 20, output_tokens: 7, cache_read_input_tokens: 3000, cache_creation_input_tokens: 100 }
    }], (server) =>
      Effect.gen(function*() {
        const events = yield* collect(configFor(server))
        expect(events.filter((e) => e._tag === "TextDelta").map((e) => (e as { text: string }).text)).toEqual([
          "Hel",
          "lo"
        ])
        const done = completed(events)
        expect(done).toMatchObject({ content: "Hello", finishReason: "stop", toolCalls: [] })
        expect(done.usage).toEqual({
          promptTokens: 3120,
          completionTokens: 7,
          cachedTokens: 3000,
          cacheWriteTokens: 100
        })
        expect(done.opaque).toBeUndefined()
      })))

  it.scopedLive("tool_use blocks become tool calls with their JSON input, stop reason tool_calls", () =>
    withServer([{
      text: "checking",
      toolUses: [{ name: "bash", input: { command: "ls -la" }, id: "toolu_a" }, { name: "read", input: {} }]
    }], (server) =>
      Effect.gen(function*() {
        const done = completed(yield* collect(configFor(server)))
        expect(done.finishReason).toBe("tool_calls")
        expect(done.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)])).toEqual([
          ["bash", { command: "ls -la" }],
          ["read", {}]
        ])
        expect(done.toolCalls[0].id).toBe("toolu_a")
      })))

  it.scopedLive("thinking streams as reasoning; its blocks come back opaque with their signatures", () =>
    withServer([{
      thinking: { text: "Let me think about this.", signature: "sig-abc" },
      redactedThinking: "ENCRYPTED",
      text: "42"
    }], (server) =>
      Effect.gen(function*() {
        const events = yield* collect(configFor(server, { thinking: "low" }))
        const thought = events.flatMap((e) => (e._tag === "ReasoningDelta" ? [e.text] : [])).join("")
        expect(thought).toBe("Let me think about this.")
        const done = completed(events)
        expect(done.reasoning).toBe("Let me think about this.")
        expect(done.content).toBe("42")
        expect(done.opaque).toEqual({
          api: "anthropic",
          model: "claude-fake",
          items: [
            { type: "thinking", thinking: "Let me think about this.", signature: "sig-abc" },
            { type: "redacted_thinking", data: "ENCRYPTED" }
          ]
        })
      })))

  it.scopedLive("signed thinking goes back first to the same model only; another API's or model's is dropped", () =>
    withServer([{ text: "a" }], (server) =>
      Effect.gen(function*() {
        const thinking = { type: "thinking", thinking: "hmm", signature: "sig" }
        const call = { id: "toolu_1", type: "function" as const, function: { name: "bash", arguments: "{}" } }
        const messages: ReadonlyArray<WireMessage> = [
          { role: "user", content: "q1" },
          { role: "assistant", content: "a1", opaque: { api: "anthropic", model: "claude-old", items: [thinking] } },
          { role: "user", content: "q2" },
          { role: "assistant", content: "a2", opaque: { api: "responses", model: "claude-fake", items: [thinking] } },
          { role: "user", content: "q3" },
          {
            role: "assistant",
            content: null,
            tool_calls: [call],
            opaque: { api: "anthropic", model: "claude-fake", items: [thinking] }
          },
          { role: "tool", tool_call_id: "toolu_1", content: "out" }
        ]
        yield* collect(configFor(server), { messages, tools: [] })
        const sent = server.messages()[0].body.messages
        expect(sent[1].content.map((b: any) => b.type)).toEqual(["text"])
        expect(sent[3].content.map((b: any) => b.type)).toEqual(["text"])
        expect(sent[5].content[0]).toEqual(thinking)
        expect(sent[5].content.map((b: any) => b.type)).toEqual(["thinking", "tool_use"])
      })))

  it.scopedLive("stop reasons in mm's words: max_tokens is length, refusal is content_filter", () =>
    withServer([{ text: "cut", stopReason: "max_tokens" }, { text: "no", stopReason: "refusal" }, {
      text: "x",
      stopReason: "stop_sequence"
    }], (server) =>
      Effect.gen(function*() {
        const config = configFor(server)
        expect(completed(yield* collect(config)).finishReason).toBe("length")
        expect(completed(yield* collect(config)).finishReason).toBe("content_filter")
        expect(completed(yield* collect(config)).finishReason).toBe("stop")
      })))
})

describe("AnthropicClient: failures", () => {
  it.scopedLive("429 with retry-after is asked again after saying so", () =>
    withServer([
      { kind: "error", status: 429, type: "rate_limit_error", message: "slow down", headers: { "retry-after": "0" } },
      { text: "ok" }
    ], (server) =>
      Effect.gen(function*() {
        const events = yield* collect(configFor(server))
        expect(events[0]).toEqual({ _tag: "Retrying", text: "server busy (429) — retrying in 0 s" })
        expect(completed(events).content).toBe("ok")
        expect(server.messages()).toHaveLength(2)
      })))

  it.scopedLive("529 overloaded is retried, and said in one line when it lasts", () =>
    withServer(
      Array.from({ length: 4 }, () => ({
        kind: "error" as const,
        status: 529,
        type: "overloaded_error",
        message: "Overloaded"
      })),
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(server.messages()).toHaveLength(4)
          expect(error.message).toBe("the Anthropic API is overloaded (HTTP 529): Overloaded")
          expect(error.raw.split("\n").filter((line) => line.startsWith("attempt"))).toHaveLength(4)
        })
    ))

  it.scopedLive("401 names model.apiKeyEnv and never shows the key", () =>
    withServer(
      [{ kind: "error", status: 401, type: "authentication_error", message: "invalid x-api-key" }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(error.message).toBe(
            `the Anthropic API refused the key (HTTP 401: invalid x-api-key) — check the key in $${KEY_ENV} (model.apiKeyEnv)`
          )
          expect(server.messages()).toHaveLength(1)
        })
    ))

  it.scopedLive("an unset key variable fails before any request", () =>
    withServer([], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, { apiKeyEnv: "MM_TEST_UNSET_ANTHROPIC_KEY" }))
        expect(error.message).toContain("MM_TEST_UNSET_ANTHROPIC_KEY")
        expect(server.messages()).toHaveLength(0)
      })))

  it.scopedLive("404: the model is named", () =>
    withServer(
      [{ kind: "error", status: 404, type: "not_found_error", message: "model: claude-nope" }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server, { name: "claude-nope" }))
          expect(error.reason).toBe("model-not-found")
          expect(error.message).toContain("\"claude-nope\"")
        })
    ))

  it.scopedLive("a prompt too long is mm's context overflow, with the numbers the turn reads", () =>
    withServer([{
      kind: "error",
      status: 400,
      type: "invalid_request_error",
      message: "prompt is too long: 215000 tokens > 200000 maximum"
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.reason).toBe("context-overflow")
        expect(error.message).toBe("the request is 215,000 tokens; the model's window is 200,000")
        expect(contextOverflow(error.raw)).toEqual({ prompt: 215000, window: 200000 })
        expect(server.messages()).toHaveLength(1)
      })))

  it.scopedLive("a prompt that leaves no room for max_tokens is an overflow too, its window what the answer leaves", () =>
    withServer([{
      kind: "error",
      status: 400,
      type: "invalid_request_error",
      message:
        "input length and `max_tokens` exceed context limit: 188240 + 24576 > 200000, decrease input length or `max_tokens` and try again"
    }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server))
        expect(error.reason).toBe("context-overflow")
        expect(error.message).toBe("the request is 188,240 tokens; the model's window is 175,424")
        expect(contextOverflow(error.raw)).toEqual({ prompt: 188240, window: 175424 })
      })))

  it.scopedLive("an error event mid-answer is one line with the API's words", () =>
    withServer(
      [{ kind: "error-event", text: "partial", type: "overloaded_error", message: "Overloaded" }],
      (server) =>
        Effect.gen(function*() {
          const error = yield* failure(configFor(server))
          expect(error.message).toBe("the Anthropic API reported an error mid-answer (overloaded_error): Overloaded")
        })
    ))

  it.scopedLive("the watchdog gives up a stalled answer", () =>
    withServer([{ kind: "stall", text: "and then" }], (server) =>
      Effect.gen(function*() {
        const error = yield* failure(configFor(server, {}, 0.3))
        expect(error.reason).toBe("watchdog")
      })))
})

describe("AnthropicClient: cancel and the server's questions", () => {
  it.scopedLive("interrupting the consumer mid-answer closes the request", () =>
    withServer([{ kind: "stall", text: "thinking about it" }], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server, {}, 30))))
        const first = yield* Deferred.make<void>()
        const fiber = yield* client.stream(question).pipe(
          Stream.runForEach((event) => event._tag === "TextDelta" ? Deferred.succeed(first, undefined) : Effect.void),
          Effect.fork
        )
        yield* Deferred.await(first)
        expect(server.aborted()).toBe(0)
        yield* Fiber.interrupt(fiber)
        yield* Effect.promise(() => until(() => server.aborted() === 1, "the request closed"))
      })))

  it.scopedLive("check lists the models with the key; the window is 200,000 unless written; it sees images", () =>
    withServer([], (server) =>
      Effect.gen(function*() {
        const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server))))
        expect(yield* client.check).toMatchObject({ answering: true, models: ["claude-fake-20250101"], missing: false })
        expect(server.requests.at(-1)?.headers["x-api-key"]).toBe(process.env[KEY_ENV])
        expect(yield* client.probe).toBe(true)
        expect(yield* client.contextWindow).toBe(200_000)
        expect(yield* client.vision).toBe(true)
        expect(client.api).toBe("anthropic")
        const small = yield* ModelClient.pipe(
          Effect.provide(clientLayer(configFor(server, { contextWindow: 50_000, vision: false })))
        )
        expect(yield* small.contextWindow).toBe(50_000)
        expect(yield* small.vision).toBe(false)
      })))

  it.scopedLive("probe is false when nothing answers", () =>
    Effect.gen(function*() {
      const server = yield* Effect.promise(() => startFakeAnthropicServer())
      yield* Effect.promise(() => server.close())
      const client = yield* ModelClient.pipe(Effect.provide(clientLayer(configFor(server))))
      expect(yield* client.probe).toBe(false)
      expect(yield* client.models).toEqual([])
    }))
})

describe("AnthropicAnswer (pure)", () => {
  const feed = (answer: AnthropicAnswer, events: ReadonlyArray<object>) => {
    for (const event of events) answer.absorb(JSON.stringify(event), (event as { type: string }).type)
  }

  it("a tool call whose input max_tokens cut is the output limit, named", () => {
    const answer = new AnthropicAnswer("claude-fake")
    feed(answer, [
      { type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 1 } } },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "t", name: "write_file", input: {} }
      },
      { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: "{\"path\": \"a" } },
      { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 100 } }
    ])
    const done = answer.complete()
    expect(done).toMatchObject({ reason: "output-limit" })
    expect((done as GenerationError).message).toContain("\"write_file\"")
  })

  it("a complete tool call before one that max_tokens cut runs; the cut one is left out with its line", () => {
    const answer = new AnthropicAnswer("claude-fake")
    feed(answer, [
      { type: "message_start", message: { usage: { input_tokens: 10, output_tokens: 1 } } },
      { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "t1", name: "bash", input: {} } },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: "{\"command\": \"ls\"}" }
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: "t2", name: "write_file", input: {} }
      },
      { type: "content_block_delta", index: 1, delta: { type: "input_json_delta", partial_json: "{\"path\": \"a" } },
      { type: "message_delta", delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 100 } }
    ])
    const done = answer.complete()
    expect(done).toMatchObject({
      _tag: "Completed",
      finishReason: "length",
      toolCalls: [{ id: "t1", function: { name: "bash", arguments: "{\"command\": \"ls\"}" } }],
      cutCalls: [{ name: "write_file" }]
    })
  })

  it("a whole message sent as one JSON body is read like the stream", () => {
    const answer = new AnthropicAnswer("claude-fake")
    const text = answer.absorb(
      JSON.stringify({
        type: "message",
        content: [
          { type: "thinking", thinking: "hm", signature: "s" },
          { type: "text", text: "hi" },
          { type: "tool_use", id: "t1", name: "bash", input: { command: "ls" } }
        ],
        stop_reason: "tool_use",
        usage: { input_tokens: 3, output_tokens: 2 }
      }),
      "message"
    )
    expect(text).toBe("hi")
    expect(answer.finished).toBe(true)
    expect(answer.complete()).toMatchObject({
      content: "hi",
      reasoning: "hm",
      finishReason: "tool_calls",
      toolCalls: [{ id: "t1", function: { name: "bash", arguments: "{\"command\":\"ls\"}" } }],
      opaque: { api: "anthropic", items: [{ type: "thinking", thinking: "hm", signature: "s" }] },
      usage: { promptTokens: 3, completionTokens: 2 }
    })
  })
})
