import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import {
  MmProcess,
  readSession,
  runMm,
  sessionFiles,
  sessionsDir,
  tempProject,
  withSessions
} from "../../support/MmProcess"

const questionsOf = (messages: ReadonlyArray<{ role: string; content: string | null }>) =>
  messages.filter((m) => m.role === "user").map((m) => m.content)

/** A project whose one session has four turns: q1…q4 answered a1…a4. */
const fourTurns = async (server: FakeModelServer) => {
  const project = tempProject(withSessions(server.url))
  for (let i = 1; i <= 4; i++) server.push({ text: `a${i}` })
  const run = await runMm(project, ["q1", "q2", "q3", "q4"])
  expect(run.code).toBe(0)
  const [file] = sessionFiles(project)
  return { project, file, id: file.slice(0, 24), before: fs.readFileSync(path.join(sessionsDir(project), file)) }
}

describe("forking a conversation", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("/fork 2 in a 4-turn session goes on in a 2-turn session; the model sees only those turns", async () => {
    const { before, file, id, project } = await fourTurns(server)
    const mm = new MmProcess(project, ["--resume", id])
    mm.send("/fork 2")
    const said = await mm.waitFor("continues as", 0, undefined, "all")
    expect(said).toContain(`⑂ forked from ${id} at turn 2: this conversation continues as`)
    expect(said).toContain(`2 turn(s) kept; the 2 later turn(s) stay in ${id}`)

    const files = sessionFiles(project)
    expect(files).toHaveLength(2)
    const forkFile = files.find((f) => f !== file)!
    const forked = readSession(project, forkFile)
    expect(forked.forkedFrom).toEqual({ id, turn: 2 })
    expect(forked.turns).toBe(2)
    expect(questionsOf(forked.messages)).toEqual(["q1", "q2"])
    expect(forked.messages.at(-1)).toMatchObject({ role: "assistant", content: "a2" })
    // the original is byte for byte as it was
    expect(fs.readFileSync(path.join(sessionsDir(project), file))).toEqual(before)

    server.push({ text: "from the fork" })
    const mark = mm.stdout.length
    mm.send("q3 again")
    await mm.waitFor("from the fork", mark)
    const sent = server.completions().at(-1)!.body.messages
    expect(questionsOf(sent)).toEqual(["q1", "q2", "q3 again"])
    expect(sent.map((m: { content: string }) => m.content)).not.toContain("a3")

    mm.send("/sessions")
    await mm.waitFor(`⑂ from ${id} at turn 2`)
    expect(await mm.end()).toBe(0)
    const after = readSession(project, forkFile)
    expect(after.turns).toBe(3)
    expect(after.forkedFrom).toEqual({ id, turn: 2 })
    expect(fs.readFileSync(path.join(sessionsDir(project), file))).toEqual(before)
  })

  it("refuses a turn that is not there, in one line, and forks nothing", async () => {
    const { project, id } = await fourTurns(server)
    const run = await runMm(project, ["/fork 9", "/fork x"], ["--resume", id])
    expect(run.stderr).toContain("there is no turn 9 (last: 4)")
    expect(run.stdout).toContain("usage: /fork [N]")
    expect(sessionFiles(project)).toHaveLength(1)
  })

  it("mm --fork ID:1 -p asks in a fork holding turn 1 only", async () => {
    const { before, file, id, project } = await fourTurns(server)
    server.push({ text: "forked answer" })
    const run = await runMm(project, [], ["--fork", `${id.slice(-8)}:1`, "-p", "q2 differently"])
    expect(run.stderr).toBe("")
    expect(run.stdout).toBe("forked answer\n")
    expect(run.code).toBe(0)
    expect(questionsOf(server.completions().at(-1)!.body.messages)).toEqual(["q1", "q2 differently"])
    const forkFile = sessionFiles(project).find((f) => f !== file)!
    const forked = readSession(project, forkFile)
    expect(forked.forkedFrom).toEqual({ id, turn: 1 })
    expect(forked.turns).toBe(2)
    expect(fs.readFileSync(path.join(sessionsDir(project), file))).toEqual(before)

    // where it came from, and where it went, in mm sessions
    const forkId = forkFile.slice(0, 24)
    const original = await runMm(project, [], ["sessions", "show", id])
    expect(original.stdout).toContain(`- ⑂ forked into \`${forkId}\` at turn 1\n`)
    const shown = await runMm(project, [], ["sessions", "show", forkId])
    expect(shown.stdout).toContain(`- ⑂ forked from \`${id}\` at turn 1\n`)
    const listed = await runMm(project, [], ["sessions"])
    expect(listed.stdout).toMatch(new RegExp(`${forkId} .* · ⑂ from ${id} at turn 1\n`))

    const bad = await runMm(project, [], ["--fork", "nope:x", "-p", "q"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain("--fork needs a session id")
    const tooFar = await runMm(project, [], ["--fork", `${id}:7`, "-p", "q"])
    expect(tooFar.code).toBe(2)
    expect(tooFar.stderr).toContain("there is no turn 7 (last: 4)")
  })
})
