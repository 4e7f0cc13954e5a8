import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionFiles, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

/** A terminal window's size: a pseudo-terminal made by `script` has none. */
const WINDOW = { columns: 200, rows: 50 }

type Saved = {
  turns: number
  messages: Array<{ role: string; content: string | null; note?: boolean; summary?: boolean }>
  changes?: Array<{ turn: number; tool_call_id?: string; path: string }>
  forkedFrom?: { id: string; turn: number }
}

const questionsOf = (session: Saved) =>
  session.messages.filter((m) => m.role === "user" && m.note !== true && m.summary !== true).map((m) => m.content)

const idOf = (file: string) => file.slice(0, 24)

/** The screen's text as lines a wide terminal would show (a long line wraps where a space was). */
const flat = (text: string) => text.replace(/\r/g, "").replace(/\n(?!> )/g, " ")

/** What the model was asked in the last request: its questions, in order. */
const lastAsked = (server: FakeModelServer) =>
  server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "user").map((
    m: { content: string }
  ) => m.content)

/**
 * Turn N is the N-th question the conversation holds, on every surface. The conversation:
 * question 1 writes a.txt; question 2 is cancelled (kept, with its partial answer: turn 2);
 * a question that fails leaves the conversation (no turn); question 3 writes b.txt, question 4
 * a.txt again. So the changes are of turns 1, 3 and 4, and every command says so.
 */
