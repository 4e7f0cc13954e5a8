import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "./support/FakeModelServer"
import { configFor, stripAnsi, tempProject } from "./support/MmProcess"
import { PtyMm } from "./support/PtyMm"

describe("the terminal on a pseudo-terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("Ctrl-C cancels a streaming answer and records nothing; errors are red; Ctrl-C at an empty prompt exits", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ text: ["one ", "two ", "three ", "four ", "five ", "six "], chunkDelayMs: 400 })
    let mark = mm.out.length
    mm.type("count slowly\r")
    await mm.waitFor(/two /, mark)
    mm.type("\x03")
    await mm.waitFor(/cancelled/, mark)
    await mm.waitFor(/> /, mm.out.indexOf("cancelled", mark))

    server.push({ kind: "status", status: 500, body: { error: { message: "kaput" } } })
    mark = mm.out.length
    mm.type("fail please\r")
    const shown = await mm.waitFor(/kaput[^\n]*\n/, mark)
    expect(shown).toMatch(/\u001b\[31mmodel server answered HTTP 500: kaput\u001b\[39m/)

    mark = mm.out.length
    mm.type("\x03")
    await mm.waitFor(/press Ctrl-C again or Ctrl-D to leave/, mark)
    mm.type("\x03")
    expect(await mm.exit()).toBe(0)

    const dir = path.join(project, ".mm/sessions")
    const [file] = fs.readdirSync(dir).filter((f) => f.endsWith(".json") && !f.startsWith("."))
    const session = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))
    expect(session.messages[1]).toEqual({ role: "user", content: "count slowly" })
    expect(session.messages[2].role).toBe("assistant")
    expect(session.messages[2].content).toMatch(/^one two /)
    expect(session.turns).toBe(0)
    expect(session.errors.map((e: any) => e.kind)).toEqual(["generation"])
    expect(session.errors[0].line).toBe("model server answered HTTP 500: kaput")
  })

  it("shows the model's reasoning dim while it streams, then one line 'thought for N s' above the answer", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    const chunk = (delta: object, finish?: string) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, ...(finish === undefined ? {} : { finish_reason: finish }) }] })}\n\n`
    server.push({
      kind: "raw",
      chunkDelayMs: 300,
      chunks: [
        chunk({ content: "<think>weighing " }),
        chunk({ content: "the options</think>\n\n" }),
        chunk({ content: "Take the second one." }),
        chunk({}, "stop"),
        "data: [DONE]\n\n"
      ]
    })
    const mark = mm.out.length
    mm.type("which one?\r")
    const shown = await mm.waitFor(/Take the second one\./, mark)
    expect(shown).toContain("\u001b[2mweighing \u001b[22m")
    // erased back to the start of the reasoning, then the one dim line, then the answer
    expect(shown).toMatch(/\r\u001b\[J\u001b\[2mthought for \d+ s\u001b\[22m\r?\nTake the second one\./)
    await mm.waitFor(/> /, mm.out.indexOf("Take the second one", mark))
    const dir = path.join(project, ".mm/sessions")
    const file = fs.readdirSync(dir).find((f) => f.endsWith(".json") && !f.startsWith("."))!
    const saved = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))
    expect(saved.messages.at(-1)).toMatchObject({ role: "assistant", content: "Take the second one.", reasoning: "weighing the options" })
    mm.type("\x04")
    await mm.exited
  })

  it("asks with one key before a tool that changes things", async () => {
    const project = tempProject(configFor(server.url).map((l) => (l === "permissions: allow" ? "permissions: ask" : l)))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push(
      { toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
      { toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "B" } }] },
      { text: "wrote a" }
    )
    mm.type("write two files\r")
    await mm.waitFor(/allow write_file  a\.txt\? \[y\]es \[n\]o \[a\]lways: /)
    mm.type("y")
    const mark = mm.out.length
    await mm.waitFor(/allow write_file  b\.txt\?/, mark)
    mm.type("n")
    await mm.waitFor(/wrote a/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("A")
    expect(fs.existsSync(path.join(project, "b.txt"))).toBe(false)
    expect(stripAnsi(mm.out)).toContain("⚙ write_file  a.txt")
    const lastRequest = server.completions().at(-1)!.body
    expect(lastRequest.messages.at(-1)).toMatchObject({ role: "tool", content: "denied by the user" })
  })

  it("a paste of several lines, and a line typed while an answer streams, are all answered in order", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ text: "answer A" }, { text: "answer B" }, { text: ["answer ", "C ", "slowly"], chunkDelayMs: 300 }, { text: "answer D" })
    mm.type("line A\rline B\rline C\r")
    await mm.waitFor(/answer C /)
    mm.type("line D\r")
    await mm.waitFor(/answer D/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    const questions = server
      .completions()
      .slice(-4)
      .map((r) => r.body.messages.at(-1).content)
    expect(questions).toEqual(["line A", "line B", "line C", "line D"])
  })

  it("Ctrl-C during /compact cancels the compaction, not mm", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"]))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ text: "one" }, { text: "two" }, { kind: "stall" })
    mm.type("q1\r")
    await mm.waitFor(/one/)
    mm.type("q2\r")
    await mm.waitFor(/two/)
    const mark = mm.out.length
    mm.type("/compact\r")
    await new Promise((resolve) => setTimeout(resolve, 300))
    mm.type("\x03")
    await mm.waitFor(/cancelled/, mark)
    server.push({ text: "still here" })
    mm.type("q3\r")
    await mm.waitFor(/still here/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })
  it("/undo on a terminal: colored reverse diff, one key to confirm, the file restored", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    fs.writeFileSync(path.join(project, "a.txt"), "one\ntwo\n")
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ toolCalls: [{ name: "edit_file", arguments: { path: "a.txt", old: "two", new: "TWO" } }] }, { text: "edited" })
    let mark = mm.out.length
    mm.type("shout\r")
    await mm.waitFor(/edited/, mark)
    await mm.waitFor(/> /, mm.out.indexOf("edited", mark))
    mark = mm.out.length
    mm.type("/undo\r")
    const preview = await mm.waitFor(/undo turn 1\? \[y\]es \[n\]o: /, mark)
    expect(preview).toContain("\u001b[31m-TWO\u001b[39m")
    mm.type("y")
    await mm.waitFor(/the model is told/, mark)
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("one\ntwo\n")
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
  })
})
