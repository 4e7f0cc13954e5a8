import { describe, expect, it } from "vitest"

import { graphemesOf, WINDOW } from "../../src/text/Graphemes"
import { displayWidth } from "../../src/text/Width"

const whole = new Intl.Segmenter(undefined, { granularity: "grapheme" })
const unwindowed = (text: string) => Array.from(whole.segment(text), (s) => s.segment)

/** Clusters that go wrong when cut: a family (ZWJ), a skin tone, flags, a keycap, marks, Hangul jamo, a conjunct, CRLF. */
const tricky = [
  "👨‍👩‍👧‍👦",
  "👍🏽",
  "🇫🇷🇩🇪",
  "🇩",
  "#️⃣",
  "e\u0301\u0302",
  "\u1100\u1161\u11a8",
  "क्ष",
  "\r\n",
  "日本",
  "😀",
  "\u200d",
  "x"
]

describe("grapheme clusters of a long text", () => {
  it("are those of the whole text segmented at once, whatever falls on a window's edge", () => {
    for (const [k, piece] of tricky.entries()) {
      // every offset of the tricky cluster around the first few window edges
      for (let shift = 0; shift < 12; shift++) {
        const filler = tricky[(k + shift) % tricky.length]
        let text = "é".repeat(WINDOW - 6 + shift)
        while (text.length < 4 * WINDOW) text += piece + filler.repeat(1 + (shift % 3)) + "ж"
        expect(graphemesOf(text)).toEqual(unwindowed(text))
      }
    }
    const mixed = Array.from({ length: 3000 }, (_, i) => tricky[(i * 7) % tricky.length]).join("")
    expect(graphemesOf(mixed)).toEqual(unwindowed(mixed))
    // one cluster longer than a window: a letter under thousands of marks
    const heavy = `a${"\u0301".repeat(3 * WINDOW)}b😀`
    expect(graphemesOf(heavy)).toEqual(unwindowed(heavy))
  })

  it("of a model's 100,000-character line ending in an emoji are found and measured without segmenting it whole", () => {
    // Node 20's segmenter alone took 21 s on this line
    const line = `${"x".repeat(100_000)}😀`
    const clusters = graphemesOf(line)
    expect(clusters.length).toBe(100_001)
    expect(clusters.at(-1)).toBe("😀")
    expect(displayWidth(line)).toBe(100_002)
    expect(displayWidth("日本".repeat(50_000))).toBe(200_000)
    expect(displayWidth("👍🏽é".repeat(30_000))).toBe(90_000)
  })
})
