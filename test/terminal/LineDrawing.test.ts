import { describe, expect, it } from "vitest"

import { ERASE_DOWN, layout, redrawing } from "../../src/terminal/LineDrawing"

describe("drawing the line", () => {
  it("never erases with a bare ESC[J from a row's start: on the top row tmux would copy the screen to its scrollback", () => {
    const drawn = redrawing(0, layout("> ", "abc", 3, 80))
    expect(drawn.startsWith(ERASE_DOWN)).toBe(true)
    expect(ERASE_DOWN).toBe("\r\u001b[K\u001b[C\u001b[J\r")
    expect(drawn).not.toContain("\r\u001b[J")
  })

  it("an emoji or a CJK character takes two columns, a combining accent none", () => {
    expect(layout("> ", "編集😀", 4, 80).cursorCol).toBe(2 + 6)
    expect(layout("> ", "cafe\u0301", 5, 80).cursorCol).toBe(2 + 4)
    // a wide line wraps by columns, not by characters
    expect(layout("> ", "編".repeat(10), 10, 10)).toMatchObject({ rows: 3, cursorRow: 2, cursorCol: 2 })
  })
})
