import { describe, expect, it } from "vitest"

import { emptySession, type Message, type Session } from "../../src/domain/Session"
import { closeInterrupted, NEVER_RAN, STOPPED_LINE } from "../../src/sessions/Interrupted"

const at = new Date("2026-09-16T10:00:00.000Z")
const before: Array<Message> = [
  { role: "system", content: "s" },
  { role: "user", content: "q1" },
  { role: "assistant", content: "a1" }
]
const call = (id: string) => ({ id, type: "function" as const, function: { name: "bash", arguments: "{}" } })

const marked = (messages: Array<Message>, question = "q2"): Session => ({
  ...emptySession("20260916-101530-4f2a9c1e", "/p", at),
  turns: 1,
  messages,
  inProgress: { question, at: at.toISOString(), start: before.length }
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
})
