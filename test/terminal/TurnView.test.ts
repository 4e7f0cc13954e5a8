import { describe, expect, it } from "@effect/vitest"

import type { PlanEntry } from "../../src/domain/Plan"
import { livePlan } from "../../src/terminal/TurnView"
import { plain } from "../../src/text/Style"

const plan = (done: number, total: number): ReadonlyArray<PlanEntry> =>
  Array.from({ length: total }, (_, i) => ({
    content: `step ${i + 1}`,
    status: i < done ? "completed" : i === done ? "in_progress" : "pending"
  }))

describe("the plan drawn above the status line", () => {
  it("is the whole checklist when it is short", () => {
    expect(livePlan(plain, plan(1, 3))).toEqual(["  ☒ step 1", "  ◼ step 2", "  ☐ step 3"])
  })

  it("is ten lines at most for a long plan, from just before its first open step", () => {
    expect(livePlan(plain, plan(6, 20))).toEqual([
      "  … 4 before",
      "  ☒ step 5",
      "  ☒ step 6",
      "  ◼ step 7",
      "  ☐ step 8",
      "  ☐ step 9",
      "  ☐ step 10",
      "  ☐ step 11",
      "  ☐ step 12",
      "  … 8 more"
    ])
    expect(livePlan(plain, plan(0, 12)).slice(-2)).toEqual(["  ☐ step 8", "  … 4 more"])
    expect(livePlan(plain, plan(12, 12))[0]).toBe("  … 4 before")
    expect(livePlan(plain, plan(12, 12))).toHaveLength(9)
  })
})
