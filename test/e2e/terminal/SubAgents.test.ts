// A sub-agent in the terminal: its question asked under its name, its answer the task's
// result, what it spent said apart on the usage line; under -p its call is refused in a line
// that names it.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { runMm, sessionFiles, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const ALLOW = /allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /

/** Asks before bash; a generous watchdog, for a loaded machine. */
const asking = (url: string) =>
  tempProject(
    withSessions(url).map((l) =>
      l === "permissions: allow" ? "permissions: ask" : l.startsWith("watchdogTimeout") ? "watchdogTimeout: 60" : l
    )
  )

const task = {
  id: "call_task",
  name: "task",
  arguments: { description: "make a marker", prompt: "Run: touch made-by-sub" }
}

describe("sub-agents in the terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("asks the sub-agent's question under its name, and says what it spent apart", async () => {
    const project = asking(server.url)
    server.push(
      { toolCalls: [task], usage: { prompt_tokens: 1200, completion_tokens: 30 } },
      {
        toolCalls: [{ id: "sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }],
        usage: { prompt_tokens: 800, completion_tokens: 20 }
      },
      { text: "made-by-sub is there", usage: { prompt_tokens: 900, completion_tokens: 10 } },
      { text: "The sub-agent made it.", usage: { prompt_tokens: 1300, completion_tokens: 8 } }
    )
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    mm.type("make a marker with a sub-agent\r")
    const asked = await mm.waitForText(ALLOW)
    expect(asked).toContain("⚙ task  make a marker")
    // the question says whose call it is: the sub-agent's own lines are the task's live output
    expect(asked).toContain("⚙ general: bash  touch made-by-sub\r\n")
    mm.type("y")
    const after = await mm.waitForText(/sub-agents: [^\n]*out/)
    expect(after).toContain("The sub-agent made it.")
    expect(after).toMatch(/1\.3k in · 8 out · \d+% of [^\n]* context · sub-agents: 1\.7k in · 30 out/)
    // /context counts them apart from the window
    const mark = mm.out.length
    mm.type("/context\r")
    await mm.waitForText(
      /sub-agents: 1 run took 1\.7k in · 30 out in their own windows; only their answers are in this one/,
      mark
    )
    mm.type("\x04")
    await mm.exit()
    expect(fs.existsSync(path.join(project, "made-by-sub"))).toBe(true)
    // the parent and the sub-agent: two files
    expect(sessionFiles(project)).toHaveLength(2)
  })

  it("under -p, a sub-agent's call that needs approval is refused in a line naming it", async () => {
    const project = asking(server.url)
    server.push(
      { toolCalls: [task] },
      { toolCalls: [{ id: "sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }] },
      { text: "I could not run it" },
      { text: "It was refused." }
    )
    const run = await runMm(project, [], ["-p", "make a marker with a sub-agent"])
    expect(stripAnsi(run.stderr)).toContain("general: bash  touch made-by-sub: not approved")
    expect(run.stdout).toContain("It was refused.")
    expect(fs.existsSync(path.join(project, "made-by-sub"))).toBe(false)
  })
})
