import { describe, expect, it } from "vitest"

import { approvalModes, modeLine, nextMode } from "../../src/approvals/SessionSettings"
import { initialLineState, step } from "../../src/terminal/LineState"

describe("Shift-Tab", () => {
  it("is an action of its own, not Tab's completion, and leaves the line as it is", () => {
    const state = { ...initialLineState, prompt: "> ", text: "np", cursor: 2 }
    // ESC [ Z, as readline names it
    const shiftTab = step(
      state,
      { key: { name: "tab", shift: true, sequence: "\u001b[Z" }, typed: undefined, now: 0 },
      []
    )
    expect(shiftTab).toEqual({ state, effects: [{ _tag: "NextMode" }] })
    const tab = step(state, { key: { name: "tab", sequence: "\t" }, typed: "\t", now: 0 }, [])
    expect(tab.effects).toEqual([{ _tag: "Complete", before: "np" }])
  })

  it("cycles through approvalModes, back to the first, and names each mode", () => {
    let mode = approvalModes[0]
    const seen = [mode]
    for (let i = 0; i < approvalModes.length; i++) seen.push(mode = nextMode(mode))
    expect(seen).toEqual([...approvalModes, approvalModes[0]])
    expect(modeLine("edits")).toBe(
      "permission mode: edits — file edits inside the project go ahead; commands and the rest are asked (Shift-Tab: next)"
    )
  })
})
