import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"
import { Screen } from "../../support/Screen"

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
const text = (content: string) => chunk({ content })
const row = (name: string) => `| ${name} | ${"a long description of the part ".repeat(2)}and more |\n`
const RAW_ROW = /\|\s*\S.*\|/
/** A terminal that re-wraps its rows on a resize, whatever runs the tests. */
const REWRAPS = { XTERM_VERSION: undefined, TMUX: undefined }

/** Where a terminal, resized at `at` (a position in mm's output) to `columns`, leaves everything. */
const screenOf = (
  out: string,
  at: number,
  columns: { readonly before: number; readonly after: number },
  rewraps = true
) => {
  const screen = new Screen(columns.before, 30, { rewraps })
  screen.play(out.slice(0, at))
  screen.resize(columns.after)
  screen.play(out.slice(at))
  return screen.lines
}

describe("a terminal resized while mm draws", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  /** A table streams at 100 columns, the terminal goes to 60 between its rows: what it leaves, top to bottom. */
  const tableResized = async (env: Record<string, string | undefined>, rewraps: boolean) => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    server.push({
      kind: "raw",
      chunks: [
        text("Parts:\n\n| name | what |\n| --- | --- |\n"),
        text(row("alpha")),
        text(row("beta")),
        gate,
        text(row("gamma")),
        text("\nThat is all.\n"),
        chunk({}, "stop"),
        "data: [DONE]\n\n"
      ]
    })
    const mm = new PtyMm(tempProject(configFor(server.url)), env, [], { columns: 100, rows: 30 })
    await mm.waitFor(/> /)
    mm.type("parts?\r")
    // the rows so far, raw in the live block under the answer
    await mm.waitForText(/\| beta \| a long/)
    const at = mm.resize(60, 30)
    // drawn again at the new width, at once
    await mm.waitForText(/\| beta \| a long/, at)
    release()
    await mm.waitForText(/That is all\.[^]*> /, at)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    return screenOf(mm.out, at, { before: 100, after: 60 }, rewraps)
  }

  const expectTableAt60 = (lines: ReadonlyArray<string>) => {
    expect(lines.filter((line) => RAW_ROW.test(line))).toEqual([])
    const table = lines.filter((line) => /^[┌│├└]/.test(line))
    expect(table.length).toBeGreaterThan(6)
    for (const line of table) expect(line).toMatch(/^(┌.*┐|│.*│|├.*┤|└.*┘)$/)
    for (const line of table) expect(line.length).toBeLessThan(60)
    expect(lines.filter((line) => line.includes("parts?"))).toHaveLength(1)
    expect(lines).toContain("Parts:")
  }

  it("from 100 to 60 columns while a table streams: the table is drawn at 60, no raw row is left", async () => {
    expectTableAt60(await tableResized(REWRAPS, true))
  })

  it("the same on a terminal that cuts its rows rather than re-wrapping them (xterm): nothing above is erased", async () => {
    expectTableAt60(await tableResized({ XTERM_VERSION: "XTerm(390)", TMUX: undefined }, false))
  })

  it("from 100 to 60 columns with a long line at the prompt: the line is drawn again at 60, once", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), REWRAPS, [], { columns: 100, rows: 30 })
    await mm.waitFor(/> /)
    const typed = `${"word ".repeat(16)}end`
    mm.type(typed)
    await mm.waitForText(/word end\r*$/)
    const at = mm.resize(60, 30)
    // the line drawn again at 60 first: keys sent at once could reach mm before its SIGWINCH
    // does (on a loaded machine), and be drawn at the width it still knows
    await mm.waitForText(/word end\r*$/, at)
    mm.type(" more")
    await mm.waitForText(/ more\r*$/, at)
    const lines = screenOf(mm.out, at, { before: 100, after: 60 })
    mm.type("\x03\x04")
    expect(await mm.exit()).toBe(0)
    // the terminal wraps the line it is given: 60 columns, then the rest
    const line = `> ${typed} more`
    expect(lines.filter((shown) => shown.includes("word"))).toEqual([line.slice(0, 60), line.slice(60).trimEnd()])
  })

  it("from 100 to 30 columns while the status line counts: it is drawn again at 30 and leaves nothing behind", async () => {
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    server.push({ kind: "raw", chunks: [gate, text("hello there\n"), chunk({}, "stop"), "data: [DONE]\n\n"] })
    const mm = new PtyMm(tempProject(configFor(server.url)), REWRAPS, [], { columns: 100, rows: 30 })
    await mm.waitFor(/> /)
    mm.type("hi\r")
    await mm.waitForText(/waiting for fake-model · 0 s · Esc to cancel/)
    const at = mm.resize(30, 30)
    await mm.waitForText(/waiting for fake-model/, at)
    release()
    await mm.waitForText(/hello there[^]*> /, at)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const lines = screenOf(mm.out, at, { before: 100, after: 30 })
    expect(lines.filter((line) => /waiting|Esc to|cancel/.test(line))).toEqual([])
    expect(lines).toContain("hello there")
  })
})
