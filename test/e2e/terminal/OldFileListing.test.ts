import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionsDir, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

/** A terminal window's size: a pseudo-terminal made by `script` has none. */
const WINDOW = { columns: 160, rows: 40 }

const ID = "20260101-120000-0123abcd"
/** One whose only turn was cancelled: 0 turns to the mm that wrote it, which listed it as empty. */
const ONLY_CANCELLED = "20251231-120000-4567cdef"

/**
 * A file an earlier mm wrote, in its own layout (two-space JSON, no `numbering` in its head):
 * its first question was cancelled (kept with its partial answer) and not counted in `turns`.
 */
const writeOldFile = (project: string, id = ID, answered = true): string => {
  const file = path.join(sessionsDir(project), `${id}.json`)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const title = answered ? "cancelled question" : "only cancelled"
  const session = {
    version: 1,
    id,
    cwd: project,
    createdAt: "2026-01-01T12:00:00.000Z",
    updatedAt: answered ? "2026-01-01T12:05:00.000Z" : "2026-01-01T12:01:00.000Z",
    title,
    turns: answered ? 1 : 0,
    errors: [],
    messages: [
      { role: "system", content: "sys" },
      { role: "user", content: title },
      { role: "assistant", content: "partial" },
      ...(answered ? [{ role: "user", content: "second question" }, { role: "assistant", content: "answer" }] : [])
    ]
  }
  fs.writeFileSync(file, JSON.stringify(session, null, 2) + "\n", { mode: 0o600 })
  // written long ago: a listing keeps what it read of it in the index
  const then = new Date("2026-01-01T12:05:00.000Z")
  fs.utimesSync(file, then, then)
  return file
}

/** Each listing gives the old file's turns as a full read numbers them: 2, as `mm sessions show` says. */
describe("a session file written before cancelled turns counted", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("is listed with its turns renumbered by mm sessions, --json, /sessions and the picker, and left as it is", async () => {
    const project = tempProject(withSessions(server.url))
    const file = writeOldFile(project)
    const written = fs.readFileSync(file, "utf8")
    const other = writeOldFile(project, ONLY_CANCELLED, false)
    const otherWritten = fs.readFileSync(other, "utf8")

    const show = await runMm(project, [], ["sessions", "show", ID])
    expect(show.stdout).toContain("- 2 turn(s)")
    const listed = await runMm(project, [], ["sessions"])
    expect(listed.stdout).toMatch(new RegExp(`${ID} .* 2 turn\\(s\\) {2}cancelled question`))
    // the index written by that listing holds the count: this one reads it from there
    const json = JSON.parse((await runMm(project, [], ["sessions", "--json"])).stdout)
    expect(json.sessions.map((s: { id: string; turns: number }) => [s.id, s.turns])).toEqual([[ID, 2], [
      ONLY_CANCELLED,
      1
    ]])
    // without the index, the file is read again
    fs.rmSync(path.join(sessionsDir(project), ".index.json"))
    const slash = await runMm(project, ["/sessions"])
    expect(slash.stdout).toMatch(new RegExp(`${ID} .* 2 turn\\(s\\) {2}cancelled question`))
    // the conversation of one cancelled turn is not empty: listed, and counted by the banner
    expect(slash.stdout).toMatch(new RegExp(`${ONLY_CANCELLED} .* 1 turn\\(s\\) {2}only cancelled`))
    expect(slash.stdout).not.toContain("empty not shown")
    expect(slash.stderr).toContain(" · 2 earlier — ")
    fs.rmSync(path.join(sessionsDir(project), ".index.json"))

    const mm = new PtyMm(project, { COLUMNS: String(WINDOW.columns), LINES: String(WINDOW.rows) }, ["--resume"], WINDOW)
    const picker = await mm.waitForText(new RegExp(`cancelled question[\\s\\S]*2 turn\\(s\\) · ${ID}`))
    expect(stripAnsi(picker)).not.toContain("1 turn(s)")
    mm.type("\x1b")
    expect(await mm.exited).toBe(130)

    // listed, shown and offered: never rewritten
    expect(fs.readFileSync(file, "utf8")).toBe(written)
    expect(fs.readFileSync(other, "utf8")).toBe(otherWritten)

    // continued, it is written in the numbering, and says so in its head
    server.push({ text: "third answer" })
    const resumed = await runMm(project, [`/resume ${ID}`, "third question"])
    expect(resumed.stdout).toContain("third answer")
    const saved = readSession(project, `${ID}.json`)
    expect([saved.numbering, saved.turns]).toEqual([2, 3])
    expect(fs.readFileSync(file, "utf8")).toMatch(/^\{\n {2}"version": 1,\n {2}"numbering": 2,\n/)
    const after = JSON.parse((await runMm(project, [], ["sessions", "--json"])).stdout)
    expect(after.sessions.map((s: { turns: number }) => s.turns)).toEqual([3, 1])
  })
})
