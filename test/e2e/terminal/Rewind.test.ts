import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, sessionFiles, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const questionsOf = (messages: ReadonlyArray<{ role: string; content: string | null }>) =>
  messages.filter((m) => m.role === "user").map((m) => m.content)

const read = (project: string, file: string) => fs.readFileSync(path.join(project, file), "utf8")

/** Five turns on a terminal: turns 1–4 write a.txt and b.txt by turns, turn 5 only answers. */
const fiveTurns = async (server: FakeModelServer, project: string, mm: PtyMm) => {
  const writes: ReadonlyArray<[string, string] | undefined> = [
    ["a.txt", "a1\n"],
    ["b.txt", "b2\n"],
    ["a.txt", "a3\n"],
    ["b.txt", "b4\n"],
    undefined
  ]
  await mm.waitFor(/> /)
  for (const [i, write] of writes.entries()) {
    if (write !== undefined) {
      server.push({ toolCalls: [{ name: "write_file", arguments: { path: write[0], content: write[1] } }] })
    }
    server.push({ text: `answer ${i + 1}` })
    const mark = mm.out.length
    mm.type(`question ${i + 1}\r`)
    await mm.waitForText(new RegExp(`answer ${i + 1}[\\s\\S]*> `), mark)
  }
  expect([read(project, "a.txt"), read(project, "b.txt")]).toEqual(["a3\n", "b4\n"])
}

describe("/rewind on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("/rewind 3 after 5 turns restores both files, asks about a hand-edited one, and goes on in a fork", async () => {
    const project = tempProject(withSessions(server.url))
    const mm = new PtyMm(project)
    await fiveTurns(server, project, mm)
    const [original] = sessionFiles(project)
    const originalId = original.slice(0, 24)
    fs.writeFileSync(path.join(project, "b.txt"), "edited by hand\n")

    let mark = mm.out.length
    mm.type("/rewind 3\r")
    const preview = await mm.waitForText(/rewind to before turn 3\? \[y\]es \[n\]o: /, mark)
    expect(preview).toContain(
      `/rewind 3 goes back to just before turn 3; leaving the conversation (they stay in ${originalId}):`
    )
    expect(preview).toMatch(/turn 3 {2}"question 3"\s+turn 4 {2}"question 4"\s+turn 5 {2}"question 5"/)
    expect(preview).toContain("restore a.txt  +1 -1")
    expect(preview).toContain("b.txt was changed after mm wrote it: asked separately")
    mark = mm.out.length
    mm.type("y")
    const asked = await mm.waitForText(/restore b\.txt anyway\? \[y\]es \[n\]o: /, mark)
    expect(asked).toContain("-edited by hand")
    expect(asked).toContain("+b2")
    mark = mm.out.length
    mm.type("y")
    const done = await mm.waitForText(/continues as \S+/, mark)
    expect(done).toContain("↩️ undid turns 3–5: restored a.txt, b.txt")
    expect(done).toContain(`⑂ forked from ${originalId} at turn 2: this conversation continues as`)
    expect([read(project, "a.txt"), read(project, "b.txt")]).toEqual(["a1\n", "b2\n"])

    // the original keeps its five turns on disk; the fork holds two
    expect(readSession(project, original).turns).toBe(5)
    expect(questionsOf(readSession(project, original).messages).slice(0, 5)).toEqual(
      [1, 2, 3, 4, 5].map((i) => `question ${i}`)
    )
    const forkFile = sessionFiles(project).find((f) => f !== original)!
    const forked = readSession(project, forkFile)
    expect(forked.forkedFrom).toEqual({ id: originalId, turn: 2 })
    expect(forked.turns).toBe(2)
    expect(forked.changes.map((c: { path: string }) => c.path)).toEqual(["a.txt", "b.txt"])

    // the rewound question is offered again on the prompt line; the model sees two turns before it
    await mm.waitForText(/> question 3\s*$/, mark)
    server.push({ text: "a fresh answer" })
    mark = mm.out.length
    // Ctrl-E (end of line) ends the burst of the last one-key answer, then the typing goes on
    mm.type("\x05 again\r")
    await mm.waitForText(/a fresh answer/, mark)
    expect(questionsOf(server.completions().at(-1)!.body.messages)).toEqual([
      "question 1",
      "question 2",
      "question 3 again"
    ])
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(readSession(project, forkFile).turns).toBe(3)
  })

  it("Esc Esc at an empty prompt lists the questions; Enter on one rewinds to it", async () => {
    const project = tempProject(withSessions(server.url))
    const mm = new PtyMm(project)
    await fiveTurns(server, project, mm)
    let mark = mm.out.length
    mm.type("\x1b\x1b")
    const list = await mm.waitForText(/rewind to just before which question\?[\s\S]*turn 5 {2}question 5/, mark)
    expect(list).toContain("turn 1  question 1")
    mark = mm.out.length
    mm.type("\x1b[A")
    await mm.waitForText(/› turn 4 {2}question 4/, mark)
    mark = mm.out.length
    mm.type("\r")
    const preview = await mm.waitForText(/rewind to before turn 4\? \[y\]es \[n\]o: /, mark)
    expect(stripAnsi(preview)).toContain("restore b.txt  +1 -1")
    mm.type("y")
    await mm.waitForText(/at turn 3: this conversation continues as[\s\S]*> question 4\s*$/, mark)
    expect([read(project, "a.txt"), read(project, "b.txt")]).toEqual(["a3\n", "b2\n"])
    mm.type("\x15\x04")
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })
})
