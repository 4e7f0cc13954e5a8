// Plan mode on a terminal: Shift-Tab reaches it; a write is refused and the model reads why;
// after the turn one question, "start with this plan?": Esc keeps planning and sends nothing,
// choosing a mode puts the conversation in it and sends the fixed prompt that carries the plan
// out, whose write then goes ahead unasked (edits), with no question after it.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { CARRY_OUT_PLAN } from "../../../src/approvals/PlanMode"
import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../../support/FakeModelServer"
import { tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const QUESTION = /start with this plan\? \(↑↓, Enter; Esc to keep planning\)/
const ALLOW = /allow\? \[y\]es/

describe("plan mode in the terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("refuses a write, then asks once whether to start: Esc keeps planning, edits carries the plan out", async () => {
    const project = tempProject(
      withSessions(server.url).map((l) => (l === "permissions: allow" ? "permissions: ask" : l))
    )
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    // ask → edits → auto → allow → plan
    for (let i = 0; i < 4; i++) mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: plan — only what reads runs/)

    server.push(
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
      { text: "The plan: write a.txt." }
    )
    let mark = mm.out.length
    mm.type("plan the change\r")
    let screen = await mm.waitForText(QUESTION, mark)
    expect(screen).toContain("refused in plan mode: write_file changes files")
    expect(screen).toMatch(/› yes, in ask: asked as agent.yaml's permissions say[\r\n]+/)
    expect(screen).toMatch(/ {2}yes, in edits: edits in the project go ahead, commands are asked[\r\n]+/)
    expect(screen).toMatch(/ {2}yes, in allow: nothing is asked[\r\n]+ {2}no, keep planning/)
    expect(screen).not.toMatch(ALLOW)
    expect(fs.existsSync(path.join(project, "a.txt"))).toBe(false)
    expect(lastToolResults(server).w1).toMatch(/^refused in plan mode: /)

    // Esc: still planning, nothing sent
    const sent = server.completions().length
    mark = mm.out.length
    mm.type("\u001b")
    await mm.waitForText(/still in plan mode — Shift-Tab at the prompt changes the mode[\s\S]*> \s*$/, mark)
    expect(server.completions().length).toBe(sent)

    server.push({ text: "Still the same plan." })
    mark = mm.out.length
    mm.type("anything else?\r")
    await mm.waitForText(QUESTION, mark)
    // the second line of the list: edits
    server.push(
      { toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
      { text: "Done as planned." }
    )
    mark = mm.out.length
    mm.type("\u001b[B\r")
    screen = await mm.waitForText(/Done as planned\.[\s\S]*> \s*$/, mark)
    expect(screen).toContain(`> ${CARRY_OUT_PLAN}`)
    expect(screen).not.toMatch(ALLOW)
    // the choice stays on screen; no question follows the turn that carried the plan out
    expect(screen).toMatch(/Esc to keep planning\) yes, in edits: edits in the project go ahead/)
    expect(screen.slice(screen.indexOf("Done as planned."))).not.toMatch(QUESTION)
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("A")
    const requests = server.completions()
    const carried = requests.at(-2)!.body.messages
    expect(carried.filter((m: { role: string }) => m.role === "user").at(-1).content).toBe(CARRY_OUT_PLAN)
    expect(carried[0].content).not.toContain("# Plan mode")
    expect(requests[sent].body.messages[0].content).toContain("# Plan mode")
    mm.type("\x04")
    await mm.exit()
  })
})
