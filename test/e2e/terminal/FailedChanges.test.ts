import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionFiles, sessionsDir, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

/** A terminal window's size: a pseudo-terminal made by `script` has none. */
const WINDOW = { columns: 200, rows: 50 }

type Record = { turn: number; tool_call_id?: string; path: string; failed?: string; question?: string }
type Saved = { turns: number; changes?: Array<Record> }

/** The screen's text without carriage returns. */
const clean = (text: string) => text.replace(/\r/g, "")

const groupsIn = (show: string) => [...show.matchAll(/^- (.+?) · (".*") · \S+$/gm)].map((m) => `${m[1]} ${m[2]}`)

/**
 * A question that fails after its tool wrote a file leaves the conversation, so it is no turn:
 * the file it wrote is "the failed question after turn 1", never turn 2 (the next question's
 * number). The conversation: "q one" writes a.txt; "q two fails" writes x.txt, then the next
 * model request fails; "q three" changes nothing.
 */
describe("a failed question's changes", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("are its own, after the turn it came after, on every surface and in the file", async () => {
    const project = tempProject(withSessions(server.url))
    const mm = new PtyMm(project, { COLUMNS: String(WINDOW.columns), LINES: String(WINDOW.rows) }, [], WINDOW)
    await mm.waitFor(/> /)

    server.push({ toolCalls: [{ id: "call_a", name: "write_file", arguments: { path: "a.txt", content: "a1\n" } }] })
    server.push({ text: "answer one" })
    let mark = mm.out.length
    mm.type("q one\r")
    await mm.waitForText(/answer one[\s\S]*> /, mark)

    server.push({ toolCalls: [{ id: "call_x", name: "write_file", arguments: { path: "x.txt", content: "x\n" } }] })
    server.push({ kind: "status", status: 500, body: { error: { message: "kaput" } } })
    mark = mm.out.length
    mm.type("q two fails\r")
    await mm.waitForText(/kaput[\s\S]*> /, mark)
    expect(fs.readFileSync(path.join(project, "x.txt"), "utf8")).toBe("x\n")

    server.push({ text: "answer three" })
    mark = mm.out.length
    mm.type("q three\r")
    await mm.waitForText(/answer three[\s\S]*> /, mark)

    // the file: two turns; x.txt's record marked, numbered by the turn it came after
    const [file] = sessionFiles(project)
    const id = file.slice(0, 24)
    const saved: Saved = readSession(project, file)
    expect(saved.turns).toBe(2)
    expect(saved.changes!.map((c) => [c.tool_call_id, c.path, c.turn, c.failed !== undefined])).toEqual([
      ["call_a", "a.txt", 1, false],
      ["call_x", "x.txt", 1, true]
    ])
    expect(saved.changes![1].failed).toMatch(/^\d{4}-\d\d-\d\dT/)

    // /changes: turn 1, then the failed question apart; no turn 2
    mark = mm.out.length
    mm.type("/changes\r")
    const changes = clean(await mm.waitForText(/"q two fails"\s+x\.txt[^\n]*\n[\s\S]*> /, mark))
    expect(changes).toMatch(/turn 1 {2}"q one"\n {2}a\.txt {2}\+1 -0 {2}\(created\)\n/)
    expect(changes).toMatch(/failed question after turn 1 {2}"q two fails"\n {2}x\.txt {2}\+1 -0 {2}\(created\)/)
    expect(changes).not.toMatch(/turn 2 /)

    // /changes 1: turn 1's diff only; /changes 2: turn 2 ("q three") changed nothing
    mark = mm.out.length
    mm.type("/changes 1\r")
    const one = await mm.waitForText(/\+a1[\s\S]*> /, mark)
    expect(one).toContain("turn 1  \"q one\" — 1 file(s)")
    expect(one).not.toContain("x.txt")
    mark = mm.out.length
    mm.type("/changes 2\r")
    await mm.waitForText(/turn 2 changed no file through mm's file tools[\s\S]*> /, mark)

    // /undo names the group by what it is (asked, then declined)
    mark = mm.out.length
    mm.type("/undo\r")
    const undo = clean(await mm.waitForText(/undo the failed question after turn 1\? \[y\]es \[n\]o: /, mark))
    expect(undo).toContain(
      "/undo takes back the failed question after turn 1:\n  delete x.txt  (it did not exist before)"
    )
    mm.type("n")
    await mm.waitForText(/nothing undone[\s\S]*> /, mark)

    // /rewind 2: "q three" leaves; x.txt was written before it was asked, so it stays
    mark = mm.out.length
    mm.type("/rewind 2\r")
    const preview = clean(await mm.waitForText(/rewind to before turn 2\? \[y\]es \[n\]o: /, mark))
    expect(preview).toContain("  turn 2  \"q three\"\nno file was changed by mm's file tools since turn 2 began")
    mm.type("y")
    const rewound = await mm.waitForText(/at turn 1: this conversation continues as \S+ —[\s\S]*> q three\s*$/, mark)
    const forkId = /continues as (\S+) —/.exec(rewound)![1]
    expect(fs.existsSync(path.join(project, "x.txt"))).toBe(true)
    const fork: Saved = readSession(project, `${forkId}.json`)
    expect(fork.changes!.map((c) => [c.path, c.turn, c.failed !== undefined])).toEqual([
      ["a.txt", 1, false],
      ["x.txt", 1, true]
    ])

    // /rewind 1 in the fork: back to before turn 1, the failed question's x.txt goes too
    mm.type("\x15")
    mark = mm.out.length
    mm.type("/rewind 1\r")
    const back = clean(await mm.waitForText(/rewind to before turn 1\? \[y\]es \[n\]o: /, mark))
    expect(back).toContain("  delete a.txt  (it did not exist before)\n  delete x.txt  (it did not exist before)")
    mm.type("n")
    await mm.waitForText(/nothing rewound[\s\S]*> /, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)

    // mm sessions show: questions 1 and 2, and the files changed by turn 1 and by the failed question
    const show = await runMm(project, [], ["sessions", "show", id])
    expect(show.code).toBe(0)
    expect([...show.stdout.matchAll(/^## (\d+)\. Question\n\n> (.*)$/gm)].map((m) => `${m[1]} ${m[2]}`)).toEqual([
      "1 q one",
      "2 q three"
    ])
    expect(groupsIn(show.stdout)).toEqual(["turn 1 \"q one\"", "failed question after turn 1 \"q two fails\""])

    // a file written before failed questions' records were marked: read the same way
    const old = JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8"))
    const oldId = `${id.slice(0, 16)}01d0f11e`
    old.id = oldId
    old.changes[1] = { ...old.changes[1], turn: 2 }
    delete old.changes[1].failed
    fs.writeFileSync(path.join(sessionsDir(project), `${oldId}.json`), JSON.stringify(old, null, 2))
    const oldShow = await runMm(project, [], ["sessions", "show", oldId])
    expect(oldShow.code).toBe(0)
    expect(groupsIn(oldShow.stdout)).toEqual(["turn 1 \"q one\"", "failed question after turn 1 \"q two fails\""])
  })
})
