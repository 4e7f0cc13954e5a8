import { describe, expect, it } from "vitest"

import { emptySession, type Message, type Session } from "../../src/domain/Session"
import {
  closedUnanswered,
  closeInterrupted,
  NEVER_RAN,
  STOPPED_LINE,
  STOPPED_WHILE_RUNNING,
  wasInterrupted
} from "../../src/sessions/Interrupted"

const at = new Date("2026-09-16T10:00:00.000Z")
const before: Array<Message> = [
  { role: "system", content: "s" },
  { role: "user", content: "q1" },
  { role: "assistant", content: "a1" }
]
const call = (id: string) => ({ id, type: "function" as const, function: { name: "bash", arguments: "{}" } })

const marked = (
  messages: Array<Message>,
  question = "q2",
  running?: { readonly id: string; readonly output: string }
): Session => ({
  ...emptySession("20260916-101530-4f2a9c1e", "/p", at),
  turns: 1,
  messages,
  inProgress: { question, at: at.toISOString(), start: before.length, ...(running === undefined ? {} : { running }) }
})

describe("closing a turn mm stopped during", () => {
  it("keeps completed calls and their question, closes a call that never ran, records one line", () => {
    const turn: Array<Message> = [
      { role: "user", content: "q2" },
      { role: "assistant", content: null, tool_calls: [call("c1"), call("c2")] },
      { role: "tool", tool_call_id: "c1", content: "ran" }
    ]
    const closed = closeInterrupted(marked([...before, ...turn]), at)
    expect(closed.question).toBe("q2")
    expect(closed.session.inProgress).toBeUndefined()
    expect(closed.session.messages).toEqual([
      ...before,
      turn[0],
      turn[1],
      { role: "tool", tool_call_id: "c2", content: NEVER_RAN, failed: true },
      turn[2]
    ])
    // the question stays: a turn held, counted; the record keeps the turns there were when it began
    expect(closed.session.turns).toBe(2)
    expect(closed.session.errors).toEqual([
      { kind: "generation", at: at.toISOString(), turns: 1, question: "q2", line: STOPPED_LINE }
    ])
  })

  it("takes the question out when no tool ran, as a failed turn does", () => {
    const closed = closeInterrupted(
      marked([...before, { role: "user", content: "q2\nsecond line" }], "q2\nsecond line"),
      at
    )
    expect(closed.session.messages).toEqual(before)
    expect(closed.session.turns).toBe(1)
    expect(closed.question).toBe("q2\nsecond line")
    expect(closed.session.errors[0].question).toBe("q2")
  })

  it("leaves a session without the marker as it is", () => {
    const session = { ...marked(before), inProgress: undefined }
    expect(closeInterrupted(session, at)).toEqual({ session, question: undefined })
  })

  it("closes the call that was running with what it printed so far, the next one as never run", () => {
    const turn: Array<Message> = [
      { role: "user", content: "q2" },
      { role: "assistant", content: null, tool_calls: [call("c1"), call("c2"), call("c3")] },
      { role: "tool", tool_call_id: "c1", content: "ran" }
    ]
    const closed = closeInterrupted(marked([...before, ...turn], "q2", { id: "c2", output: "line 1\nline 2" }), at)
    expect(closed.session.inProgress).toBeUndefined()
    expect(closed.session.messages).toEqual([
      ...before,
      turn[0],
      turn[1],
      { role: "tool", tool_call_id: "c2", content: `line 1\nline 2\n[${STOPPED_WHILE_RUNNING}]`, failed: true },
      { role: "tool", tool_call_id: "c3", content: NEVER_RAN, failed: true },
      turn[2]
    ])
    expect(closed.session.errors.map((e) => e.line)).toEqual([STOPPED_LINE])
  })

  it("keeps the question when the first call was running: it had started", () => {
    const turn: Array<Message> = [
      { role: "user", content: "q2" },
      { role: "assistant", content: null, tool_calls: [call("c1")] }
    ]
    const closed = closeInterrupted(marked([...before, ...turn], "q2", { id: "c1", output: "" }), at)
    expect(closed.session.messages).toEqual([
      ...before,
      ...turn,
      { role: "tool", tool_call_id: "c1", content: STOPPED_WHILE_RUNNING, failed: true }
    ])
    // output that ends its line gets no second line end before the note
    const printed = closeInterrupted(marked([...before, ...turn], "q2", { id: "c1", output: "…tail\n" }), at)
    expect(printed.session.messages.at(-1)?.content).toBe(`…tail\n[${STOPPED_WHILE_RUNNING}]`)
  })

  it("leaves a running mark alone when its call has a result, or is not in the turn", () => {
    const turn: Array<Message> = [
      { role: "user", content: "q2" },
      { role: "assistant", content: null, tool_calls: [call("c1")] },
      { role: "tool", tool_call_id: "c1", content: "done" }
    ]
    const finished = closeInterrupted(marked([...before, ...turn], "q2", { id: "c1", output: "partial" }), at)
    expect(finished.session.messages).toEqual([...before, ...turn])
    // a mark naming no call of the turn keeps nothing of it: the question leaves as when no tool ran
    const stray = closeInterrupted(marked([...before, turn[0]], "q2", { id: "c9", output: "x" }), at)
    expect(stray.session.messages).toEqual(before)
  })

  it("tells an interrupted session from a failed or an empty one, and one closed and left as it was", () => {
    const closed = closeInterrupted(marked([...before, { role: "user", content: "q2\nmore" }], "q2\nmore"), at).session
    expect(wasInterrupted(marked(before))).toBe(true)
    expect(wasInterrupted(closed)).toBe(true)
    expect(closedUnanswered(closed)).toBe("q2")
    // anything written since (a turn, a setting) means the last turn is no longer the one stopped
    expect(closedUnanswered({ ...closed, updatedAt: "2026-09-16T10:05:00.000Z" })).toBeUndefined()
    const failed: Session = {
      ...closed,
      errors: [...closed.errors, { ...closed.errors[0], line: "the model server did not answer" }]
    }
    expect(wasInterrupted(failed)).toBe(false)
    expect(closedUnanswered(failed)).toBeUndefined()
    expect(wasInterrupted(emptySession("20260916-101530-4f2a9c1e", "/p", at))).toBe(false)
  })
})
