import { describe, expect, it } from "@effect/vitest"

import type { ChangeRecord, Message, Session } from "../../src/domain/Session"
import {
  changesSince,
  cutProblem,
  forkOf,
  lastTurn,
  markFailed,
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

  it("a fork keeps the plan only when it was written in a turn the fork holds", () => {
    const plan = { turn: 3, entries: [{ content: "fix it", status: "in_progress" as const }] }
    const original = session(turnsOf(4), { plan } as Partial<Session>)
    expect(forkOf(original, 3, new Date(0)).plan).toEqual(plan)
    expect(forkOf(original, 4, new Date(0)).plan).toEqual(plan)
    expect("plan" in forkOf(original, 2, new Date(0))).toBe(false)
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
      expect(numbered.changes?.map((c) => c.failed)).toEqual([
        undefined,
        undefined,
        undefined,
        change(3, "c").at,
        undefined
      ])
      expect(numbered.changes?.map((c) => [c.tool_call_id ?? c.kind, c.turn])).toEqual([
        ["c1", 1],
        ["c3", 3],
        // an undo has no call: it ran after turn 3, whose record comes before it
        ["undo", 3],
        // a call in no message, between held ones: a failed question's, after turn 3 (the undo's)
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

    it("keeps a compacted file's `turns`, and leaves out a turn still in progress", () => {
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
      // saved as the question was sent, by an mm that marked the turn before adding its question
      const marked = session(turnsOf(2), { turns: 2, inProgress: { question: "q3", at: "x", start: 4 } })
      expect(withNumbering(marked)).toBe(marked)
    })
  })

  describe("a count no command numbers turns by (a file edited by hand)", () => {
    it("is the questions held when nothing was compacted, above or below them", () => {
      for (const turns of [1_000_000_000, 7, 0]) {
        const numbered = withNumbering(session(turnsOf(4), { turns }))
        expect(numbered.turns).toBe(4)
        expect(numbered.turns).toBe(lastTurn(numbered))
      }
    })

    it("stands for the archived turns of a compacted conversation, raised only to the turns held", () => {
      const compacted = (turns: number) =>
        session([{ role: "user", content: "summary", summary: true }, ...turnsOf(2)], { turns })
      expect(withNumbering(compacted(1_000_000_000)).turns).toBe(1_000_000_000)
      expect(withNumbering(compacted(1)).turns).toBe(2)
    })
  })
})

describe("a failed question's changes", () => {
  it("are marked when the turn fails: only its own calls' records, numbered by the turn before it", () => {
    const withCall = (record: ChangeRecord, id: string): ChangeRecord => ({ ...record, tool_call_id: id })
    const log = [
      withCall(change(1, "a"), "c1"),
      change(1, "a", "undo"),
      withCall(change(2, "b"), "c2"),
      withCall(change(2, "c"), "elsewhere")
    ]
    const added: Array<Message> = [
      { role: "user", content: "q2" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c2", type: "function", function: { name: "w", arguments: "{}" } }]
      }
    ]
    const marked = markFailed(log, added, 2, "2026-12-07T10:00:00.000Z")
    expect(marked.map((c) => [c.path, c.turn, c.failed])).toEqual([
      ["a", 1, undefined],
      ["a", 1, undefined],
      ["b", 1, "2026-12-07T10:00:00.000Z"],
      ["c", 2, undefined]
    ])
    // a record already marked is left as it is
    expect(markFailed(marked, added, 2, "later")).toEqual(marked)
  })

  const call = (id: string): Array<Message> => [
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id, type: "function", function: { name: "write_file", arguments: "{}" } }]
    },
    { role: "tool", content: "ok", tool_call_id: id }
  ]
  const record = (turn: number, file: string, id: string, question: string, at = "2026-12-07T10:00:00.000Z") => ({
    ...change(turn, file),
    at,
    tool_call_id: id,
    question
  })
  // as mm wrote it before the mark: q1 wrote a; "q2 fails" wrote x, then its next model request failed
  // (its call left messages, its record kept turns + 1); then "q3" wrote b
  const written = session([
    { role: "user", content: "q1" },
    ...call("c1"),
    { role: "assistant", content: "a1" },
    { role: "user", content: "q3" },
    ...call("c3"),
    { role: "assistant", content: "a3" }
  ], {
    turns: 2,
    changes: [
      record(1, "a", "c1", "q1"),
      record(2, "x", "cx", "q2 fails", "2026-12-07T10:01:00.000Z"),
      record(2, "b", "c3", "q3")
    ]
  })

  it("are found on read in a file written before they were marked: numbered by the turn they came after", () => {
    const numbered = withNumbering(written)
    expect(numbered.changes?.map((c) => [c.path, c.turn, c.failed])).toEqual([
      ["a", 1, undefined],
      ["x", 1, "2026-12-07T10:01:00.000Z"],
      ["b", 2, undefined]
    ])
    expect(numbered.turns).toBe(2)
    // marked once: reading it again changes nothing, through the file too
    expect(withNumbering(numbered)).toBe(numbered)
    const text = encodeSession(numbered)
    const read = parseSession(text, numbered.id)
    expect(read._tag === "Right" && encodeSession(read.right)).toBe(text)
  })

  it("belong before the next turn: a cut just before it keeps them, one before the turn they came after does not", () => {
    const numbered = withNumbering(written)
    expect(changesSince(numbered, 2)).toBe(2)
    expect(changesSince(numbered, 1)).toBe(0)
    expect(forkOf(numbered, 1, new Date(0)).changes?.map((c) => c.path)).toEqual(["a", "x"])
    // turn 1 changed nothing: the failed question's changes still come after turn 1 began
    const quiet = withNumbering({ ...written, changes: written.changes!.slice(1) })
    expect(quiet.changes?.map((c) => [c.path, c.turn, c.failed !== undefined])).toEqual([["x", 1, true], [
      "b",
      2,
      false
    ]])
    expect(changesSince(quiet, 1)).toBe(0)
    expect(changesSince(quiet, 2)).toBe(1)
  })

  it("are numbered 0 when the first question failed, and never after a turn whose record comes later", () => {
    const first = withNumbering({
      ...written,
      changes: [record(1, "x", "cx", "q0 fails"), record(1, "a", "c1", "q1"), record(2, "b", "c3", "q3")]
    })
    expect(first.changes?.map((c) => [c.path, c.turn, c.failed !== undefined])).toEqual([
      ["x", 0, true],
      ["a", 1, false],
      ["b", 2, false]
    ])
  })

  it("of one question share a mark; a question failed twice in a row with no change between looks like one", () => {
    const twice = withNumbering({
      ...written,
      changes: [
        record(1, "a", "c1", "q1"),
        record(2, "x", "cx", "q2 fails", "2026-12-07T10:01:00.000Z"),
        record(2, "y", "cy", "q2 fails", "2026-12-07T10:01:30.000Z"),
        record(2, "z", "cz", "another that fails", "2026-12-07T10:02:00.000Z"),
        record(2, "b", "c3", "q3")
      ]
    })
    expect(twice.changes?.map((c) => [c.path, c.failed])).toEqual([
      ["a", undefined],
      ["x", "2026-12-07T10:01:00.000Z"],
      ["y", "2026-12-07T10:01:00.000Z"],
      ["z", "2026-12-07T10:02:00.000Z"],
      ["b", undefined]
    ])
  })

  it("are found in a compacted file only after the first change whose call is held", () => {
    const compacted = session([
      { role: "user", content: "summary of q1–q3", summary: true },
      { role: "user", content: "q4" },
      ...call("c4"),
      { role: "user", content: "q6" },
      ...call("c6")
    ], {
      turns: 5,
      changes: [
        // a compacted turn's and a failed question's look the same here: left as they are
        record(2, "old", "c2", "q2"),
        record(4, "x", "cx", "q4b fails"),
        record(4, "a", "c4", "q4"),
        record(5, "y", "cy", "q5 fails"),
        record(5, "b", "c6", "q6")
      ]
    })
    const numbered = withNumbering(compacted)
    expect(numbered.changes?.map((c) => [c.path, c.turn, c.failed !== undefined])).toEqual([
      ["old", 2, false],
      ["x", 4, false],
      ["a", 4, false],
      ["y", 4, true],
      ["b", 5, false]
    ])
  })

  it("keep their mark and number once marked, even when a later turn gives their call's id again", () => {
    const marked = session([
      { role: "user", content: "q1" },
      ...call("call_0"),
      { role: "user", content: "q2" },
      ...call("call_0")
    ], {
      turns: 2,
      changes: [
        { ...record(1, "a", "call_0", "q1") },
        { ...record(1, "x", "call_0", "fails"), failed: "2026-12-07T10:01:00.000Z" },
        { ...record(2, "b", "call_0", "q2") }
      ]
    })
    expect(withNumbering(marked)).toBe(marked)
    // the id is held on both sides of turn 2's question: the numbers say where turn 2 begins
    expect(changesSince(marked, 2)).toBe(2)
  })

  it("an undo between turns is cut by its number even when the turn after made changes", () => {
    const s = session([
      { role: "user", content: "q1" },
      ...call("c1"),
      { role: "user", content: "q2" },
      { role: "user", content: "[mm] the user reverted the changes of turn 1: files a", note: true },
      { role: "user", content: "q3" },
      ...call("c3")
    ], {
      turns: 3,
      changes: [record(1, "a", "c1", "q1"), { ...change(2, "a", "undo") }, record(3, "b", "c3", "q3")]
    })
    expect(withNumbering(s)).toBe(s)
    // rewinding to before turn 2 takes the undo back too (it ran after turn 2 began)
    expect(changesSince(s, 2)).toBe(1)
    expect(changesSince(s, 3)).toBe(2)
  })
})
