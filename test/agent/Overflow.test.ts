import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import type { TurnEvent } from "../../src/agent/TurnEvent"
import { overflowLine, overThresholdLine, tooSmallLine } from "../../src/agent/WindowFit"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { Keeper } from "../../src/sessions/Keeper"
import { type FakeModelServer, llamaOverflow, startFakeModelServer } from "../support/FakeModelServer"
import { type ConfigOverrides, coreLayer, runTurn, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

// A request over the server's window, as a real llama-server refuses it, on the turn it comes:
// compacted once and asked again, or one line that says what is too large.

const noticesOf = (events: ReadonlyArray<TurnEvent>): Array<string> =>
  events.flatMap((e) => (e._tag === "Notice" ? [e.text] : []))

const failureOf = (events: ReadonlyArray<TurnEvent>): string => {
  const last = events.at(-1)
  return last?._tag === "TurnFailed" ? last.error.message : JSON.stringify(events)
}

/** About 1,500 tokens of answer: two turns of them make a conversation of a 4k window. */
const LONG_ANSWER = "word ".repeat(1200)

describe("a request over the server's window", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides = {}) =>
    coreLayer(
      testConfig(server.url, { sessions: { enabled: true }, system: "sys", ...overrides }),
      FileSessionStore.layer
    )

  /** A conversation of `turns` turns, each answered at length. */
  const conversationOf = (turns: number) =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-overflow-"), { createFile: "later" })
      )
      for (let i = 1; i <= turns; i++) {
        server.push({ text: `${LONG_ANSWER}${i}` })
        yield* runTurn(conversation, `question ${i}`)
      }
      return conversation
    })

  it.live("on turn 3, with fewer turns than keepTurns, the whole history is compacted and the question answered", () =>
    Effect.gen(function*() {
      const conversation = yield* conversationOf(2)
      const before = server.completions().length
      server.push(llamaOverflow(4858, 4096), { text: "summary of questions 1 and 2" }, { text: "answer 3" })
      const events = yield* runTurn(conversation, "question 3")
      expect(server.completions().length - before).toBe(3)
      expect(noticesOf(events)).toEqual([
        "the request (4,858 tokens, over the server's window of 4,096) did not fit: history compacted — 4 older message(s) replaced by a summary — asking again"
      ])
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished", stopReason: "end_turn" })
      // the summariser read both turns, not the question being answered
      const summarised = server.completions()[before + 1].body.messages.at(-1).content as string
      expect(summarised).toContain("question 1")
      expect(summarised).toContain("question 2")
      expect(summarised).not.toContain("question 3")
      // asked again with the summary, then the question: nothing else of the history
      const retried = server.completions().at(-1)!.body.messages as Array<{ role: string; content: string }>
      expect(retried.map((m) => m.role)).toEqual(["system", "user", "user"])
      expect(retried[1].content).toContain("summary of questions 1 and 2")
      expect(retried[2].content).toBe("question 3")
      const session = yield* conversation.snapshot
      expect(session.messages.map((m) => m.content?.slice(0, 12))).toEqual([
        expect.any(String),
        "Summary of t",
        "question 3",
        "answer 3"
      ])
      expect(session.errors).toEqual([])
      expect(session.inProgress).toBeUndefined()
    }).pipe(Effect.provide(layer())))

  it.live("a history larger than the window is summarised from its start and its end, within the window", () =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(
        Keeper,
        (k) => k.open(tempDir("mm-overflow-"), { createFile: "later" })
      )
      for (let i = 1; i <= 2; i++) {
        server.push({ text: `${"word ".repeat(6000)}end of answer ${i}` })
        yield* runTurn(conversation, `question ${i}`)
      }
      const before = server.completions().length
      server.push(llamaOverflow(16000, 4096), { text: "summary" }, { text: "answer 3" })
      const events = yield* runTurn(conversation, "question 3")
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished" })
      const summarised = server.completions()[before + 1].body.messages.at(-1).content as string
      expect(summarised.length).toBeLessThan(4 * 4096)
      expect(summarised).toContain("question 1")
      expect(summarised).toContain("end of answer 2")
      expect(summarised).toMatch(/\[… \d+ characters of the conversation left out here …\]/)
    }).pipe(Effect.provide(layer({ model: { contextWindow: 4096 }, compaction: { auto: false } }))))

  it.live("keepTurns is kept when older turns are there to compact and the kept ones fit", () =>
    Effect.gen(function*() {
      const conversation = yield* conversationOf(2)
      const before = server.completions().length
      server.push(llamaOverflow(4858, 4096), { text: "summary of question 1" }, { text: "answer 3" })
      const events = yield* runTurn(conversation, "question 3")
      expect(server.completions().length - before).toBe(3)
      expect(noticesOf(events)).toEqual([expect.stringMatching(/— 2 older message\(s\) replaced by a summary —/)])
      const retried = server.completions().at(-1)!.body.messages as Array<{ content: string }>
      expect(retried.map((m) => m.content.slice(0, 10))).toEqual([
        expect.any(String),
        "Summary of",
        "question 2",
        `${LONG_ANSWER.slice(0, 10)}`,
        "question 3"
      ])
    }).pipe(Effect.provide(layer({ compaction: { keepTurns: 1 } }))))

  it.live("still over after compaction: the conversation's size in one line, and no third request", () =>
    Effect.gen(function*() {
      const conversation = yield* conversationOf(2)
      const before = server.completions().length
      // a summary as long as the turns it replaces
      server.push(llamaOverflow(4858, 4096), { text: LONG_ANSWER.repeat(2) }, llamaOverflow(4300, 4096))
      const events = yield* runTurn(conversation, "question 3")
      expect(server.completions().length - before).toBe(3)
      expect(failureOf(events)).toBe(
        "this conversation is 4,300 tokens; the server takes 4,096 — /compact, /new, or a larger window (llama-server -c)"
      )
      const session = yield* conversation.snapshot
      expect(session.errors.map((e) => e.line)).toEqual([failureOf(events)])
    }).pipe(Effect.provide(layer())))

  it.live("a question over the window alone is said to be, without a compaction that cannot help", () =>
    Effect.gen(function*() {
      const conversation = yield* conversationOf(1)
      const before = server.completions().length
      server.push(llamaOverflow(6200, 4096))
      const events = yield* runTurn(conversation, "x".repeat(19000))
      expect(server.completions().length - before).toBe(1)
      expect(failureOf(events)).toMatch(
        /^the question alone is about 4,\d{3} tokens \(about \d,\d{3} with mm's system prompt and tools\); the server takes 4,096 — shorten it, or a larger window \(llama-server -c\)$/
      )
    }).pipe(Effect.provide(layer())))

  it.live("on the first turn, the question's line carries the server's count", () =>
    Effect.gen(function*() {
      const conversation = yield* conversationOf(0)
      server.push(llamaOverflow(4858, 4096))
      const events = yield* runTurn(conversation, "x".repeat(19000))
      expect(failureOf(events)).toMatch(
        /^the question alone is about \d,\d{3} tokens \(4,858 with mm's system prompt and tools\); the server takes 4,096 — /
      )
      expect((yield* conversation.snapshot).messages.filter((m) => m.role === "user")).toEqual([])
    }).pipe(Effect.provide(layer())))

  it.live("when mm's own system prompt and tools do not fit, that is what is said", () =>
    Effect.gen(function*() {
      const conversation = yield* conversationOf(0)
      const before = server.completions().length
      server.push(llamaOverflow(1207, 512))
      const events = yield* runTurn(conversation, "hello there")
      expect(server.completions().length - before).toBe(1)
      expect(failureOf(events)).toMatch(
        /^mm's own system prompt and tools are about 1,\d{3} tokens; the server takes 512 — start it with a larger window \(llama-server -c\)$/
      )
      expect(failureOf(events)).not.toMatch(/question/)
    }).pipe(Effect.provide(layer())))
})

