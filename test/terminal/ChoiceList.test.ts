import { describe, expect, it } from "@effect/vitest"

import { CHOICE_ROWS, choiceKey, choiceLines } from "../../src/terminal/ChoiceList"

describe("the list Esc Esc chooses from", () => {
  it("moves with the arrows within the list, chooses with Enter, gives up with Esc or Ctrl-C", () => {
    expect(choiceKey(3, 5, { name: "up" })).toEqual({ _tag: "Move", at: 2 })
    expect(choiceKey(0, 5, { name: "up" })).toEqual({ _tag: "Move", at: 0 })
    expect(choiceKey(4, 5, { name: "down" })).toEqual({ _tag: "Move", at: 4 })
    expect(choiceKey(1, 5, { name: "n", ctrl: true })).toEqual({ _tag: "Move", at: 2 })
    expect(choiceKey(3, 5, { name: "home" })).toEqual({ _tag: "Move", at: 0 })
    expect(choiceKey(0, 5, { name: "end" })).toEqual({ _tag: "Move", at: 4 })
    expect(choiceKey(2, 5, { name: "return" })).toEqual({ _tag: "Done", at: 2 })
    expect(choiceKey(2, 5, { name: "escape" })).toEqual({ _tag: "Done", at: undefined })
    expect(choiceKey(2, 5, { name: "c", ctrl: true })).toEqual({ _tag: "Done", at: undefined })
    expect(choiceKey(2, 5, { name: "x", sequence: "x" })).toEqual({ _tag: "Ignore" })
  })

  it("shows a window around the chosen line, marked, each line cut to the terminal's width", () => {
    const items = Array.from({ length: 30 }, (_, i) => `turn ${i + 1}  question ${i + 1}`)
    const lines = choiceLines("pick", items, 29, 80, (line) => `[${line}]`)
    expect(lines).toHaveLength(CHOICE_ROWS + 1)
    expect(lines[0]).toBe("pick")
    expect(lines.at(-1)).toBe("[› turn 30  question 30]")
    expect(lines[1]).toBe(`  turn ${31 - CHOICE_ROWS}  question ${31 - CHOICE_ROWS}`)
    expect(choiceLines("pick", ["x".repeat(200)], 0, 40)[1]).toHaveLength(39)
  })
})
