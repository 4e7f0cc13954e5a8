import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, stripAnsi, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const TABLE = "Sizes:\n\n| name | size |\n| --- | ---: |\n| alpha | 1 |\n| beta gamma | 22 |\n\nThat is all.\n"
const SGR = /\u001b\[[0-9;]*m/

describe("colour and layout are separate switches", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("with NO_COLOR=1 a table is drawn aligned, and no colour code is printed", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), { NO_COLOR: "1" }, [], { columns: 80, rows: 24 })
    await mm.waitFor(/> /)
    server.push({ text: TABLE })
    mm.type("sizes?\r")
    await mm.waitFor(/That is all\./)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const screen = stripAnsi(mm.out).replace(/\r/g, "")
    expect(screen).toContain("│ alpha      │    1 │")
    expect(screen).toContain("│ beta gamma │   22 │")
    expect(screen).not.toContain("| --- |")
    expect(mm.out).not.toMatch(SGR)
  })

  it("with TERM=dumb not one escape byte is printed, and a question is still asked and answered", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), { TERM: "dumb" }, [], { columns: 80, rows: 24 })
    await mm.waitFor(/> /)
    server.push({ text: ["**bold** and ", "`code`\n", TABLE] })
    mm.type("sizes?\r")
    await mm.waitFor(/That is all\.[^]*> /)
    mm.type("/help\r")
    await mm.waitFor(/\/sessions/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(mm.out).toContain("**bold** and `code`")
    expect(mm.out).not.toContain("\u001b")
  })

  it("/help at 60 columns breaks no word: every row fits, and the commands' descriptions wrap under their column", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), {}, [], { columns: 60, rows: 40 })
    await mm.waitFor(/> /)
    const mark = mm.out.length
    mm.type("/help\r")
    const shown = await mm.waitForText(/docs\/reference\/keys\.md\)/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const rows = shown.replace(/\r/g, "").split("\n").slice(1)
    for (const row of rows) expect(row.length).toBeLessThan(60)
    expect(rows).toContain("                        newest first (a word filters by")
    expect(rows.join(" ")).toContain("Esc or Ctrl-C cancels a running answer (docs/reference/keys.md).")
  })
})