describe("one numbering of turns", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a cancelled turn counts and a failed one does not, in every command, listing and record", async () => {
    const project = tempProject(withSessions(server.url))
    const mm = new PtyMm(project, { COLUMNS: String(WINDOW.columns), LINES: String(WINDOW.rows) }, [], WINDOW)
    await mm.waitFor(/> /)

    const answered = async (question: string, answer: string, write?: [string, string]) => {
      if (write !== undefined) {
        server.push({
          toolCalls: [{
            id: `call_${write[0]}_${question.at(-1)}`,
            name: "write_file",
            arguments: { path: write[0], content: write[1] }
          }]
        })
      }
      server.push({ text: answer })
      const mark = mm.out.length
      mm.type(`${question}\r`)
      await mm.waitForText(new RegExp(`${answer}[\\s\\S]*> `), mark)
    }
    await answered("question 1", "answer 1", ["a.txt", "a1\n"])
    // question 2: cancelled while its answer streams
    server.push({ text: ["half ", "an ", "answer ", "that ", "never ", "ends "], chunkDelayMs: 400 })
    let mark = mm.out.length
    mm.type("question 2\r")
    await mm.waitFor(/half /, mark)
    mm.type("\x03")
    await mm.waitFor(/cancelled/, mark)
    await mm.waitFor(/> /, mm.out.indexOf("cancelled", mark))
    // a failed question: no turn
    server.push({ kind: "status", status: 500, body: { error: { message: "kaput" } } })
    mark = mm.out.length
    mm.type("a question that fails\r")
    await mm.waitForText(/kaput[\s\S]*> /, mark)
    await answered("question 3", "answer 3", ["b.txt", "b3\n"])
    await answered("question 4", "answer 4", ["a.txt", "a4\n"])
    expect(lastAsked(server)).toEqual(["question 1", "question 2", "question 3", "question 4"])

    // the file: four turns held, change records numbered by their question
    const [file] = sessionFiles(project)
    const id = idOf(file)
    const saved: Saved = readSession(project, file)
    expect(questionsOf(saved)).toEqual(["question 1", "question 2", "question 3", "question 4"])
    expect(saved.turns).toBe(4)
    expect(saved.changes!.map((c) => [c.tool_call_id, c.path, c.turn])).toEqual([
      ["call_a.txt_1", "a.txt", 1],
      ["call_b.txt_3", "b.txt", 3],
      ["call_a.txt_4", "a.txt", 4]
    ])

    // /changes lists turns 1, 3 and 4; /changes 3 shows b.txt
    mark = mm.out.length
    mm.type("/changes\r")
    const changes = (await mm.waitForText(/turn 4 {2}"question 4"\s+a\.txt[^\n]*\s+> /, mark)).replace(/\r/g, "")
    expect(changes).toMatch(/turn 1 {2}"question 1"\n {2}a\.txt[^\n]*\nturn 3 {2}"question 3"\n {2}b\.txt/)
    expect(changes).not.toMatch(/turn 2 /)
    mark = mm.out.length
    mm.type("/changes 3\r")
    const diffs = await mm.waitForText(/\+b3[\s\S]*> /, mark)
    expect(diffs).toContain("b.txt")
    expect(diffs).not.toContain("a.txt")

    // /undo 2 takes back turns 4 and 3 (asked, then declined)
    mark = mm.out.length
    mm.type("/undo 2\r")
    await mm.waitForText(/undo turns 4, 3\? \[y\]es \[n\]o: /, mark)
    mm.type("n")
    await mm.waitForText(/nothing undone[\s\S]*> /, mark)

    // Esc Esc lists the four questions under the same numbers; Esc stays
    mark = mm.out.length
    mm.type("\x1b\x1b")
    const list = await mm.waitForText(/rewind to just before which question\?[\s\S]*turn 4 {2}question 4/, mark)
    for (const n of [1, 2, 3]) expect(list).toContain(`turn ${n}  question ${n}`)
    mark = mm.out.length
    mm.type("\x1b")
    await mm.waitForText(/> /, mark)

    // /fork 3 keeps questions 1–3 and the changes of turns 1 and 3
    mark = mm.out.length
    mm.type("/fork 3\r")
    const forked = flat(await mm.waitForText(/turn\(s\) stay in \S+\s+> /, mark))
    expect(forked).toContain(`⑂ forked from ${id} at turn 3: this conversation continues as`)
    expect(forked).toContain(`3 turn(s) kept; the 1 later turn(s) stay in ${id}`)
    const forkId = /continues as (\S+) —/.exec(forked)![1]
    const fork: Saved = readSession(project, `${forkId}.json`)
    expect(fork.forkedFrom).toEqual({ id, turn: 3 })
    expect(fork.turns).toBe(3)
    expect(questionsOf(fork)).toEqual(["question 1", "question 2", "question 3"])
    expect(fork.changes!.map((c) => c.turn)).toEqual([1, 3])

    // /rewind 3 in the fork: turn 3 leaves (its b.txt goes), turns 1–2 stay
    mark = mm.out.length
    mm.type("/rewind 3\r")
    const preview = await mm.waitForText(/rewind to before turn 3\? \[y\]es \[n\]o: /, mark)
    expect(preview).toMatch(/turn 3 {2}"question 3"/)
    expect(preview).not.toMatch(/turn 4 /)
    expect(preview).toContain("delete b.txt")
    mm.type("y")
    const rewound = flat(
      await mm.waitForText(/at turn 2: this conversation continues as \S+ —[\s\S]*> question 3\s*$/, mark)
    )
    expect(rewound).toContain(`⑂ forked from ${forkId} at turn 2`)
    const rewoundId = /continues as (\S+) —/.exec(rewound)![1]
    expect(fs.existsSync(path.join(project, "b.txt"))).toBe(false)
    const back: Saved = readSession(project, `${rewoundId}.json`)
    expect(back.forkedFrom).toEqual({ id: forkId, turn: 2 })
    expect(back.turns).toBe(2)
    expect(questionsOf(back)).toEqual(["question 1", "question 2"])

    // /sessions: the same counts; /resume of the original: the line says what came back
    mark = mm.out.length
    mm.type("\x15/sessions\r")
    const sessions = await mm.waitForText(new RegExp(`${id}[^\\n]*\\n[\\s\\S]*> `), mark)
    expect(sessions).toMatch(new RegExp(`${id} [^\\n]* 4 turn\\(s\\)  question 1`))
    expect(sessions).toMatch(new RegExp(`${forkId} [^\\n]* 3 turn\\(s\\)  question 1`))
    mark = mm.out.length
    mm.type(`/resume ${id}\r`)
    const resumed = await mm.waitForText(/resumed [^\n]*\n[\s\S]*> /, mark)
    const held = readSession(project, file).messages.filter((m: { role: string }) => m.role !== "system").length
    expect(resumed).toContain(`↩️ resumed ${id} — ${held} message(s), started with "question 1"`)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)

    // mm sessions show: "4 turn(s)" over questions numbered 1–4, the cancelled one as turn 2
    const show = await runMm(project, [], ["sessions", "show", id])
    expect(show.code).toBe(0)
    expect(show.stdout).toContain("- 4 turn(s) · 1 error(s)")
    expect([...show.stdout.matchAll(/^## (\d+)\. Question\n\n> (.*)$/gm)].map((m) => `${m[1]} ${m[2]}`)).toEqual([
      "1 question 1",
      "2 question 2",
      "3 question 3",
      "4 question 4"
    ])
    // the failure's record says how many turns there were when it came
    expect(show.stdout).toMatch(/after turn 2 · "a question that fails"/)

    // mm sessions: the listing's counts
    const listing = await runMm(project, [], ["sessions"])
    expect(listing.stdout).toMatch(new RegExp(`${id} [^\\n]* 4 turn\\(s\\)`))
    expect(listing.stdout).toMatch(new RegExp(`${forkId} [^\\n]* 3 turn\\(s\\)`))
    expect(listing.stdout).toMatch(new RegExp(`${rewoundId} [^\\n]* 2 turn\\(s\\)`))

    // the --resume picker: the same count on the original's line
    const picker = new PtyMm(
      project,
      { COLUMNS: String(WINDOW.columns), LINES: String(WINDOW.rows) },
      ["--resume"],
      WINDOW
    )
    // the newest first, its details shown while it is the one chosen; typing an id filters to it
    await picker.waitForText(new RegExp(`2 turn\\(s\\) · ${rewoundId}`))
    let at = picker.out.length
    picker.type(forkId)
    await picker.waitForText(new RegExp(`3 turn\\(s\\) · ${forkId}`), at)
    at = picker.out.length
    picker.type("\x7f".repeat(forkId.length) + id)
    await picker.waitForText(new RegExp(`4 turn\\(s\\) · ${id}`), at)
    picker.type("\x1b")
    expect(await picker.exited).toBe(130)

    // mm --fork ID:3 -p: questions 1–3, then the new one
    server.push({ text: "answer 5" })
    const cli = await runMm(project, [], ["--fork", `${id}:3`, "-p", "question 5"])
    expect(cli.code).toBe(0)
    expect(lastAsked(server)).toEqual(["question 1", "question 2", "question 3", "question 5"])
    const cliFork = sessionFiles(project).map((f) => readSession(project, f) as Saved & { id: string }).find((s) =>
      questionsOf(s).includes("question 5")
    )!
    expect(cliFork.forkedFrom).toEqual({ id, turn: 3 })
    expect(cliFork.turns).toBe(4)
    expect(cliFork.changes!.map((c) => c.turn)).toEqual([1, 3])
    expect(stripAnsi(cli.stdout)).toContain("answer 5")
  })
})
