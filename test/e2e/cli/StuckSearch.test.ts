import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { MmProcess, readSession, sessionFiles, tempProject, withSessions } from "../../support/MmProcess"

/**
 * Issue 44: a grep whose pattern backtracks for days holds only the search worker. The worker's
 * own stall limit is raised here (MM_SEARCH_STALL_MS), so that only the signal can end the call.
 */
const STUCK = { MM_SEARCH_STALL_MS: "600000" }
const catastrophic = { toolCalls: [{ id: "g1", name: "grep", arguments: { pattern: "^(a+)+$" } }] }

const stuckProject = (server: FakeModelServer): string => {
  const project = tempProject(withSessions(server.url))
  fs.writeFileSync(path.join(project, "a.txt"), `${"a".repeat(40)}b\n`)
  return project
}

const onlySession = (project: string) => {
  const files = sessionFiles(project)
  expect(files).toHaveLength(1)
  return readSession(project, files[0])
}

const grepResult = (project: string) =>
  onlySession(project).messages.find((m: { role: string; tool_call_id?: string }) => m.tool_call_id === "g1")

/** The REPL (piped), its first question's grep running and stuck. */
const stuckInRepl = async (server: FakeModelServer) => {
  const project = stuckProject(server)
  server.push(catastrophic)
  const mm = new MmProcess(project, [], STUCK)
  mm.send("find the a's")
  await mm.waitFor("⚙ grep", 0, 15_000, "stderr")
  return { project, mm }
}

describe("signals during a grep stuck on its pattern", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    it(`mm -p: ${signal} ends it with 130, the call saved as cancelled and every JSON line whole`, async () => {
      const project = stuckProject(server)
      server.push(catastrophic)
      const mm = new MmProcess(project, ["-p", "find the a's", "--output-format", "json"], STUCK)
      mm.child.stdin!.end()
      await mm.waitFor(/"type":"tool_call"[^\n]*"name":"grep"/)
      mm.child.kill(signal)
      expect(await mm.exited).toBe(130)
      expect(grepResult(project)).toMatchObject({ content: "cancelled by the user", failed: true })
      // every line written is whole JSON (an interrupted run has no `result` line, as documented)
      const events = mm.stdout.trim().split("\n").map((line) => JSON.parse(line) as { type: string })
      expect(events.at(-1)).toMatchObject({ type: "tool_call", name: "grep" })
      expect(mm.stderr).not.toMatch(/at .*\.js:\d+|Cause|Error:/)
    })
  }

  it("the REPL: SIGINT cancels the call and the next question is answered; SIGTERM then ends mm with 130", async () => {
    const { project, mm } = await stuckInRepl(server)
    mm.child.kill("SIGINT")
    await mm.waitFor("cancelled", 0, 15_000, "all")
    server.push({ text: "still answering" })
    mm.send("are you there?")
    await mm.waitFor("still answering")
    const mark = mm.stderr.length
    server.push(catastrophic)
    mm.send("once more")
    await mm.waitFor("⚙ grep", mark, 15_000, "stderr")
    mm.child.kill("SIGTERM")
    expect(await mm.exited).toBe(130)
    const results = onlySession(project).messages.filter((m: { tool_call_id?: string }) => m.tool_call_id === "g1")
    expect(results).toEqual([
      { role: "tool", tool_call_id: "g1", content: "cancelled by the user", failed: true },
      { role: "tool", tool_call_id: "g1", content: "cancelled by the user", failed: true }
    ])
  })

  it("the REPL: SIGHUP (the terminal closed) ends mm with 130, the question and the call saved", async () => {
    const { project, mm } = await stuckInRepl(server)
    mm.child.kill("SIGHUP")
    expect(await mm.exited).toBe(130)
    const session = onlySession(project)
    expect(session.messages.find((m: { role: string }) => m.role === "user")).toEqual({
      role: "user",
      content: "find the a's"
    })
    expect(grepResult(project)).toMatchObject({ content: "cancelled by the user", failed: true })
  })
})
