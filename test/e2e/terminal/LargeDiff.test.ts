import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, tempProject } from "../../support/MmProcess"
import { recordingPager } from "../../support/pager"
import { PtyMm } from "../../support/PtyMm"

/**
 * Issue 25, finding 1: a rewrite too large to diff is summed up at once, and Ctrl-C is seen while
 * it waits. Issue 42: a command too long for the screen is cut, the rest in the pager.
 */
describe("a preview too large to show whole", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const numbered = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} line ${i}\n`).join("")
  const askProject = () =>
    tempProject(configFor(server.url).map((line) => (line === "permissions: allow" ? "permissions: ask" : line)))

  it("a 20k-line rewrite is summed up, shown whole with [v], and refused", async () => {
    const project = askProject()
    const before = numbered(20_000, "old")
    fs.writeFileSync(path.join(project, "big.txt"), before)
    server.push(
      { toolCalls: [{ name: "write_file", arguments: { path: "big.txt", content: numbered(20_000, "new") } }] },
      { text: "left alone" }
    )
    const mm = new PtyMm(project, { PAGER: "head -n 4" }, [], { columns: 200, rows: 50 })
    await mm.waitFor(/> /)
    let mark = mm.out.length
    mm.type("rewrite it\r")
    const shown = await mm.waitForText(/\[t\]ell mm what to do instead: /, mark)
    expect(shown).toContain(
      "big.txt: rewrites 20000 lines (20000 → 20000 lines); diff too large to show — [v]iew in head -n 4"
    )
    expect(shown).not.toContain("+new line 0")
    mark = mm.out.length
    mm.type("v")
    // the pager shows the whole diff (the system's diff -u), then the question comes back
    const viewed = await mm.waitForText(/\[t\]ell mm what to do instead: /, mark)
    expect(viewed).toContain("--- big.txt")
    expect(viewed).toContain("-old line 0")
    mark = mm.out.length
    mm.type("n")
    await mm.waitForText(/left alone/, mark)
    expect(fs.readFileSync(path.join(project, "big.txt"), "utf8")).toBe(before)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  }, 120_000)

  it("a 300-line command shows its first lines and the count of the rest; v gives the pager every line", async () => {
    const project = askProject()
    // lines that print nothing; the last would leave a file behind if it ran
    const lines = [...Array.from({ length: 299 }, (_, i) => `: step ${i + 1} of the plan`), "touch ran.txt"]
    const command = lines.join("\n")
    server.push({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "left alone" })
    const recorder = recordingPager()
    // 30 rows: 24 for the command, 23 of its lines and the line that says what is left out
    const mm = new PtyMm(project, { PAGER: recorder.pager }, [], { columns: 100, rows: 30 })
    await mm.waitFor(/> /)
    let mark = mm.out.length
    mm.type("run the plan\r")
    const shown = (await mm.waitForText(/\[t\]ell mm what to do instead: /, mark)).replace(/\r/g, "")
    expect(shown).toContain(lines.slice(0, 23).map((line) => `  ${line}\n`).join(""))
    expect(shown).toContain(`  … 277 more lines not shown — [v]iew the whole command in ${recorder.pager}\n`)
    expect(shown).not.toContain(": step 24 of the plan")
    // at 100 columns the question is broken between its choices, before the last
    expect(shown).toContain("[s]ession only  [v]iew\n[t]ell mm what to do instead: ")
    mark = mm.out.length
    mm.type("v")
    // the question comes back once the pager has closed
    await mm.waitForText(/\[t\]ell mm what to do instead: /, mark)
    expect(recorder.seen()).toBe(`${command}\n`)
    // read from a file only its owner could read, removed since
    expect(recorder.mode()).toBe("600")
    expect(fs.existsSync(recorder.from()!)).toBe(false)
    mark = mm.out.length
    mm.type("n")
    await mm.waitForText(/left alone/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.existsSync(path.join(project, "ran.txt"))).toBe(false)
  }, 120_000)

  it("Ctrl-C at a 35k → 50k-line rewrite's preview cancels the turn; the file is unchanged", async () => {
    const project = askProject()
    const before = numbered(35_000, "old")
    fs.writeFileSync(path.join(project, "big.txt"), before)
    server.push({
      toolCalls: [{ name: "write_file", arguments: { path: "big.txt", content: numbered(50_000, "new") } }]
    })
    const mm = new PtyMm(project, {}, [], { columns: 200, rows: 50 })
    await mm.waitFor(/> /)
    const mark = mm.out.length
    mm.type("rewrite it\r")
    const shown = await mm.waitForText(/\[t\]ell mm what to do instead: /, mark)
    expect(shown).toContain("rewrites 50000 lines (35000 → 50000 lines); diff too large to show")
    mm.type("\x03")
    await mm.waitForText(/cancelled/, mark)
    expect(fs.readFileSync(path.join(project, "big.txt"), "utf8")).toBe(before)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  }, 120_000)

  for (const signal of ["SIGTERM", "SIGHUP"] as const) {
    it(`${signal} at a 50k-line rewrite's preview ends mm with 130; the file is unchanged`, async () => {
      const project = askProject()
      const before = numbered(50_000, "old")
      fs.writeFileSync(path.join(project, "big.txt"), before)
      server.push({
        toolCalls: [{ name: "write_file", arguments: { path: "big.txt", content: numbered(50_000, "new") } }]
      })
      const mm = new PtyMm(project, {}, [], { columns: 200, rows: 50 })
      await mm.waitFor(/> /)
      const mark = mm.out.length
      mm.type("rewrite it\r")
      await mm.waitForText(/diff too large to show[\s\S]*\[t\]ell mm what to do instead: /, mark)
      const pid = mm.mmPid()
      expect(pid).toBeDefined()
      process.kill(pid!, signal)
      expect(await mm.exit()).toBe(130)
      expect(fs.readFileSync(path.join(project, "big.txt"), "utf8")).toBe(before)
    }, 120_000)
  }
})
