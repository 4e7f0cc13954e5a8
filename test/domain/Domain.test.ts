import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { appendError, type ErrorRecord, titleOf, toWire, withSystem } from "../../src/domain/Session"
import { isSessionId, makeSessionId, newSessionId, validateSessionId } from "../../src/domain/SessionId"

describe("session ids", () => {
  it("are local time then eight hex digits", () => {
    const id = makeSessionId(new Date(2026, 8, 16, 10, 15, 30), new Uint8Array([0x4f, 0x2a, 0x9c, 0x1e]))
    expect(id).toBe("20260916-101530-4f2a9c1e")
    expect(isSessionId(newSessionId())).toBe(true)
  })

  it("sort by creation time and differ within one second", () => {
    const a = makeSessionId(new Date(2026, 0, 2, 3, 4, 5), new Uint8Array([255, 255, 255, 255]))
    const b = makeSessionId(new Date(2026, 0, 2, 3, 4, 6), new Uint8Array([0, 0, 0, 0]))
    expect([b, a].sort()).toEqual([a, b])
    const same = new Set(Array.from({ length: 1000 }, () => newSessionId(new Date(2026, 0, 1))))
    expect(same.size).toBeGreaterThan(990)
  })

  it.effect("from outside are checked before use", () =>
    Effect.gen(function*() {
      expect(yield* validateSessionId("20260916-101530-4f2a9c1e")).toBe("20260916-101530-4f2a9c1e")
      for (
        const bad of [
          "..",
          "../../etc/passwd",
          "/etc/passwd",
          "x".repeat(10_000),
          "20260916-101530-4f2a9c1\u0000",
          "20260916-101530-4F2A9C1E",
          "",
          "20260916-101530-4f2a9c1e.json",
          "20260916-101530-4f2a9c1e\n"
        ]
      ) {
        const error = yield* Effect.flip(validateSessionId(bad))
        expect(error._tag).toBe("BadSessionId")
        expect(error.message).not.toContain("\n")
        expect(error.message.length).toBeLessThan(120)
      }
      expect((yield* Effect.flip(validateSessionId(42)))._tag).toBe("BadSessionId")
    }))
})

describe("session model", () => {
  it("withSystem replaces the recorded system prompt, or puts one first", () => {
    const old = [
      { role: "system" as const, content: "old" },
      { role: "user" as const, content: "hi" }
    ]
    expect(withSystem(old, "new")).toEqual([{ role: "system", content: "new" }, { role: "user", content: "hi" }])
    expect(withSystem([{ role: "user", content: "hi" }], "new")).toEqual([{ role: "system", content: "new" }, {
      role: "user",
      content: "hi"
    }])
    expect(withSystem([], "new")).toEqual([{ role: "system", content: "new" }])
  })

  it("the title is the first line of the first question, at most 100 characters", () => {
    expect(titleOf("\n  add a /new command \nwith details")).toBe("add a /new command")
    expect(titleOf("x".repeat(150))).toHaveLength(100)
  })

  it("errors keep the newest 200", () => {
    let errors: ReadonlyArray<ErrorRecord> = []
    for (let i = 0; i < 250; i++) {
      errors = appendError(errors, { kind: "generation", at: "", turns: i, question: "q", line: `l${i}` })
    }
    expect(errors).toHaveLength(200)
    expect(errors[0].line).toBe("l50")
    expect(errors[199].line).toBe("l249")
  })

  it("mm's own marks never reach the server", () => {
    expect(toWire({ role: "tool", content: "x", tool_call_id: "1", failed: true })).toEqual({
      role: "tool",
      content: "x",
      tool_call_id: "1"
    })
    expect(toWire({ role: "user", content: "s", summary: true })).toEqual({ role: "user", content: "s" })
    expect(toWire({ role: "assistant", content: null, tool_calls: [] })).toEqual({ role: "assistant", content: null })
    const stored = {
      id: "c",
      type: "function" as const,
      function: { name: "bash", arguments: "{}", extra: 1 },
      at: "x"
    }
    expect(toWire({ role: "assistant", content: null, tool_calls: [stored], at: 5 } as any)).toEqual({
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c", type: "function", function: { name: "bash", arguments: "{}" } }]
    })
  })
})
