import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"

import { Agent } from "../../src/agent/Agent"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeAnthropicServer, startFakeAnthropicServer } from "../support/FakeAnthropicServer"
import { type ConfigOverrides, coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

const KEY_ENV = "MM_TEST_ANTHROPIC_TURNS_KEY"
process.env[KEY_ENV] = "sk-ant-turns-0123456789"

describe("the turn loop over Anthropic Messages", () => {
  let server: FakeAnthropicServer
  beforeAll(async () => {
    server = await startFakeAnthropicServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides = {}) =>
    coreLayer(
      testConfig(server.url, {
        sessions: { enabled: true },
        ...overrides,
        model: { api: "anthropic", name: "claude-fake", apiKeyEnv: KEY_ENV, ...overrides.model }
      }),
      MemorySessionStore.layer(),
      scriptedApprover([])
    )
  const open = Effect.flatMap(Keeper, (k) => k.open(tempDir("mm-anthropic-"), { createFile: "later" }))

  it.live("a tool turn keeps the signed thinking with its message and gives it back on the next request", () =>
    Effect.gen(function*() {
      const conversation = yield* open
      server.push(
        {
          thinking: { text: "I should list the files.", signature: "sig-1" },
          toolUses: [{ id: "toolu_ls", name: "bash", input: { command: "echo listed" } }]
        },
        { text: "there is one file", usage: { input_tokens: 5, output_tokens: 4, cache_read_input_tokens: 900 } }
      )
      const before = server.messages().length
      const events = yield* runTurn(conversation, "list the files")
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished" })
      const [, second] = server.messages().slice(before).map((r) => r.body)
      const [, call, results] = second.messages
      expect(call.content[0]).toEqual({ type: "thinking", thinking: "I should list the files.", signature: "sig-1" })
      expect(call.content[1]).toMatchObject({ type: "tool_use", id: "toolu_ls", input: { command: "echo listed" } })
      expect(results.content[0]).toMatchObject({ type: "tool_result", tool_use_id: "toolu_ls" })
      expect(JSON.stringify(results.content[0].content)).toContain("listed")
      const session = yield* conversation.snapshot
      const asked = session.messages.find((m) => m.tool_calls !== undefined)
      expect(asked?.opaque).toEqual({
        api: "anthropic",
        model: "claude-fake",
        items: [{ type: "thinking", thinking: "I should list the files.", signature: "sig-1" }]
      })
      expect(asked?.reasoning).toBe("I should list the files.")
    }).pipe(Effect.provide(layer())))

  it.live("text that looks like a call written as text stays the answer: the API's calls are native", () =>
    Effect.gen(function*() {
      const conversation = yield* open
      const answer = "Write it as <tool_call>{\"name\": \"bash\"</tool_call> in your template."
      server.push({ text: "{\"name\": \"bash\", \"arguments\": {\"command\": \"ls\"}}" }, { text: answer })
      const before = server.messages().length
      const first = yield* runTurn(conversation, "show me a call as JSON")
      expect(first.flatMap((e) => e._tag === "ToolCallStarted" ? [e.name] : [])).toEqual([])
      const second = yield* runTurn(conversation, "and the Hermes way?")
      expect(second.flatMap((e) => e._tag === "TextDelta" ? [e.text] : []).join("")).toBe(answer)
      expect(second.flatMap((e) => e._tag === "Notice" ? [e.text] : [])).toEqual([])
      // one request per turn: nothing was taken for a call to run or to write again
      expect(server.messages().length - before).toBe(2)
      const session = yield* conversation.snapshot
      expect(session.errors).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.live("a prompt too long on turn 3 compacts the history once, says so, and the question is answered", () =>
    Effect.gen(function*() {
      const conversation = yield* open
      // two long questions: the history is what overflows, not mm's own prompt and tools
      for (let i = 1; i <= 2; i++) {
        server.push({ text: `answer ${i}` })
        yield* runTurn(conversation, `question ${i} ${"x".repeat(8000)}`)
      }
      const before = server.messages().length
      server.push(
        {
          kind: "error",
          status: 400,
          type: "invalid_request_error",
          message: "prompt is too long: 5200 tokens > 4096 maximum"
        },
        { text: "earlier: two greetings" },
        { text: "answer 3" }
      )
      const events = yield* runTurn(conversation, "question 3")
      expect(server.messages().length - before).toBe(3)
      expect(events.flatMap((e) => (e._tag === "Notice" ? [e.text] : []))).toEqual([
        "the request (5,200 tokens, over the server's window of 4,096) did not fit: history compacted — 2 older message(s) replaced by a summary — asking again"
      ])
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished" })
      const session = yield* conversation.snapshot
      expect(session.messages[1].summary).toBe(true)
      expect(session.messages.at(-1)).toEqual({ role: "assistant", content: "answer 3" })
      const retried = JSON.stringify(server.messages().at(-1)?.body.messages)
      expect(retried).not.toContain("question 1")
      expect(retried).toContain("earlier: two greetings")
      expect(retried).toContain("question 3")
    }).pipe(Effect.provide(layer({ compaction: { keepTurns: 1 } }))))

  it.live("a cancel mid-answer closes the request and keeps the partial answer", () =>
    Effect.gen(function*() {
      const conversation = yield* open
      server.push({ kind: "stall", text: "once upon a time" })
      const agent = yield* Agent
      const seen: Array<string> = []
      const abortedBefore = server.aborted()
      const fiber = yield* agent.turn(conversation, "tell me a story").pipe(
        Stream.runForEach((e) => Effect.sync(() => e._tag === "TextDelta" && seen.push(e.text))),
        Effect.fork
      )
      yield* Effect.promise(() => until(() => seen.length >= 1, "the first piece of the answer"))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => until(() => server.aborted() > abortedBefore, "the request closed"))
      const session = yield* conversation.snapshot
      expect(session.messages.slice(-2)).toEqual([
        { role: "user", content: "tell me a story" },
        { role: "assistant", content: "once upon a time" }
      ])
      expect(session.errors).toEqual([])
    }).pipe(Effect.provide(layer({ watchdogTimeout: 30 }))))
})