describe("a window too small to work in", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides) =>
    coreLayer(testConfig(server.url, { system: "sys", ...overrides }), FileSessionStore.layer)

  const tooSmall =
    /^the server's window of 1,500 tokens is too small to work in: mm's system prompt and tools take about [\d,]+ of it, leaving little room for the conversation and the answers — start the server with a larger window \(llama-server -c\)$/

  it.live("is said once, before the first answer", () =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(tempDir("mm-small-"), { createFile: "later" }))
      server.push({ text: "answer 1" }, { text: "answer 2" })
      const first = yield* runTurn(conversation, "question 1")
      const second = yield* runTurn(conversation, "question 2")
      expect(noticesOf(first)).toEqual([expect.stringMatching(tooSmall)])
      expect(first.findIndex((e) => e._tag === "Notice")).toBeLessThan(first.findIndex((e) => e._tag === "TextDelta"))
      expect(noticesOf(second)).toEqual([])
    }).pipe(Effect.provide(layer({ model: { contextWindow: 1500 } }))))

  it.live("is not said of a window with room", () =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(tempDir("mm-small-"), { createFile: "later" }))
      server.push({ text: "answer 1" })
      expect(noticesOf(yield* runTurn(conversation, "question 1"))).toEqual([])
    }).pipe(Effect.provide(layer({ model: { contextWindow: 4096 } }))))

  it.live("compaction that cannot bring the conversation under the threshold says so once, not every turn", () =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(tempDir("mm-small-"), { createFile: "later" }))
      // what a llama-server at -c 2048 counts: mm's prompt and tools are most of each request
      const counted = { prompt_tokens: 1700, completion_tokens: 40 }
      for (let i = 1; i <= 3; i++) {
        server.push({ text: `answer ${i}`, usage: counted })
        yield* runTurn(conversation, `question ${i}`)
      }
      server.push({ text: "summary of question 1" }, { text: "answer 4", usage: counted })
      const fourth = yield* runTurn(conversation, "question 4")
      server.push({ text: "summary of questions 1 and 2" }, { text: "answer 5", usage: counted })
      const fifth = yield* runTurn(conversation, "question 5")
      const over =
        /^compaction cannot bring this conversation under 1,638 tokens \(compaction.threshold\): it is still about 1,\d{3} of the server's 2,048, about 1,\d{3} of them mm's system prompt and tools, so answers have little room — \/new, or a larger window \(llama-server -c\)$/
      expect(noticesOf(fourth)).toEqual([
        expect.stringMatching(/^history compacted: 2 older message\(s\) replaced by a summary/),
        expect.stringMatching(over)
      ])
      expect(noticesOf(fifth)).toEqual([expect.stringMatching(/^history compacted: /)])
      expect(fifth.at(-1)).toMatchObject({ _tag: "TurnFinished" })
    }).pipe(Effect.provide(layer({ model: { contextWindow: 2048 }, compaction: { threshold: 0.8 } }))))
})

describe("the advice in the lines about the window", () => {
  const shares = { fixed: 1000, history: 3500, question: 10, turn: 0, total: 4510, scale: 1, counted: true }

  it("names llama-server's -c for a local server, a larger model for a hosted API", () => {
    expect(overflowLine(shares, 4096)).toBe(
      "this conversation is 4,510 tokens; the server takes 4,096 — /compact, /new, or a larger window (llama-server -c)"
    )
    expect(overflowLine(shares, 4096, "anthropic")).toBe(
      "this conversation is 4,510 tokens; the server takes 4,096 — /compact, /new, or a model with a larger window"
    )
    expect(tooSmallLine(1500, 2048, 0, "responses")).toMatch(/— use a model with a larger window$/)
    expect(overThresholdLine(1750, 1200, 1638, 2048, "anthropic")).toMatch(/— \/new, or a model with a larger window$/)
    expect(tooSmallLine(1500, 2048)).toMatch(/— start the server with a larger window \(llama-server -c\)$/)
  })
})
