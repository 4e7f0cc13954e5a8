import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionFiles, sessionsDir, tempProject, withSessions } from "../../support/MmProcess"

/** An archive as a compaction leaves it: an ordinary session file with `archiveOf`. */
const writeArchive = (project: string, of: string, id: string, words: string) => {
  const session = readSession(project, `${of}.json`)
  const archive = {
    ...session,
    id,
    archiveOf: of,
    messages: [...session.messages, { role: "assistant", content: `an old answer: ${words}` }]
  }
  fs.writeFileSync(path.join(sessionsDir(project), `${id}.json`), JSON.stringify(archive, null, 2) + "\n", {
    mode: 0o600
  })
}

describe("mm sessions search", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("finds a word only a tool printed in an old session, and one in an archive, newest first", async () => {
    const project = tempProject(withSessions(server.url))
    // the old session: the word is in bash's output only, never in a question, an answer or a call
    server.push(
      { toolCalls: [{ id: "call_1", name: "bash", arguments: { command: "printf 'the %s was here\\n' zebracorn" } }] },
      { text: "looked at it" }
    )
    expect((await runMm(project, ["what does the loader print?"])).code).toBe(0)
    const [old] = sessionFiles(project)
    const oldId = old.slice(0, 24)
    server.push({ text: "fine" }, { text: "nothing to see" })
    expect((await runMm(project, ["an unrelated question", "and another one"])).code).toBe(0)
    const archiveId = "29991231-235959-0badc0de"
    writeArchive(project, oldId, archiveId, "the Quokkaline cache")

    const found = await runMm(project, [], ["sessions", "search", "zebracorn"])
    expect(found.code).toBe(0)
    const lines = found.stdout.trim().split("\n")
    // the archive holds the old session's messages too: it is newer, so it comes first, marked
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      new RegExp(
        `^${archiveId}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  archive of ${oldId}  turn 1  tool  the zebracorn was here$`
      )
    )
    expect(lines[1]).toMatch(
      new RegExp(`^${oldId}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  turn 1  tool  the zebracorn was here$`)
    )
    expect(found.stderr).toContain("2 matching line(s) in 2 session(s)")

    const archived = await runMm(project, [], ["sessions", "search", "--json", "Quokkaline"])
    expect(archived.code).toBe(0)
    expect(archived.stdout.trim().split("\n").map((line) => JSON.parse(line))).toEqual([
      {
        id: archiveId,
        updatedAt: expect.any(String),
        archiveOf: oldId,
        turn: 1,
        role: "assistant",
        line: "an old answer: the Quokkaline cache"
      }
    ])

    // exact by default; -i for any case; --regex
    expect((await runMm(project, [], ["sessions", "search", "quokkaline"])).code).toBe(1)
    expect((await runMm(project, [], ["sessions", "search", "-i", "quokkaline"])).stdout).toContain(archiveId)
    const regex = await runMm(project, [], ["sessions", "search", "--regex", "^and an?other"])
    expect(regex.stdout).toMatch(/turn 2 {2}user {2}and another one\n$/)
    const bad = await runMm(project, [], ["sessions", "search", "--regex", "(unclosed"])
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/^mm: not a regular expression: .*\n$/)
    const none = await runMm(project, [], ["sessions", "search", "nowhere-to-be-found"])
    expect(none.code).toBe(1)
    expect(none.stderr).toContain(`no session matches "nowhere-to-be-found"`)

    // the same from the terminal
    const inRepl = await runMm(project, ["/sessions search zebracorn"])
    expect(inRepl.stdout).toContain(`${oldId}  `)
    expect(inRepl.stdout).toContain("2 matching line(s) in 2 session(s)")
  })
})
