import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import type { ParentRef } from "../../../src/domain/Session"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { runMm, sessionsDir, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"
import { writeAnsweredSession } from "../../support/store-fixtures"

// The terminal never offers a sub-agent's conversation to go on with: `/sessions`, the banner's
// count and a bare `/resume` leave it out; `/resume ID` takes it, as any session.

const PARENT = "20261201-100000-0000000a"
const CHILD = "20261201-100100-0000000b"

/** A one-turn session file of the project, as mm writes it. */
const writeSession = (project: string, id: string, question: string, minute: number, parent?: ParentRef) =>
  writeAnsweredSession(sessionsDir(project), {
    id,
    cwd: project,
    question,
    minute,
    ...(parent === undefined ? {} : { parent })
  })

describe("a sub-agent's session in the terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("/sessions and a bare /resume leave it out; /resume with its id takes it", async () => {
    const project = tempProject(withSessions(server.url))
    writeSession(project, PARENT, "refactor the loader", 0)
    // newer than its parent: still not the latest
    writeSession(project, CHILD, "find every caller of load()", 1, { id: PARENT, turn: 1, callId: "call_1" })
    const run = await runMm(project, ["/sessions", "/resume", `/resume ${CHILD}`])
    expect(run.code).toBe(0)
    expect(run.stderr).toContain("· 1 earlier — /resume to continue the latest")
    expect(run.stdout).toContain(`1 session(s) in ${sessionsDir(project)}`)
    expect(run.stdout).toMatch(new RegExp(`\\n1   ${PARENT} .* refactor the loader\\n`))
    const resumed = run.stdout.split("\n").filter((line) => line.startsWith("↩️ resumed "))
    expect(resumed).toEqual([
      expect.stringContaining(`↩️ resumed ${PARENT} — 2 message(s), started with "refactor the loader"`),
      expect.stringContaining(`↩️ resumed ${CHILD} — 2 message(s), started with "find every caller of load()"`)
    ])
    expect(run.stdout).not.toMatch(new RegExp(`\\d   ${CHILD}`))
  })

  it("the picker of --resume does not offer it", async () => {
    const project = tempProject(withSessions(server.url))
    writeSession(project, PARENT, "refactor the loader", 0)
    writeSession(project, CHILD, "find every caller of load()", 1, { id: PARENT, turn: 1, callId: "call_1" })
    const mm = new PtyMm(project, { COLUMNS: "120", LINES: "40" }, ["--resume"], { columns: 120, rows: 40 })
    // the sub-agent's session is the newest: it would be drawn above its parent
    const list = await mm.waitForText(/Resume which conversation\?[\s\S]*refactor the loader/)
    expect(stripAnsi(list)).not.toContain("find every caller")
    mm.type("\x1b")
    expect(await mm.exited).toBe(130)
  })
})
