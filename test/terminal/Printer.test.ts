import { PassThrough } from "node:stream"

import { describe, expect, it } from "@effect/vitest"

import { ERASE_DOWN } from "../../src/terminal/LineDrawing"
import { makePrinter, rowsAt } from "../../src/terminal/TerminalIO"

/** A printer on a terminal whose width the test sets, and what it wrote since the last look. */
const printerOn = (rewraps: boolean) => {
  const out = new PassThrough()
  let written = ""
  out.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")))
  const size = { columns: 100 }
  const print = makePrinter(out, { live: true, columns: () => size.columns, rewraps })
  const taken = () => {
    const was = written
    written = ""
    return was
  }
  return { print, size, taken }
}

describe("the live block when the terminal is resized", () => {
  it("counts the rows a re-wrapping terminal now holds: a row wider than the new width takes several", () => {
    expect(rowsAt([90, 10, 99], 60)).toBe(5)
    expect(rowsAt([90, 10, 99], 100)).toBe(3)
    expect(rowsAt([50, 0], 100)).toBe(2)
  })

  it("erases the block as the terminal re-wrapped it, then draws it again at the new width from the lines' source", () => {
    const { print, size, taken } = printerOn(true)
    let calls = 0
    print.live(() => [`${"x".repeat(90)} ${++calls}`, "short"])
    expect(taken()).toBe(`${"x".repeat(90)} 1\nshort`)
    size.columns = 60
    print.resized()
    // 92 columns then 5: three rows now, the cursor on the last
    expect(taken()).toBe(`\r\u001b[2A${ERASE_DOWN}${"x".repeat(59)}\u001b[0m\nshort`)
    expect(calls).toBe(2)
  })

  it("on a terminal that cuts its rows (xterm), erases only the rows drawn", () => {
    const { print, size, taken } = printerOn(false)
    print.live(["y".repeat(90), "short"])
    taken()
    size.columns = 60
    print.resized()
    expect(taken()).toMatch(new RegExp(`^\\r\\u001b\\[1A${ERASE_DOWN.replace(/[[\\]/g, "\\$&")}y{59}`))
  })

  it("a line of wide characters, two columns each, that the terminal wrapped is erased with its second row", () => {
    const { print, size, taken } = printerOn(true)
    size.columns = 60
    print.live(["編".repeat(50)])
    taken()
    print.live(undefined)
    expect(taken()).toBe(`\r\u001b[1A${ERASE_DOWN}`)
  })
})
