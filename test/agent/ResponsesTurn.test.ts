import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Stream from "effect/Stream"

import { Agent } from "../../src/agent/Agent"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeResponsesServer, startFakeResponsesServer } from "../support/FakeResponsesServer"
import { type ConfigOverrides, coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

const KEY_ENV = "MM_TURN_RESPONSES_KEY"

/** OpenAI's refusal of a request over the model's window. */
const overflow = {
  kind: "status" as const,
  status: 400,
  body: {
    error: {
      message: "Your input exceeds the context window of this model. Please adjust your input and try again.",
      type: "invalid_request_error",
      param: "input",
      code: "context_length_exceeded"
    }
  }
}

describe("the turn loop over the Responses API", () => {
  let server: FakeResponsesServer
  beforeAll(async () => {
    process.env[KEY_ENV] = "sk-turn-responses-0123456789"
    server = await startFakeResponsesServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides = {}) =>
    coreLayer(
      testConfig(server.url, {
        sessions: { enabled: true },
        ...overrides,
        model: { api: "responses", apiKeyEnv: KEY_ENV, contextWindow: 8000, ...overrides.model }
      }),
      MemorySessionStore.layer(),
      scriptedApprover([])
    )

  const open = (cwd: string) => Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))

  it.live("context_length_exceeded on turn 3 compacts the history once, says so, and the question is answered", () =>
    Effect.gen(function*() {
      const conversation = yield* open(tempDir("mm-responses-"))
      server.push(
        { reasoning: { summary: ["thinking 1"], encrypted: "ENC-1" }, text: "answer 1" },
        { text: "answer 2" }
      )
      yield* runTurn(conversation, "question 1")
      yield* runTurn(conversation, "question 2")
      // before the compaction, the first answer's reasoning went back with it
      expect(JSON.stringify(server.posts().at(-1)?.body.input)).toContain("ENC-1")
      const before = server.posts().length
      server.push(overflow, { text: "the first turn, summed up" }, { text: "answer 3" })
      const events = yield* runTurn(conversation, "question 3")
      expect(server.posts().length - before).toBe(3)
      expect(events.flatMap((e) => (e._tag === "Notice" ? [e.text] : []))).toEqual([
        "the request (over the server's window of 8,000) did not fit: history compacted — 2 older message(s) replaced by a summary — asking again"
      ])
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished", stopReason: "end_turn" })
      const session = yield* conversation.snapshot
      expect(session.messages[1].summary).toBe(true)
      expect(session.messages.at(-1)).toEqual({ role: "assistant", content: "answer 3" })
      expect(session.errors).toEqual([])
      // the request asked again carries the summary, not the first turn nor its reasoning
      const retried = JSON.stringify(server.posts().at(-1)?.body.input)
      expect(retried).toContain("the first turn, summed up")
      expect(retried).not.toContain("question 1")
      expect(retried).not.toContain("ENC-1")
    }).pipe(Effect.provide(layer({ compaction: { keepTurns: 1 } }))))

  it.live("a cancel mid-answer closes the request and keeps the partial answer", () =>
    Effect.gen(function*() {
      const agent = yield* Agent
      const conversation = yield* open(tempDir("mm-responses-"))
      const abortedBefore = server.aborted()
      server.push({ kind: "stall", text: "partial answer" })
      const seen: Array<string> = []
      const fiber = yield* agent.turn(conversation, "tell me a story").pipe(
        Stream.runForEach((e) => Effect.sync(() => e._tag === "TextDelta" && seen.push(e.text))),
        Effect.fork
      )
      yield* Effect.promise(() => until(() => seen.length >= 1, "the first piece of the answer"))
      yield* Fiber.interrupt(fiber)
      yield* Effect.promise(() => until(() => server.aborted() > abortedBefore, "the request to be closed"))
      const session = yield* conversation.snapshot
      expect(session.messages.slice(1)).toEqual([
        { role: "user", content: "tell me a story" },
        { role: "assistant", content: "partial answer" }
      ])
      expect(session.errors).toEqual([])
    }).pipe(Effect.provide(layer({ watchdogTimeout: 30 }))))
})
