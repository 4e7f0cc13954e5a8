import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, stripAnsi, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

/** A project whose agent.yaml asks before tools that change things. */
const askingProject = (url: string) =>
  tempProject(configFor(url).map((l) => (l === "permissions: allow" ? "permissions: ask" : l)))

const ALLOW = /allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const lastQuestion = (server: FakeModelServer) => server.completions().at(-1)!.body.messages.at(-1)

describe("what the user types is never lost nor hidden", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a question typed 100 ms after the prompt that follows a one-key answer reaches the model", async () => {
    const mm = new PtyMm(askingProject(server.url))
    await mm.waitFor(/> /)
    server.push({ toolCalls: [{ name: "bash", arguments: { command: "touch x" } }] }, { text: "refused, fine" })
    mm.type("make x\r")
    await mm.waitFor(ALLOW)
    const mark = mm.out.length
    mm.type("n")
    await mm.waitForText(/refused, fine[^]*\n\r*> /, mark)
    await pause(100)
    server.push({ text: "next answer" })
    mm.type("next question\r")
    await mm.waitFor(/next answer/, mark)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "next question" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("a question typed with its Enter as the banner's last lines show, before the prompt, is sent", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    server.push({ text: "answered early" })
    // the keyboard is read from the banner on: the line editor is made as it is written, not at the prompt
    await mm.waitForText(/Ctrl-D to leave/)
    mm.type("early question\r")
    await mm.waitFor(/answered early/)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "early question" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("a question typed with its Enter before mm has drawn anything is sent, not taken for a new line", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    server.push({ text: "answered at once" })
    // typed before the line editor exists: the terminal's own line buffer turns Enter into a line feed
    mm.type("typed first\r")
    await mm.waitFor(/answered at once/)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "typed first" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("text typed while an answer streams is on screen, under it and marked as queued, before the answer ends", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    const words = ["alpha ", "beta ", "gamma ", "delta ", "epsilon ", "zeta ", "eta ", "theta"]
    server.push({ text: words, chunkDelayMs: 250 })
    mm.type("stream please\r")
    await mm.waitFor(/alpha /)
    mm.type("typed ahead")
    const screen = await mm.waitForText(/queued › typed ahead/)
    expect(screen).not.toContain("theta")
    await mm.waitFor(/> (\u001b\[22m)?typed ahead/)
    server.push({ text: "ok" })
    mm.type(" now\r")
    await mm.waitFor(/(J\r?|\n)ok\r\n/)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "typed ahead now" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("Esc on a running command keeps its live lines on screen; the model and /last get its output so far", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    const command = "echo first-line; echo second-line; sleep 30"
    server.push({ toolCalls: [{ name: "bash", arguments: { command } }] })
    mm.type("run it\r")
    await mm.waitForText(/second-line/)
    const mark = mm.out.length
    mm.type("\x1b")
    const cancelled = await mm.waitFor(/⏹ cancelled/, mark)
    // after the live block's last erase, the command's lines are printed for good
    const upToCancel = cancelled.slice(0, cancelled.indexOf("⏹ cancelled") + 11)
    const settled = upToCancel.slice(upToCancel.lastIndexOf("\u001b[J"))
    expect(stripAnsi(settled)).toMatch(/ {2}first-line\r?\n {2}second-line\r?\n⏹ cancelled/)
    let next = mm.out.length
    mm.type("/last\r")
    expect(await mm.waitForText(/\[cancelled by the user\]/, next)).toContain("second-line")
    server.push({ text: "saw it" })
    next = mm.out.length
    mm.type("what happened?\r")
    await mm.waitFor(/saw it/, next)
    const tool = server.completions().at(-1)!.body.messages.find((m: any) => m.role === "tool")
    expect(tool.content).toMatch(/^first-line\nsecond-line\n\[cancelled by the user\]$/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("編集テスト😀, Backspace and ' end' send 編集テスト end: Backspace takes the whole emoji", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    server.push({ text: "got it" })
    mm.type("編集テスト😀")
    await mm.waitFor(/😀/)
    mm.type("\x7f")
    mm.type(" end\r")
    await mm.waitFor(/got it/)
    expect(lastQuestion(server)).toEqual({ role: "user", content: "編集テスト end" })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("/ on an empty line shows the commands with what each does; Tab cycles them and never lists them twice", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), {}, [], { columns: 80, rows: 40 })
    await mm.waitFor(/> /)
    const mark = mm.out.length
    mm.type("/")
    const menu = await mm.waitForText(/\/exit +leave/, mark)
    expect(menu).toMatch(/\/help +this list/)
    expect(menu).toMatch(/\/sessions +list this project's conversations/)
    mm.type("\t")
    await mm.waitForText(/> \/help\r?$/, mark)
    mm.type("\t")
    const after = await mm.waitForText(/> \/sessions\r?$/, mark)
    expect(after.match(/this list/g)).toHaveLength(1)
    mm.type("\r")
    await mm.waitForText(/session/, mm.out.length)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })
})
