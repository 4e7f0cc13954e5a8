/**
 * What a model server sends is read in time linear in its size. Each input here is one that
 * took minutes before (work over all that was held, on every delta); each test asserts only
 * that the result is right: a quadratic reader would not finish within the test's timeout.
 */
import { describe, expect, it } from "@effect/vitest"

import { ThinkSplitter } from "../../src/model/Reasoning"

/** `text` cut in deltas of `size` characters. */
const deltas = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

const split = (pieces: ReadonlyArray<string>) => {
  const splitter = new ThinkSplitter()
  let text = ""
  let reasoning = ""
  for (const piece of [...pieces.map((p) => splitter.push(p)), splitter.end()]) {
    text += piece.text
    reasoning += piece.reasoning
  }
  return { text, reasoning }
}

describe("what a model server sends is read in time linear in its size", () => {
  it("an answer opening with 300,000 blank lines, one character a delta, and the think block after them", () => {
    const blanks = "\n".repeat(300_000)
    expect(split(deltas(`${blanks}The answer.`, 1))).toEqual({ text: `${blanks}The answer.`, reasoning: "" })
    expect(split(deltas(`${blanks}<think>plan</think>\n\nThe answer.`, 1))).toEqual({
      text: "The answer.",
      reasoning: "plan"
    })
    expect(split(deltas(blanks, 1))).toEqual({ text: blanks, reasoning: "" })
  })
})
