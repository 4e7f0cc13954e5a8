import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, stripAnsi, tempProject } from "../../support/MmProcess"
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
    mm.type("/help")
    await mm.waitForText(/> \/help\r*$/)
    const mark = mm.out.length
    mm.type("\r")
    const shown = await mm.waitForText(/docs\/reference\/keys\.md\)/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const rows = shown.replace(/\r/g, "").split("\n").slice(1)
    for (const row of rows) expect(row.length).toBeLessThan(60)
    expect(rows).toContain("                        newest first (a word filters by")
    expect(rows.join(" ")).toContain("Esc or Ctrl-C cancels a running answer (docs/reference/keys.md).")
  })

  it("a long path in an answer's paragraph breaks after a `/` at 60 columns, not at the row's last column", async () => {
    const file = "src/components/dashboard/widgets/charts/timeseries/renderers/LineChartRendererFactory1.tsx"
    expect(file).toHaveLength(90)
    const mm = new PtyMm(tempProject(configFor(server.url)), {}, [], { columns: 60, rows: 24 })
    await mm.waitFor(/> /)
    server.push({ text: `The chart is drawn by ${file} when it loads.\n` })
    mm.type("where?\r")
    const mark = mm.out.length
    const shown = await mm.waitForText(/it loads\./, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const rows = shown.replace(/\r/g, "").split("\n")
    expect(rows).toContain("src/components/dashboard/widgets/charts/timeseries/")
    const at = rows.indexOf("src/components/dashboard/widgets/charts/timeseries/")
    expect(rows[at - 1]).toMatch(/The chart is drawn by$/)
    expect(rows[at + 1]).toBe("renderers/LineChartRendererFactory1.tsx when it loads.")
  })

  it("Esc mid-table draws the rows that came and a line saying the table was cut, no half row", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), {}, [], { columns: 80, rows: 24 })
    await mm.waitFor(/> /)
    const chunk = (content: string) => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content } }] })}\n\n`
    // the rest of the table never comes
    server.push({
      kind: "raw",
      chunks: [chunk("| name | size |\n| --- | --- |\n"), chunk("| alpha | 1 |\n"), chunk("| beta")],
      end: "hang"
    })
    mm.type("sizes?\r")
    await mm.waitForText(/\| beta/)
    const mark = mm.out.length
    mm.type("\x1b")
    const after = (await mm.waitForText(/⏹ cancelled/, mark)).replace(/\r/g, "")
    expect(after).toMatch(/│ alpha │ 1 +│\n└[─┴]+┘\n {2}⋯ table cut off here: the answer was cancelled\n/)
    expect(after).not.toMatch(/│ beta/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("reasoning streams dim under 'thinking · N s'; Esc mid-thought collapses it to one line", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), {}, [], { columns: 80, rows: 24 })
    await mm.waitFor(/> /)
    const chunk = (delta: object) => `data: ${JSON.stringify({ choices: [{ index: 0, delta }] })}\n\n`
    server.push({
      kind: "raw",
      chunkDelayMs: 300,
      chunks: [chunk({ reasoning_content: "weighing the options" }), chunk({ reasoning_content: " at length" })],
      end: "hang"
    })
    mm.type("which one?\r")
    const thinking = await mm.waitFor(/at length/)
    expect(thinking).toMatch(/\u001b\[2mthinking · 0 s\u001b\[22m\r?\n\u001b\[2mweighing the options/)
    const mark = mm.out.length
    mm.type("\x1b")
    const after = await mm.waitFor(/⏹ cancelled/, mark)
    // back up to the label, everything under it cleared, one dim line left
    expect(after).toMatch(/\r\u001b\[1A\u001b\[J\u001b\[2mthought for \d+ s\u001b\[22m\r?\n/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("an unset API-key variable is said at start, before any question; a 500 says to check the server's log", async () => {
    const yaml = configFor(server.url).flatMap((
      l
    ) => (l.startsWith("  name:") ? [l, "  apiKeyEnv: MM_TEST_NO_SUCH_KEY"] : [l]))
    const run = await runMm(tempProject(yaml), [], [], { MM_TEST_NO_SUCH_KEY: undefined })
    expect(run.stderr).toContain(
      "model.apiKeyEnv names MM_TEST_NO_SUCH_KEY, which is not set — set MM_TEST_NO_SUCH_KEY (export MM_TEST_NO_SUCH_KEY=…) and start mm again"
    )
    server.push({ kind: "status", status: 500, body: { error: { message: "kaput" } } })
    const failed = await runMm(tempProject(configFor(server.url)), ["hello"])
    expect(failed.stderr).toContain("model server answered HTTP 500: kaput — check the server's log")
  })

  it("a diff preview numbers its lines and keeps the + marker on each row of a wrapped line", async () => {
    const project = tempProject(configFor(server.url).map((l) => (l === "permissions: allow" ? "permissions: ask" : l)))
    fs.writeFileSync(path.join(project, "notes.txt"), "one\ntwo\nthree\n")
    const long = `three ${"and more words ".repeat(6)}end`
    server.push(
      { toolCalls: [{ name: "edit_file", arguments: { path: "notes.txt", old: "three", new: long } }] },
      { text: "left alone" }
    )
    const mm = new PtyMm(project, {}, [], { columns: 60, rows: 30 })
    await mm.waitFor(/> /)
    mm.type("edit it\r")
    const screen = (await mm.waitForText(/allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /)).replace(/\r/g, "")
    expect(screen).toContain("    2  two\n")
    expect(screen).toContain("    3 -three\n")
    const added = screen.split("\n").filter((row) => /^ {2}( {3}|\s*3) \+/.test(row))
    expect(added.length).toBeGreaterThan(1)
    expect(added[0]).toMatch(/^ {4}3 \+three and more/)
    expect(added.map((row) => row.slice(7)).join("")).toBe(long)
    mm.type("n")
    await mm.waitFor(/left alone/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("on a light background (COLORFGBG, or theme: light) colours are the palette's darker shades; theme: dark keeps xterm's", async () => {
    const ask = async (env: Record<string, string>, extra: ReadonlyArray<string> = []) => {
      const mm = new PtyMm(tempProject(configFor(server.url, extra)), env, [], { columns: 80, rows: 24 })
      await mm.waitFor(/> /)
      server.push({ text: "Run `npm test` now.\n" })
      mm.type("how?\r")
      await mm.waitFor(/now\./)
      mm.type("\x04")
      expect(await mm.exit()).toBe(0)
      return mm.out
    }
    const light = await ask({ COLORFGBG: "0;15" })
    expect(light).toContain("\u001b[38;5;130mnpm test\u001b[39m")
    expect(light).not.toContain("\u001b[33m")
    const dark = await ask({ COLORFGBG: "0;15" }, ["theme: dark"])
    expect(dark).toContain("\u001b[33mnpm test\u001b[39m")
    const chosen = await ask({}, ["theme: light"])
    expect(chosen).toContain("\u001b[38;5;130mnpm test\u001b[39m")
  })

  it("with TERM=dumb an approval is a letter and Enter, shown once, and still no escape byte", async () => {
    const project = tempProject(configFor(server.url).map((l) => (l === "permissions: allow" ? "permissions: ask" : l)))
    server.push({ toolCalls: [{ name: "bash", arguments: { command: "touch made" } }] }, { text: "made it" })
    const mm = new PtyMm(project, { TERM: "dumb" }, [], { columns: 80, rows: 24 })
    await mm.waitFor(/> /)
    mm.type("make a file\r")
    await mm.waitFor(/allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /)
    mm.type("y\r")
    await mm.waitFor(/made it[^]*> /)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.existsSync(path.join(project, "made"))).toBe(true)
    expect(mm.out).toMatch(/instead: y\r?\n(?!y\r?\n)/)
    expect(mm.out).not.toContain("\u001b")
  })
})
