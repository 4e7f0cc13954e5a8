import { describe, expect, it } from "@effect/vitest"

import type { ChangeRecord, Message, Session } from "../../src/domain/Session"
import {
  changesSince,
  cutProblem,
  forkOf,
  lastTurn,
  SHELL_CONTEXT_HEAD,
  turnStarts,
  withNumbering
} from "../../src/domain/Turns"
import { encodeSession, parseSession } from "../../src/sessions/SessionCodec"
import { sessionOf } from "../support/store-fixtures"

const hash = (n: number) => String(n).repeat(64).slice(0, 64)
const change = (turn: number, file: string, kind?: "undo"): ChangeRecord => ({
  turn,
  at: `2026-12-0${turn}T00:00:00.000Z`,
  path: file,
  before: hash(turn),
  after: hash(turn + 1),
  ...(kind === undefined ? {} : { kind })
})

const session = sessionOf

const turnsOf = (n: number): Array<Message> =>
  Array.from({ length: n }, (_, i) => [
    { role: "user" as const, content: `q${i + 1}` },
    { role: "assistant" as const, content: `a${i + 1}` }
  ]).flat()

describe("turns and forks", () => {
  it("count questions only: an undo's note, a summary and a !command are not turns", () => {
    const s = session([
      { role: "system", content: "sys" },
      { role: "user", content: "q1" },
      { role: "assistant", content: "a1" },
      { role: "user", content: `${SHELL_CONTEXT_HEAD}\n$ ls\nx` },
      { role: "user", content: "[mm] the user reverted …", note: true },
      { role: "user", content: "q2" },
      { role: "assistant", content: "a2" }
    ], { turns: 2 })
    expect(turnStarts(s).map((t) => [t.turn, t.question])).toEqual([[1, "q1"], [2, "q2"]])
    expect(lastTurn(s)).toBe(2)
  })

  it("numbers turns after a compaction's summary as they were, and refuses to cut inside it", () => {
    const s = session([
      { role: "system", content: "sys" },
      { role: "user", content: "Summary of the earlier part", summary: true },
      ...turnsOf(2).map((m) => ({ ...m, content: m.content!.replace(/\d/, (d) => String(Number(d) + 3)) }))
    ], { turns: 5 })
    expect(turnStarts(s).map((t) => [t.turn, t.question])).toEqual([[4, "q4"], [5, "q5"]])
    expect(cutProblem(s, 2)).toBe("turns 1–3 were compacted into a summary; pick a turn after 3")
    expect(cutProblem(s, 3)).toBeUndefined()
    expect(cutProblem(s, 6)).toBe("there is no turn 6 (last: 5)")
    expect(forkOf(s, 4, new Date(0)).messages.at(-1)).toEqual({ role: "assistant", content: "a4" })
  })

  it("a fork keeps the messages, changes and errors up to its turn, and says where it came from", () => {
    const original = session(turnsOf(4), {
      changes: [change(1, "a"), change(2, "b"), change(2, "a", "undo"), change(3, "a")],
      errors: [
        { kind: "generation", at: "x", turns: 1, question: "q2", line: "failed" },
        { kind: "generation", at: "x", turns: 2, question: "q3", line: "failed" }
      ],
      inProgress: { question: "q5", at: "x", start: 8 }
    } as Partial<Session>)
    const forked = forkOf(original, 2, new Date("2026-12-04T00:00:00.000Z"))
    expect(forked.messages.map((m) => m.content)).toEqual(["q1", "a1", "q2", "a2"])
    expect(forked).toMatchObject({ id: "", turns: 2, title: "q1", createdAt: "2026-12-04T00:00:00.000Z" })
    expect((forked as { forkedFrom?: unknown }).forkedFrom).toEqual({ id: original.id, turn: 2 })
    expect(forked.changes?.map((c) => [c.turn, c.path, c.kind])).toEqual([[1, "a", undefined], [2, "b", undefined], [
      2,
      "a",
      "undo"
    ]])
    expect(forked.errors.map((e) => e.question)).toEqual(["q2"])
    expect("inProgress" in forked).toBe(false)
    expect(original.messages).toHaveLength(8)
    expect("changes" in forkOf(original, 0, new Date(0))).toBe(false)
  })

  it("cuts the change log by the tool calls of the turns, so a cancelled turn kept in messages does not shift it", () => {
    const call = (id: string): Array<Message> => [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "write_file", arguments: "{}" } }]
      },
      { role: "tool", content: "ok", tool_call_id: id }
    ]
    // a file of an earlier mm: q2 was cancelled (kept, `turns` not counted), the retry's changes recorded as turn 2
    const s = session([
      { role: "user", content: "q1" },
      ...call("c1"),
      { role: "assistant", content: "a1" },
      { role: "user", content: "q2" },
      { role: "assistant", content: "half an ans" },
      { role: "user", content: "q2 again" },
      ...call("c2"),
      { role: "assistant", content: "a2" },
      { role: "user", content: "q3" },
      ...call("c3"),
      { role: "assistant", content: "a3" }
    ], {
      turns: 3,
      changes: [
        { ...change(1, "a"), tool_call_id: "c1" },
        { ...change(2, "b"), tool_call_id: "c2" },
        { ...change(3, "a"), tool_call_id: "c3" }
      ]
    })
    expect(turnStarts(s).map((t) => t.question)).toEqual(["q1", "q2", "q2 again", "q3"])
    expect(changesSince(s, 3)).toBe(1)
    expect(changesSince(s, 4)).toBe(2)
    expect(changesSince(s, 5)).toBe(3)
    expect(forkOf(s, 2, new Date(0)).changes?.map((c) => c.tool_call_id)).toEqual(["c1"])
  })

  describe("a file written before cancelled turns counted", () => {
    const call = (id: string): Array<Message> => [
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id, type: "function", function: { name: "write_file", arguments: "{}" } }]
      },
      { role: "tool", content: "ok", tool_call_id: id }
    ]
    // q2 cancelled (kept, not counted); q3 changed a file, recorded as turn 2; an undo after it
    // recorded 2 turns; a failed turn (its call gone from messages) recorded as turn 3; then q4
    const old = session([
      { role: "system", content: "s" },
      { role: "user", content: "q1" },
      ...call("c1"),
      { role: "assistant", content: "a1" },
      { role: "user", content: "q2" },
      { role: "assistant", content: "half an ans" },
      { role: "user", content: "q3" },
      ...call("c3"),
      { role: "assistant", content: "a3" },
      { role: "user", content: "[mm] undone: turn 2", note: true },
      { role: "user", content: "q4" },
      ...call("c4"),
      { role: "assistant", content: "a4" }
    ], {
      turns: 3,
      changes: [
        { ...change(1, "a"), tool_call_id: "c1" },
        { ...change(2, "b"), tool_call_id: "c3" },
        { ...change(2, "b", "undo") },
        { ...change(3, "c"), tool_call_id: "failed-call" },
        { ...change(3, "d"), tool_call_id: "c4" }
      ]
    })

    it("is numbered by the questions it holds when read, change records by the turn of their call", () => {
      const numbered = withNumbering(old)
      expect(numbered.turns).toBe(4)
      expect(lastTurn(numbered)).toBe(numbered.turns)
      expect(numbered.changes?.map((c) => [c.tool_call_id ?? c.kind, c.turn])).toEqual([
        ["c1", 1],
        ["c3", 3],
        // an undo has no call: it ran after turn 3, whose record comes before it
        ["undo", 3],
        // a call no longer held keeps its number
        ["failed-call", 3],
        ["c4", 4]
      ])
      // the same through the file: what parseSession gives back is numbered
      const read = parseSession(encodeSession(old), old.id)
      expect(read._tag === "Right" && read.right).toEqual(numbered)
    })

    it("is left as it is once numbered, as is a file mm writes now: reading it again changes nothing", () => {
      const numbered = withNumbering(old)
      expect(withNumbering(numbered)).toBe(numbered)
      const text = encodeSession(numbered)
      const read = parseSession(text, numbered.id)
      expect(read._tag === "Right" && encodeSession(read.right)).toBe(text)
    })

    it("leaves a record as it is when its call id is in two turns (a server numbering calls afresh)", () => {
      const twice = session([
        { role: "user", content: "q1" },
        ...call("call_0"),
        { role: "user", content: "q2" },
        ...call("call_0")
      ], {
        turns: 2,
        changes: [{ ...change(1, "a"), tool_call_id: "call_0" }, { ...change(2, "a"), tool_call_id: "call_0" }]
      })
      expect(withNumbering(twice)).toBe(twice)
    })

    it("never lowers `turns`, and leaves out a turn still in progress", () => {
      // a compacted file: turns 1–5 live in an archive, the summary stands for them
      const compacted = session([
        { role: "user", content: "summary of q1–q5", summary: true },
        { role: "user", content: "q6" },
        { role: "assistant", content: "a6" }
      ], { turns: 6 })
      expect(withNumbering(compacted)).toBe(compacted)
      expect(turnStarts(compacted).map((t) => t.turn)).toEqual([6])
      // killed while q2 was answered: its question is in messages, not yet in `turns`
      const running = session([
        { role: "user", content: "q1" },
        { role: "assistant", content: "a1" },
        { role: "user", content: "q2" }
      ], { turns: 1, inProgress: { question: "q2", at: "2026-12-03T10:20:00.000Z", start: 2 } })
      expect(withNumbering(running)).toBe(running)
      expect(lastTurn(running)).toBe(2)
    })
  })
})
