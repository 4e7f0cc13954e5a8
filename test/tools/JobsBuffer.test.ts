// A job's output between two reads: bounded in bytes, the oldest dropped first and counted,
// never a character cut in half; its last lines kept apart whatever was read.
import { describe, expect, it } from "@effect/vitest"

import { makeJobBuffer, TAIL_BYTES } from "../../src/tools/JobBuffer"

describe("a job's output buffer", () => {
  it("gives what came since the last take, once", () => {
    const buffer = makeJobBuffer(100)
    buffer.push("one\n")
    expect(buffer.take()).toEqual({ text: "one\n", dropped: 0 })
    buffer.push("two\n")
    expect(buffer.take()).toEqual({ text: "two\n", dropped: 0 })
    expect(buffer.take()).toEqual({ text: "", dropped: 0 })
    expect(buffer.tail()).toBe("one\ntwo\n")
  })

  it("keeps the newest bytes, counts the dropped ones, and never splits a character", () => {
    const buffer = makeJobBuffer(6)
    buffer.push("aaaa\n")
    buffer.push("ééé\n") // 7 bytes: 12 in all; the last 6 start inside the first é
    expect(buffer.take()).toEqual({ text: "éé\n", dropped: 7 })
    buffer.push("é") // the count starts again after a take
    expect(buffer.take()).toEqual({ text: "é", dropped: 0 })
  })

  it("keeps the end of everything printed for the listing and the session file", () => {
    const buffer = makeJobBuffer(1 << 20)
    buffer.push("x".repeat(TAIL_BYTES))
    buffer.push("last line\n")
    buffer.take()
    expect(buffer.tail().endsWith("last line\n")).toBe(true)
    expect(buffer.tail()).toHaveLength(TAIL_BYTES)
  })
})
