import { describe, expect, it } from "@effect/vitest"

import type { SessionSummary } from "../../src/sessions/SessionStore"
import { subAgentSuffix, underParents } from "../../src/text/SessionTree"

const row = (id: string, minute: number, parent?: string): SessionSummary => ({
  id,
  cwd: "/p",
  createdAt: new Date(Date.UTC(2026, 11, 1, 10, minute)).toISOString(),
  updatedAt: new Date(Date.UTC(2026, 11, 1, 10, minute)).toISOString(),
  title: id,
  turns: 1,
  errors: 0,
  ...(parent === undefined ? {} : { parent: { id: parent, turn: 1, callId: `call_${id}` } })
})

describe("sub-agents' sessions beside their parents", () => {
  it("puts each right under its parent, in the order they were run, and theirs under them", () => {
    // newest update first, as the listing sorts them
    const rows = [row("c2", 9, "p"), row("o", 8), row("g", 7, "c1"), row("c1", 5, "p"), row("p", 1)]
    expect(underParents(rows).map((r) => r.id)).toEqual(["o", "p", "c1", "g", "c2"])
  })

  it("leaves one whose parent is not listed where it was, and shows each of a loop once", () => {
    const orphan = [row("a", 3), row("x", 2, "gone"), row("b", 1)]
    expect(underParents(orphan).map((r) => r.id)).toEqual(["a", "x", "b"])
    const loop = [row("a", 3), row("l1", 2, "l2"), row("l2", 1, "l1")]
    expect(underParents(loop).map((r) => r.id)).toEqual(["a", "l1", "l2"])
  })

  it("says whose a sub-agent's row is", () => {
    expect(subAgentSuffix(row("c", 1, "p").parent)).toBe(" · ↳ sub-agent of p at turn 1")
    expect(subAgentSuffix(undefined)).toBe("")
  })
})
