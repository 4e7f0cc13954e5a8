import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import type { Session } from "../../../src/domain/Session"
import { encodeSession } from "../../../src/sessions/SessionCodec"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionFiles, sessionsDir, tempProject, withSessions } from "../../support/MmProcess"

/** Writes a session file as mm would, with `turns` exchanges. */
const writeSession = (
  project: string,
  id: string,
  fields: {
    readonly title: string
    readonly turns: number
    readonly updatedAt: string
    readonly answers?: ReadonlyArray<string>
  }
) => {
  fs.mkdirSync(sessionsDir(project), { recursive: true, mode: 0o700 })
  const messages: Array<Session["messages"][number]> = [{ role: "system", content: "s" }]
  for (let n = 1; n <= fields.turns; n++) {
    messages.push({ role: "user", content: n === 1 ? fields.title : `${fields.title} question ${n}` })
    messages.push({ role: "assistant", content: fields.answers?.[n - 1] ?? `answer ${n} of ${fields.title}` })
  }
  const session: Session = {
    version: 1,
    id,
    cwd: project,
    createdAt: fields.updatedAt,
    updatedAt: fields.updatedAt,
    title: fields.turns === 0 ? "" : fields.title,
    turns: fields.turns,
    messages,
    errors: []
  }
  fs.writeFileSync(path.join(sessionsDir(project), `${id}.json`), encodeSession(session), { mode: 0o600 })
}

