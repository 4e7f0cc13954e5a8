import { describe, expect, it } from "@effect/vitest"

import { mainContent } from "../../src/tools/WebLibs"

describe("a page's main content", () => {
  it("is what lies inside <main>, else <article>, else the whole page", () => {
    expect(mainContent("<nav>x</nav><MAIN class=\"a\"><p>in</p></main><footer/>")).toBe("<p>in</p>")
    expect(mainContent("<mainly>no</mainly><article><p>a</p></article>")).toBe("<p>a</p>")
    expect(mainContent("<p>all</p>")).toBe("<p>all</p>")
  })

  it("is found in a hostile page of unclosed tags (a regular expression took hours on 5 MB)", () => {
    const hostile = "<main ".repeat(800_000)
    expect(mainContent(hostile)).toBe(hostile)
    expect(mainContent(`${"<main\t".repeat(100_000)}>x</main>`)).toBe("x")
  })
})
