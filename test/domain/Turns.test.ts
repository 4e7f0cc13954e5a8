import { describe, expect, it } from "@effect/vitest"

import type { ChangeRecord, Message, Session } from "../../src/domain/Session"
import { changesSince, cutProblem, forkOf, lastTurn, SHELL_CONTEXT_HEAD, turnStarts } from "../../src/domain/Turns"
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
    // q2 was cancelled (kept, `turns` not counted): the retry's changes are recorded as turn 2
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
})
