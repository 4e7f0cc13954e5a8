import { describe, expect, it } from "@effect/vitest"

import { describeDiff, type FileChange, type GroupOverview } from "../../src/changes/ChangeGroups"
import type { UndoReport } from "../../src/changes/UndoPlan"
import { changesListing, coloredDiff, NO_CHANGES, turnDiffsText, undoneLine } from "../../src/text/ChangesText"
import { plain, type Style } from "../../src/text/Style"

const file = (fields: Partial<FileChange>): FileChange => ({
  path: "src/a.ts",
  added: 2,
  removed: 1,
  created: false,
  deleted: false,
  diff: "",
  before: null,
  after: null,
  ...fields
})

const overview = (files: ReadonlyArray<FileChange>): GroupOverview => ({
  group: {
    kind: "turn",
    turn: 3,
    label: "turn 3",
    question: "fix the bug",
    at: "2026-11-30T10:00:00.000Z",
    entries: []
  },
  files
})

const report = (fields: Partial<UndoReport>): UndoReport => ({
  label: "turn 3",
  restored: [],
  deleted: [],
  left: [],
  note: undefined,
  warnings: [],
  ...fields
})

describe("the changes text", () => {
  it("says so when nothing changed, and lists each group with its files' counts and marks", () => {
    expect(changesListing([], plain)).toBe(NO_CHANGES)
    const lines = changesListing(
      [overview([file({}), file({ path: "b.txt", created: true }), file({ path: "c.bin", problem: "binary" })])],
      plain
    ).split("\n")
    expect(lines.slice(1)).toEqual([
      "turn 3  \"fix the bug\"",
      "  src/a.ts  +2 -1",
      "  b.txt  +2 -1  (created)",
      "  c.bin  +2 -1  (binary)"
    ])
  })

  it("colors a diff by line and cuts it at the given number of lines", () => {
    const tagged: Style = {
      ...plain,
      red: (s) => `R(${s})`,
      yellow: (s) => `Y(${s})`,
      dim: (s) => `D(${s})`
    }
    const text = coloredDiff("--- a\n+++ b\n@@ -1 +1 @@\n-old\n+new\n same\n", tagged, 5)
    expect(text.split("\n")).toEqual([
      "    D(--- a)",
      "    D(+++ b)",
      "    D(@@ -1 +1 @@)",
      "    R(-old)",
      "    Y(+new)",
      "    D(… 1 more line(s) of diff)"
    ])
  })

  it("says what an undo did, and whether the model is told", () => {
    expect(undoneLine(report({ restored: ["a.ts"], deleted: ["b.ts"], note: "[mm] …" }))).toBe(
      "↩️ undid turn 3: restored a.ts; deleted b.ts — the model is told"
    )
    expect(undoneLine(report({ left: [{ path: "a.ts", reason: "changed since mm wrote it" }] }))).toBe(
      "nothing undone of turn 3: left as they are: a.ts (changed since mm wrote it)"
    )
  })
})

describe("/changes of a rewrite too large to diff", () => {
  it("shows estimated counts and the line that sums it up, once", () => {
    const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join("")
    const before = Buffer.from(numbered(5000, "old"))
    const after = Buffer.from(numbered(5000, "new"))
    const described = describeDiff("big.txt", before, after)
    expect(described).toEqual({
      added: 5000,
      removed: 5000,
      diff: "rewrites 5000 lines (5000 → 5000 lines); diff too large to show",
      estimated: true
    })
    const shown = file({ path: "big.txt", ...described, before, after })
    expect(changesListing([overview([shown])], plain)).toContain("  big.txt  ~+5000 -5000")
    expect(turnDiffsText(overview([shown]), plain)).toBe(
      "turn 3  \"fix the bug\" — 1 file(s)\nbig.txt  ~+5000 -5000\n    rewrites 5000 lines (5000 → 5000 lines); diff too large to show"
    )
  })
})
