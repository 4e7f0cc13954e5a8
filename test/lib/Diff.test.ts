import { describe, expect, it } from "@effect/vitest"
import { createTwoFilesPatch } from "diff"

import { diffTexts, tooLargeSummary, unifiedDiff } from "../../src/lib/Diff"

const lineCounts = (before: string, after: string) => {
  const { added, removed } = diffTexts("f", before, after)
  return { added, removed }
}

describe("unifiedDiff", () => {
  it("shows a changed line with its context and numbered hunk header", () => {
    const before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\n"
    const after = "one\ntwo\nthree\nFOUR\nfive\nsix\nseven\n"
    expect(unifiedDiff("src/a.ts", before, after)).toBe(
      [
        "--- src/a.ts",
        "+++ src/a.ts",
        "@@ -1,7 +1,7 @@",
        " one",
        " two",
        " three",
        "-four",
        "+FOUR",
        " five",
        " six",
        " seven",
        ""
      ].join("\n")
    )
  })

  it("takes the number of context lines", () => {
    const before = "a\nb\nc\nd\ne\n"
    const after = "a\nb\nC\nd\ne\n"
    expect(unifiedDiff("f", before, after, 1)).toBe("--- f\n+++ f\n@@ -2,3 +2,3 @@\n b\n-c\n+C\n d\n")
  })

  it("splits distant changes into separate hunks", () => {
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`)
    const changed = [...lines]
    changed[1] = "changed 2"
    changed[27] = "changed 28"
    const diff = unifiedDiff("f", lines.join("\n") + "\n", changed.join("\n") + "\n")
    expect(diff.split("\n").filter((l) => l.startsWith("@@"))).toEqual(["@@ -1,5 +1,5 @@", "@@ -25,6 +25,6 @@"])
  })

  it("is empty when nothing changes", () => {
    expect(unifiedDiff("f", "same\n", "same\n")).toBe("")
  })

  it("diffs a new file against the empty text", () => {
    expect(unifiedDiff("new.txt", "", "x\ny\n")).toBe("--- new.txt\n+++ new.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n")
  })

  it("marks a missing final newline", () => {
    expect(unifiedDiff("f", "a\nb", "a\nb\n")).toContain("\\ No newline at end of file")
  })
})

describe("lineCounts", () => {
  it("counts added and removed lines", () => {
    expect(lineCounts("a\nb\nc\n", "a\nB\nc\nd\n")).toEqual({ added: 2, removed: 1 })
  })
  it("is zero for the same text", () => {
    expect(lineCounts("a\n", "a\n")).toEqual({ added: 0, removed: 0 })
  })
  it("counts a whole new file as added", () => {
    expect(lineCounts("", "1\n2\n3\n")).toEqual({ added: 3, removed: 0 })
  })
  it("counts a deleted file as removed", () => {
    expect(lineCounts("1\n2\n", "")).toEqual({ added: 0, removed: 2 })
  })
})

describe("diffTexts bounds", () => {
  const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} ${i}\n`).join("")

  it("gives up on a rewrite of every line, with counts from the lines both sides share", () => {
    const before = "head\n" + numbered(20_000, "old") + "tail\n"
    const after = "head\n" + numbered(25_000, "new") + "tail\n"
    const diff = diffTexts("big.txt", before, after)
    expect(diff).toEqual({
      diff: "",
      added: 25_000,
      removed: 20_000,
      beforeLines: 20_002,
      afterLines: 25_002,
      tooLarge: true
    })
    expect(tooLargeSummary(diff)).toBe("rewrites 25000 lines (20002 → 25002 lines); diff too large to show")
  })

  it("still diffs a small change in a large file", () => {
    const before = numbered(50_000, "line")
    const after = before.replace("line 25000\n", "changed\n")
    const diff = diffTexts("big.txt", before, after)
    expect(diff.tooLarge).toBe(false)
    expect([diff.added, diff.removed]).toEqual([1, 1])
    expect(diff.diff).toContain("@@ -24998,7 +24998,7 @@")
  })

  it("gives jsdiff's own diff, hunk numbers included, though it sets the shared start and end aside first", () => {
    const lines = Array.from({ length: 400 }, (_, i) => `line ${i}\n`)
    const edits: Array<(l: Array<string>) => Array<string>> = [
      (l) => ["new first\n", ...l],
      (l) => l.slice(1),
      (l) => [...l, "new last\n"],
      (l) => l.slice(0, -1),
      (l) => [...l.slice(0, 200), "inserted\n", ...l.slice(200)],
      (l) => [...l.slice(0, 2), "changed 2\n", ...l.slice(3, 397), "changed 397\n", ...l.slice(398)],
      (l) => [...l.slice(0, 100), ...l.slice(110)],
      (l) => [...l.slice(0, -1), "line 399"]
    ]
    for (const edit of edits) {
      const before = lines.join("")
      const after = edit([...lines]).join("")
      const expected = createTwoFilesPatch("f", "f", before, after, undefined, undefined, {
        context: 3,
        headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true }
      })
      expect(diffTexts("f", before, after).diff).toBe(expected)
      expect(diffTexts("f", after, before).diff).toBe(
        createTwoFilesPatch("f", "f", after, before, undefined, undefined, {
          context: 3,
          headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true }
        })
      )
    }
  })
})
