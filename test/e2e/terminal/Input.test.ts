import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const lastQuestion = (server: FakeModelServer) => server.completions().at(-1)!.body.messages.at(-1)

describe("typing on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a bracketed paste of 4 lines is one question; Alt-Enter, Ctrl-J and a trailing \\ add lines; a path-first line is a question", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    const before = server.completions().length
    server.push({ text: "got the trace" }, { text: "two lines" }, { text: "three lines" }, { text: "hosts fixed" })
    mm.type("\x1b[200~Error: boom\r  at f (a.js:1)\r  at g (b.js:2)\r  at h (c.js:3)\x1b[201~")
    await mm.waitFor(/at h \(c\.js:3\)/)
    mm.type("\r")
    await mm.waitFor(/got the trace/)
    let mark = mm.out.length
    mm.type("first line\x1b\rsecond line\r")
    await mm.waitFor(/two lines/, mark)
    mark = mm.out.length
    mm.type("one\nanother \\\rlast\r")
    await mm.waitFor(/three lines/, mark)
    mark = mm.out.length
    mm.type("/etc/hosts is wrong\r")
    await mm.waitFor(/hosts fixed/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const questions = server
      .completions()
      .slice(before)
      .map((request) => request.body.messages.at(-1).content)
    expect(questions).toEqual([
      "Error: boom\n  at f (a.js:1)\n  at g (b.js:2)\n  at h (c.js:3)",
      "first line\nsecond line",
      "one\nanother \nlast",
      "/etc/hosts is wrong"
    ])
  })

  it("Tab completes a command and a session id; Up brings back a line from an earlier run; Ctrl-R finds one", async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ text: "first answer" })
    const first = new PtyMm(project)
    await first.waitFor(/> /)
    first.type("remember the milk\r")
    await first.waitFor(/first answer/)
    first.type("/sessions\r")
    await first.waitFor(/1 session\(s\)/)
    first.type("\x04")
    expect(await first.exit()).toBe(0)
    const history = path.join(project, ".mm/history")
    expect(fs.statSync(history).mode & 0o777).toBe(0o600)
    expect(fs.readFileSync(history, "utf8")).toBe("\"remember the milk\"\n\"/sessions\"\n")
    const [file] = fs.readdirSync(path.join(project, ".mm/sessions")).filter((f) => f.endsWith(".json"))
    const id = file.slice(0, -5)

    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    let mark = mm.out.length
    mm.type("/res\t")
    await mm.waitFor(/\/resume \r/, mark)
    mm.type(`${id.slice(0, 4)}\t`)
    await mm.waitFor(new RegExp(`/resume ${id} \\r`), mark)
    mm.type("\r")
    await mm.waitFor(/resumed[^]*first answer/, mark)
    expect(stripAnsi(mm.out.slice(mark))).toContain("> remember the milk")

    mark = mm.out.length
    mm.type("\x1b[A")
    await mm.waitFor(new RegExp(`/resume ${id}`), mark)
    mm.type("\x1b[A\x1b[A")
    await mm.waitFor(/remember the milk/, mark)
    mm.type("\x15")
    mark = mm.out.length
    mm.type("\x12milk")
    await mm.waitFor(/\(search\) "milk": remember the milk/, mark)
    server.push({ text: "milk again" })
    mm.type("\r")
    await mm.waitFor(/milk again/, mark)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "remember the milk" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("text typed while an answer streams is drawn only on its own queued line, and comes back at the next prompt", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    server.push({ text: ["alpha ", "beta ", "gamma ", "delta"], chunkDelayMs: 250 })
    mm.type("stream please\r")
    await mm.waitFor(/alpha /)
    mm.type("typed ahead")
    await mm.waitFor(/delta/)
    const answer = stripAnsi(mm.out.slice(mm.out.indexOf("alpha"), mm.out.indexOf("delta")))
    expect(answer.replace(/queued › typed ahead/g, "")).not.toContain("typed ahead")
    await mm.waitFor(/> (\u001b\[22m)?typed ahead/)
    server.push({ text: "ok" })
    mm.type(" now\r")
    await mm.waitFor(/(J\r?|\n)ok\r\n/)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "typed ahead now" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("Esc cancels a turn; Ctrl-C at an empty prompt asks for a second press, and leaving names the saved session", async () => {
    const project = tempProject(withSessions(server.url))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ text: ["one ", "two ", "three ", "four ", "five"], chunkDelayMs: 400 })
    mm.type("count\r")
    await mm.waitFor(/two /)
    mm.type("\x1b")
    await mm.waitFor(/cancelled/)
    const mark = mm.out.length
    mm.type("\x03")
    await mm.waitFor(/press Ctrl-C again or Ctrl-D to leave/, mark)
    mm.type("\x03")
    expect(await mm.exit()).toBe(0)
    const [file] = fs.readdirSync(path.join(project, ".mm/sessions")).filter((f) => f.endsWith(".json"))
    const id = file.slice(0, -5)
    expect(stripAnsi(mm.out.slice(mark))).toContain(
      `\nsession ${id} saved — /resume ${id} (or mm --resume ${id}) to continue\r\n`
    )
  })

  it("@path attaches a project file; a missing one is said and nothing is sent; !command runs and is kept as context", async () => {
    const project = tempProject(configFor(server.url))
    fs.writeFileSync(path.join(project, "notes.txt"), "the answer is 42\n")
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    const before = server.completions().length
    let mark = mm.out.length
    mm.type("what does @nothere.txt say\r")
    await mm.waitFor(/@nothere\.txt: no such file \(nothing was sent\)/, mark)
    expect(server.completions().length).toBe(before)

    mark = mm.out.length
    mm.type("!echo shell-said-hi\r")
    await mm.waitFor(/shell-said-hi[^]*> /, mark)
    server.push({ text: "read it" })
    mark = mm.out.length
    mm.type("what does @not\t")
    await mm.waitFor(/@notes\.txt \r/, mark)
    mm.type("say\r")
    await mm.waitFor(/read it/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const messages = server.completions().at(-1)!.body.messages
    expect(messages.at(-2).content).toMatch(
      /^I ran a shell command in the project .*\n\$ echo shell-said-hi\nexit code 0\nshell-said-hi/
    )
    expect(messages.at(-1).content).toBe(
      "what does @notes.txt say\n\n<file path=\"notes.txt\">\nthe answer is 42\n</file>"
    )
  })
})
