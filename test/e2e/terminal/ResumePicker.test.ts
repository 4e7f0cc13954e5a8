import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, sessionFiles, sessionsDir, stripAnsi, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

/** A terminal window's size: a pseudo-terminal made by `script` has none. */
const WINDOW = { columns: 120, rows: 40 }

describe("mm --resume on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("lists the conversations; typing filters, Enter resumes the one chosen", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push({ text: "about alpha" }, { text: "about beta" }, { text: "about gamma" })
    for (const question of ["alpha topic", "beta topic", "gamma topic"]) await runMm(project, [], ["-p", question])
    const ids = new Map(
      sessionFiles(project).map((
        file
      ) => [JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8")).title, file.slice(0, -5)])
    )

    const mm = new PtyMm(project, { COLUMNS: "120", LINES: "40" }, ["--resume"], WINDOW)
    const list = await mm.waitForText(/gamma topic[\s\S]*beta topic[\s\S]*alpha topic/)
    expect(list).toContain("Resume which conversation?")
    let mark = mm.out.length
    mm.type("beta")
    await mm.waitForText(/beta/, mark)
    mm.type("\r")
    await mm.waitForText(new RegExp(`resumed ${ids.get("beta topic")}`), mark)
    await mm.waitForText(/> /, mark)

    server.push({ text: "beta goes on" })
    mark = mm.out.length
    mm.type("and then?\r")
    await mm.waitForText(/beta goes on/, mark)
    expect(server.completions().at(-1)!.body.messages.slice(1).map((m: any) => m.content)).toEqual([
      "beta topic",
      "about beta",
      "and then?"
    ])
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
    expect(sessionFiles(project)).toHaveLength(3)
  })

  it("Esc leaves without starting anything", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push({ text: "x" })
    await runMm(project, [], ["-p", "only one"])
    const mm = new PtyMm(project, { COLUMNS: "120", LINES: "40" }, ["--resume"], WINDOW)
    await mm.waitForText(/only one/)
    mm.type("\x1b")
    expect(await mm.exited).toBe(130)
    expect(stripAnsi(mm.out)).not.toContain("mm 0.1.0 ·")
  })
})
