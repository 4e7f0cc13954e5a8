import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { Agent } from "../../src/agent/Agent"
import { splitHistory, SUMMARY_HEADER } from "../../src/agent/Compactor"
import type { Message } from "../../src/domain/Session"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { Keeper } from "../../src/sessions/Keeper"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { type ConfigOverrides, coreLayer, runTurn, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

const fileOf = (cwd: string, id: string) => path.join(cwd, ".mm/sessions", `${id}.json`)

describe("splitting the history", () => {
  const u = (content: string): Message => ({ role: "user", content })
  const a = (content: string): Message => ({ role: "assistant", content })
  const call: Message = {
    role: "assistant",
    content: null,
    tool_calls: [{ id: "t", type: "function", function: { name: "bash", arguments: "{}" } }]
  }
  const result: Message = { role: "tool", tool_call_id: "t", content: "out" }
  const system: Message = { role: "system", content: "s" }

  it("keeps the last turns whole, tool calls with their results", () => {
    const messages = [system, u("1"), a("1"), u("2"), call, result, a("2"), u("3"), a("3")]
    const split = splitHistory(messages, 2)
    expect(split.system).toEqual([system])
    expect(split.older).toEqual([u("1"), a("1")])
    expect(split.kept).toEqual([u("2"), call, result, a("2"), u("3"), a("3")])
    expect(splitHistory(messages, 0).kept).toEqual([])
    expect(splitHistory(messages, 5).older).toEqual([])
  })

  it("counts an earlier summary as part of the older history, not as a turn", () => {
    const summary: Message = { role: "user", content: "sum", summary: true }
    const split = splitHistory([system, summary, u("1"), a("1"), u("2"), a("2")], 1)
    expect(split.older).toEqual([summary, u("1"), a("1")])
  })
})

describe("compaction", () => {
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

  const sixTurns = (cwd: string) =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(cwd, { createFile: "later" }))
      for (let i = 1; i <= 6; i++) {
        if (i === 5) {
          server.push({ toolCalls: [{ id: "edge", name: "bash", arguments: { command: "echo edge" } }] }, {
            text: "answer 5"
          })
        } else {
          server.push({ text: `answer ${i}` })
        }
        yield* runTurn(conversation, `question ${i}`)
      }
      return conversation
    })

  it.live("/compact leaves system, summary and the last two turns, in memory and in the file", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-compact-")
      const conversation = yield* sixTurns(cwd)
      const agent = yield* Agent
      server.push({ text: "They asked six questions." })
      const report = yield* agent.compact(conversation, "keep the numbers")
      expect(report._tag).toBe("Compacted")
      const session = yield* conversation.snapshot
      expect(session.turns).toBe(6)
      expect(session.messages[0]).toEqual({ role: "system", content: expect.stringMatching(/^sys\n\n# Environment\n/) })
      expect(session.messages[1]).toEqual({
        role: "user",
        content: `${SUMMARY_HEADER}\n\nThey asked six questions.`,
        summary: true
      })
      expect(session.messages.slice(2).map((m) => m.content)).toEqual([
        "question 5",
        null,
        "exit code 0\nedge\n",
        "answer 5",
        "question 6",
        "answer 6"
      ])
      expect(session.messages[3].tool_calls?.[0].id).toBe("edge")
      expect(session.messages[4].tool_call_id).toBe("edge")
      const onDisk = JSON.parse(fs.readFileSync(fileOf(cwd, session.id), "utf8"))
      expect(JSON.stringify(onDisk.messages)).toBe(JSON.stringify(session.messages))
      expect(onDisk.turns).toBe(6)
      const request = server.completions().at(-1)!.body
      expect(request.tools).toBeUndefined()
      expect(request.messages.at(-1).content).toContain("question 1")
      expect(request.messages.at(-1).content).toContain("Focus: keep the numbers")
      expect(request.messages.at(-1).content).not.toContain("question 6")

      server.push({ text: "answer 7" })
      yield* runTurn(conversation, "question 7")
      const next = server.completions().at(-1)!.body.messages
      expect(next[1].content).toContain("They asked six questions.")
      expect(next[1].summary).toBeUndefined()
    }).pipe(Effect.provide(layer())))

  it.live("an empty summary leaves the file unchanged and adds one compaction record", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-compact-")
      const conversation = yield* sixTurns(cwd)
      const agent = yield* Agent
      const id = (yield* conversation.snapshot).id
      const before = JSON.parse(fs.readFileSync(fileOf(cwd, id), "utf8"))
      server.push({ text: "   " })
      const error = yield* Effect.flip(agent.compact(conversation))
      expect(error._tag).toBe("CompactionError")
      expect(error.message).toMatch(/empty summary/)
      const after = JSON.parse(fs.readFileSync(fileOf(cwd, id), "utf8"))
      expect(after.messages).toEqual(before.messages)
      expect(after.errors).toHaveLength(1)
      expect(after.errors[0]).toMatchObject({ kind: "compaction", question: "/compact", line: error.message, turns: 6 })

      server.push({ kind: "status", status: 500, body: { error: { message: "nope" } } })
      const failed = yield* Effect.flip(agent.compact(conversation))
      expect(failed.message).toMatch(/^compaction failed: model server answered HTTP 500: nope/)
      expect(JSON.parse(fs.readFileSync(fileOf(cwd, id), "utf8")).errors).toHaveLength(2)
    }).pipe(Effect.provide(layer())))

  it.live("automatic compaction starts when the history passes the threshold, and not before", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-compact-")
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(cwd, { createFile: "later" }))
      const long = "x".repeat(600)
      const asked: Array<number> = []
      for (let i = 1; i <= 4; i++) {
        server.push({ text: `${long} ${i}` })
        const before = server.completions().length
        const events = yield* runTurn(conversation, `q${i} ${long}`)
        asked.push(server.completions().length - before)
        // (a window of 1,000 is also too small to work in: that is said once, apart)
        if (i < 4) expect(events.some((e) => e._tag === "Notice" && e.about === "compaction")).toBe(false)
        if (i === 3) server.push({ text: "summary of q1" })
        if (i === 4) {
          const notice = events.find((e) => e._tag === "Notice")
          expect(notice?._tag === "Notice" ? notice.text : "").toMatch(
            /^history compacted: 2 older message\(s\) replaced by a summary/
          )
        }
      }
      expect(asked).toEqual([1, 1, 1, 2])
      const session = yield* conversation.snapshot
      expect(session.messages[1].summary).toBe(true)
      expect(session.messages.filter((m) => m.role === "user" && m.summary !== true).map((m) => m.content?.slice(0, 2)))
        .toEqual(["q2", "q3", "q4"])
    }).pipe(Effect.provide(layer({ model: { contextWindow: 1000 }, compaction: { threshold: 0.8, keepTurns: 2 } }))))

  it.live("a failed automatic compaction is reported and the turn still runs", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-compact-")
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open(cwd, { createFile: "later" }))
      const long = "y".repeat(2000)
      for (let i = 1; i <= 3; i++) {
        server.push({ text: "short" })
        yield* runTurn(conversation, `${i} ${long}`)
      }
      server.push({ text: "" }, { text: "still answered" })
      const events = yield* runTurn(conversation, "go on")
      expect(events.map((e) => e._tag)).toContain("CompactionFailed")
      expect(events.at(-1)?._tag).toBe("TurnFinished")
      const session = yield* conversation.snapshot
      expect(session.errors.map((e) => e.kind)).toEqual(["compaction"])
      expect(session.messages.at(-1)).toEqual({ role: "assistant", content: "still answered" })
    }).pipe(Effect.provide(layer({ model: { contextWindow: 1000 } }))))
})