describe("finding sessions again in the terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("the banner counts only what /resume could take; /sessions hides empty threads and says how many", async () => {
    const project = tempProject(withSessions(server.url))
    writeSession(project, "20261101-100000-aaaaaaaa", { title: "", turns: 0, updatedAt: "2026-11-01T10:00:00.000Z" })
    const run = await runMm(project, ["/sessions", "/resume"])
    // piped: the banner is on stderr, what commands print on stdout
    expect(run.stderr).toContain(`sessions: saved under ${sessionsDir(project)} · no earlier sessions\n`)
    expect(run.stderr).toContain("/help for commands · Ctrl-D to leave")
    expect(run.stdout).toContain(`0 session(s) in ${sessionsDir(project)}`)
    expect(run.stdout).toContain("\n1 empty not shown\n")
    expect(run.stdout).not.toContain("aaaaaaaa  ")
    expect(run.stdout).toContain("no earlier session to resume")

    writeSession(project, "20261102-100000-bbbbbbbb", {
      title: "a real one",
      turns: 1,
      updatedAt: "2026-11-02T10:00:00.000Z"
    })
    const again = await runMm(project, [])
    expect(again.stderr).toContain("· 1 earlier — /resume to continue the latest, /sessions to list\n")
    expect(again.stderr).not.toContain("/help for commands")
  })

  it("/sessions: numbered rows by last update, a word filters, more than 20 are cut", async () => {
    const project = tempProject(withSessions(server.url))
    for (let n = 1; n <= 23; n++) {
      const day = String(n).padStart(2, "0")
      // created in order, updated in reverse: the listing follows the update
      writeSession(project, `202610${day}-100000-0000${String(n).padStart(4, "0")}`, {
        title: n % 2 === 0 ? `even topic ${n}` : `odd topic ${n}`,
        turns: 1,
        updatedAt: new Date(Date.UTC(2026, 10, 30 - n)).toISOString()
      })
    }
    const run = await runMm(project, ["/sessions", "/sessions EVEN", "/sessions all"])
    const [first, filtered, all] = run.stdout.split(/\n(?=\d+ session\(s\) in )/)
    const rows = first.split("\n").filter((l) => /^ ?\d+ [ *] \d{8}/.test(l))
    expect(rows).toHaveLength(20)
    expect(rows[0]).toMatch(
      /^ 1 {3}20261001-100000-00000001 {2}\d{4}-\d\d-\d\d \d\d:\d\d \(\d+ d ago\) {2}1 turn\(s\) {2}odd topic 1$/
    )
    expect(rows[1]).toContain("20261002-100000-00000002")
    expect(first).toContain("\n… 3 more (/sessions all)")
    expect(first.startsWith("23 session(s) in")).toBe(true)
    expect(filtered).toMatch(/^11 session\(s\) in .* matching "EVEN" — /)
    const matching = filtered.split("\n").filter((l) => /^ ?\d+ [ *] \d{8}/.test(l))
    expect(matching).toHaveLength(11)
    expect(matching.every((l) => l.includes("even topic"))).toBe(true)
    expect(all.split("\n").filter((l) => /^ ?\d+ [ *] \d{8}/.test(l))).toHaveLength(23)
    expect(all).not.toContain("more (/sessions all)")
  })

  it("/resume takes a row number, a prefix or a suffix; an ambiguous prefix lists the candidates; the last exchanges are drawn", async () => {
    const project = tempProject(withSessions(server.url))
    writeSession(project, "20261110-090000-1a2b3c4d", {
      title: "fix the parser",
      turns: 4,
      updatedAt: "2026-11-10T09:30:00.000Z",
      answers: ["a1", "a2", "a3", "line one\nline two\nline three\nline four\nline five"]
    })
    writeSession(project, "20261111-090000-5e6f7a8b", {
      title: "write the docs",
      turns: 1,
      updatedAt: "2026-11-11T09:30:00.000Z"
    })
    writeSession(project, "20261111-100000-99990000", {
      title: "third",
      turns: 1,
      updatedAt: "2026-11-11T10:30:00.000Z"
    })

    const run = await runMm(project, [
      "/sessions",
      "/resume 3",
      "/resume 20261111-09",
      "/resume 9990000",
      "/resume 202611",
      "/resume 20261112"
    ])
    const out = run.stdout
    expect(out).toContain("↩️ resumed 20261110-090000-1a2b3c4d — 8 message(s), started with \"fix the parser\"")
    // the last 3 of 4 exchanges, answers cut to 3 lines
    const recap = out.slice(out.indexOf("resumed 20261110"))
    expect(recap).toContain("… 1 earlier exchange(s) not shown")
    expect(recap).toContain("> fix the parser question 2")
    expect(recap).toContain("> fix the parser question 4")
    expect(recap).toContain("  line three\n")
    expect(recap).not.toContain("line four")
    expect(recap).toContain("… (2 more line(s))")
    expect(out).toContain("↩️ resumed 20261111-090000-5e6f7a8b — 2 message(s), started with \"write the docs\"")
    expect(out).toContain("↩️ resumed 20261111-100000-99990000 — 2 message(s), started with \"third\"")
    // red lines are on stderr when piped
    expect(run.stderr).toMatch(/"202611" matches 3 sessions: .*20261111-100000-99990000.* — type more of the id/)
    expect(run.stderr).toContain("no session \"20261112\" in this project")
  })

  it("a failed /resume alone leaves no file; followed by a question, one file holds the resume record", async () => {
    const alone = tempProject(withSessions(server.url))
    const idle = await runMm(alone, ["/resume 20260916-101530-4f2a9c1e"])
    expect(idle.stderr).toContain("no session 20260916-101530-4f2a9c1e in this project")
    expect(sessionFiles(alone)).toEqual([])
    expect(idle.all).not.toContain("saved — /resume")

    const project = tempProject(withSessions(server.url))
    server.push({ text: "answered" })
    const run = await runMm(project, ["/resume 20260916-101530-4f2a9c1e", "a question"])
    const files = sessionFiles(project)
    expect(files).toHaveLength(1)
    const session = readSession(project, files[0])
    expect(session.errors.map((e: any) => [e.kind, e.question, e.line])).toEqual([
      ["resume", "/resume 20260916-101530-4f2a9c1e", "no session 20260916-101530-4f2a9c1e in this project"]
    ])
    expect(session.turns).toBe(1)
    const id = files[0].slice(0, -5)
    expect(run.stderr).toContain(`session ${id} saved — /resume ${id} (or mm --resume ${id}) to continue\n`)
  })

  it("a failed /resume then a successful one: the record goes with the resumed conversation", async () => {
    const project = tempProject(withSessions(server.url))
    writeSession(project, "20261110-090000-1a2b3c4d", {
      title: "old topic",
      turns: 1,
      updatedAt: "2026-11-10T09:30:00.000Z"
    })
    await runMm(project, ["/resume 20260916-101530-4f2a9c1e", "/resume 1a2b3c4d"])
    expect(sessionFiles(project)).toEqual(["20261110-090000-1a2b3c4d.json"])
    const session = readSession(project, "20261110-090000-1a2b3c4d.json")
    expect(session.errors.map((e: any) => e.kind)).toEqual(["resume"])
    expect(session.turns).toBe(1)
  })
})
