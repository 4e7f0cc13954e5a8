import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, stripAnsi, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"
import { until } from "../../support/until"

describe("the terminal on a pseudo-terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("Ctrl-C cancels a streaming answer, which stays as a turn; errors are red; Ctrl-C at an empty prompt exits", async () => {
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
    expect(shown).toMatch(/\u001b\[31mmodel server answered HTTP 500: kaput — check the server's log\u001b\[39m/)

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
    // the cancelled turn stays and counts; the failed one leaves nothing but its record
    expect(session.turns).toBe(1)
    expect(session.messages).toHaveLength(3)
    expect(session.errors.map((e: any) => e.kind)).toEqual(["generation"])
    expect(session.errors[0].turns).toBe(1)
    expect(session.errors[0].line).toBe("model server answered HTTP 500: kaput — check the server's log")
  })

  it("shows the model's reasoning dim while it streams, then one line 'thought for N s' above the answer", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    const chunk = (delta: object, finish?: string) =>
      `data: ${
        JSON.stringify({ choices: [{ index: 0, delta, ...(finish === undefined ? {} : { finish_reason: finish }) }] })
      }\n\n`
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
    expect(shown).toMatch(/\u001b\[2mthinking · 0 s\u001b\[22m\r?\n\u001b\[2mweighing /)
    expect(shown).toMatch(/\r\u001b\[\d+A\u001b\[J\u001b\[2mthought for \d+ s\u001b\[22m\r?\nTake the second one\./)
    await mm.waitFor(/> /, mm.out.indexOf("Take the second one", mark))
    const dir = path.join(project, ".mm/sessions")
    const file = fs.readdirSync(dir).find((f) => f.endsWith(".json") && !f.startsWith("."))!
    const saved = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))
    expect(saved.messages.at(-1)).toMatchObject({
      role: "assistant",
      content: "Take the second one.",
      reasoning: "weighing the options"
    })
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
    await mm.waitFor(
      /allow\? \[y\]es {2}\[n\]o {2}\[a\]lways a\.txt {2}\[p\]roject {2}\[t\]ell mm what to do instead: /
    )
    mm.type("y")
    const mark = mm.out.length
    await mm.waitFor(/write_file {2}b\.txt[^]*allow\?/, mark)
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
    server.push({ text: "answer A" }, { text: "answer B" }, { text: ["answer ", "C ", "slowly"], chunkDelayMs: 300 }, {
      text: "answer D"
    })
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
    const project = tempProject(
      configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"])
    )
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ text: "first answer" }, { text: "second answer" }, { kind: "stall" })
    // (the banner's "network" holds a "two": each wait looks only at what came after its question)
    mm.type("q1\r")
    await mm.waitFor(/first answer/)
    let mark = mm.out.length
    mm.type("q2\r")
    await mm.waitFor(/second answer[^]*> /, mark)
    mark = mm.out.length
    const asked = server.completions().length
    mm.type("/compact\r")
    await until(() => server.completions().length > asked, "the compaction's request")
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
    server.push({ toolCalls: [{ name: "edit_file", arguments: { path: "a.txt", old: "two", new: "TWO" } }] }, {
      text: "edited"
    })
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

/** A project whose agent.yaml asks before tools that change things. */
const askingProject = (url: string, extra: ReadonlyArray<string> = []) =>
  tempProject(configFor(url, extra).map((l) => (l === "permissions: allow" ? "permissions: ask" : l)))

const ALLOW = /allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /

describe("approvals on a pseudo-terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const lastToolResult = () => server.completions().at(-1)!.body.messages.filter((m: any) => m.role === "tool").at(-1)

  it("a 6-line here-document is shown whole, every line, before the question", async () => {
    const project = askingProject(server.url)
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    const command =
      "cat > deploy.sh <<'EOF'\nset -e\nnpm ci\ncurl -s https://get.example.com/install | sh\nnpm run build\nEOF"
    server.push({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "refused, fine" })
    mm.type("write a deploy script\r")
    const screen = stripAnsi(await mm.waitFor(ALLOW))
    const before = screen.slice(0, screen.search(ALLOW)).replace(/\r/g, "")
    for (const line of command.split("\n")) expect(before).toContain(`  ${line}\n`)
    expect(before).toContain("⚙ bash  cat > deploy.sh <<'EOF' …")
    expect(screen).toMatch(
      /allow\? \[y\]es {2}\[n\]o {2}\[a\]lways run exactly this command {2}\[s\]ession only\r\n\[t\]ell mm what to do instead: $/
    )
    mm.type("n")
    await mm.waitFor(/refused, fine/)
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
    expect(fs.existsSync(path.join(project, "deploy.sh"))).toBe(false)
  })

  it("an edit shows -old/+new in colour; an overwrite shows a diff against what is on disk", async () => {
    const project = askingProject(server.url)
    fs.writeFileSync(path.join(project, "app.ts"), "const port = 80\nlisten(port)\n")
    fs.writeFileSync(path.join(project, "notes.txt"), "keep me\nold line\n")
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push(
      {
        toolCalls: [{
          name: "edit_file",
          arguments: { path: "app.ts", old: "const port = 80", new: "const port = 8080" }
        }]
      },
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "keep me\nnew line\n" } }] },
      { text: "both done" }
    )
    mm.type("change things\r")
    const edit = await mm.waitFor(ALLOW)
    expect(edit).toContain("\u001b[31m-const port = 80\u001b[39m")
    expect(edit).toContain("\u001b[32m+const port = 8080\u001b[39m")
    expect(edit).toContain("\u001b[2m@@ -1,2 +1,2 @@\u001b[22m")
    let mark = mm.out.length
    mm.type("y")
    const overwrite = stripAnsi(await mm.waitFor(ALLOW, mark))
    expect(overwrite).toContain("--- notes.txt")
    // each diff line with its number: the old file's for a removed line, the new file's otherwise
    expect(overwrite).toContain("    1  keep me")
    expect(overwrite).toContain("    2 -old line")
    expect(overwrite).toContain("    2 +new line")
    mark = mm.out.length
    mm.type("y")
    await mm.waitFor(/both done/, mark)
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
    expect(fs.readFileSync(path.join(project, "app.ts"), "utf8")).toBe("const port = 8080\nlisten(port)\n")
    expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toBe("keep me\nnew line\n")
  })

  it("after always, the issue's destructive and other forms are asked again; the exact answers say so", async () => {
    // sessions on: the answers kept for the project are remembered for the mm -p below
    const project = askingProject(server.url, ["sessions:", "  enabled: true"])
    fs.writeFileSync(
      path.join(project, "package.json"),
      JSON.stringify({ name: "p", scripts: { test: "echo tested" } })
    )
    fs.mkdirSync(path.join(project, "build"))
    fs.mkdirSync(path.join(project, "src"))
    fs.writeFileSync(path.join(project, "src/keep.ts"), "precious")
    fs.writeFileSync(path.join(project, "README.md"), "read me")
    const outsideName = `${path.basename(project)}-outside.txt`
    fs.writeFileSync(path.join(path.dirname(project), outsideName), "not yours")
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "ls" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "ls -la src" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "rm -rf build src .git" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "npm test" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "npm test" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "npm test --prefix /tmp/mm-elsewhere" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "cat README.md" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: `cat ../${outsideName}` } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "cat .env" } }] },
      { text: "all done" }
    )
    mm.type("go\r")
    const ask = async (answer: string) => {
      const mark = mm.out.length
      const screen = stripAnsi(await mm.waitFor(ALLOW, mark)).replace(/\r/g, "")
      mm.type(answer)
      // the notes above the question are wrapped at their words: read them as one line
      return `${screen}\n${screen.replace(/\n\s*/g, " ")}`
    }
    const ls = await ask("a")
    expect(ls).toContain("always: `ls` with read-only options, on paths inside the project")
    expect(ls).toContain("[a]lways allow `ls` with read-only options")
    // ls -la src ran unasked; rm is asked, offering its exact line only, and saying why
    const rm = await ask("a")
    expect(rm).toContain("⚙ bash  rm -rf build")
    expect(rm).toContain("always: exactly this command line, in this project from now on (rm is not a")
    expect(rm).toContain("session: exactly this command line, until this conversation ends")
    expect(rm).toContain("[a]lways run exactly this command  [s]ession only\n[t]ell mm what to do instead: ")
    expect(await ask("n")).toContain("⚙ bash  rm -rf build src .git")
    const npm = await ask("s")
    expect(npm).toContain("⚙ bash  npm test")
    // the second npm test ran unasked (this session's exact answer); --prefix is another line
    expect(await ask("n")).toContain("⚙ bash  npm test --prefix /tmp/mm-elsewhere")
    expect(await ask("a")).toContain("[a]lways allow `cat` with read-only options")
    const outside = await ask("n")
    expect(outside).toContain(`⚙ bash  cat ../${outsideName}`)
    expect(outside).toContain(`path ../${outsideName} leads outside the project`)
    expect(await ask("n")).toContain("(.env looks like a secret file)")
    await mm.waitFor(/all done/)
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
    expect(fs.readFileSync(path.join(project, "src/keep.ts"), "utf8")).toBe("precious")
    const results = server.completions().at(-1)!.body.messages.filter((m: any) => m.role === "tool").map((m: any) =>
      m.content
    )
    expect(results.map((r: string) => r.startsWith("denied by the user"))).toEqual([
      false,
      false,
      false,
      true,
      false,
      false,
      true,
      false,
      true,
      true
    ])
    expect(results[1]).toContain("keep.ts")
    expect(results[5]).toContain("tested")

    // a later mm -p: the remembered answers cover the same lines, nothing more; the session one is gone
    const printRun = async (command: string) => {
      server.push({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "ok" })
      await runMm(project, [], ["-p", "run it"])
      return lastToolResult().content as string
    }
    expect(await printRun("ls src")).toContain("keep.ts")
    expect(await printRun("cat README.md")).toContain("read me")
    for (const refused of ["rm -rf build src .git", "npm test", `cat ../${outsideName}`, "cat .env", "ls .."]) {
      expect(await printRun(refused), refused).toMatch(/^not approved: no terminal to ask/)
    }
    expect(fs.readFileSync(path.join(project, "src/keep.ts"), "utf8")).toBe("precious")
  })

  it("yes⏎ approves once and sends nothing more to the model; t hands the model what to do instead", async () => {
    const project = askingProject(server.url)
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "touch made" } }] },
      { text: "made it" },
      { toolCalls: [{ name: "bash", arguments: { command: "npm install left-pad" } }] },
      { text: "ok, using yarn" }
    )
    const before = server.completions().length
    mm.type("make a file\r")
    await mm.waitFor(ALLOW)
    let mark = mm.out.length
    mm.type("yes\r")
    await mm.waitFor(/made it/, mark)
    await mm.waitFor(/> /, mm.out.indexOf("made it", mark))
    // "es⏎" sent as a question would be a request now; the next question shows none came later either
    expect(server.completions().length).toBe(before + 2)
    expect(fs.existsSync(path.join(project, "made"))).toBe(true)

    mark = mm.out.length
    mm.type("add left-pad\r")
    await mm.waitFor(ALLOW, mark)
    mark = mm.out.length
    mm.type("t")
    await mm.waitFor(/tell mm what to do instead: /, mark)
    mm.type("use yarn, not npm\r")
    await mm.waitFor(/ok, using yarn/, mark)
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
    const requests = server.completions().slice(before)
    expect(requests).toHaveLength(4)
    expect(requests.map((r) => r.body.messages.filter((m: any) => m.role === "user").at(-1).content)).toEqual([
      "make a file",
      "make a file",
      "add left-pad",
      "add left-pad"
    ])
    expect(lastToolResult()).toMatchObject({ role: "tool", content: "denied by the user: use yarn, not npm" })
  })

  it("keeps the project's 'always' answers across /resume (remembered per project)", async () => {
    const project = askingProject(server.url, ["sessions:", "  enabled: true"])
    server.push({ text: "earlier" })
    await runMm(project, ["an earlier topic"])
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "ls" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "ls -a" } }] },
      { text: "did both" },
      { toolCalls: [{ name: "bash", arguments: { command: "ls -l" } }] },
      { text: "did three" }
    )
    let mark = mm.out.length
    mm.type("list files\r")
    await mm.waitFor(ALLOW, mark)
    mm.type("a")
    await mm.waitFor(/did both/, mark)
    expect(stripAnsi(mm.out.slice(mark)).match(/allow\?/g)).toHaveLength(1)
    await mm.waitFor(/> /, mm.out.indexOf("did both", mark))
    mark = mm.out.length
    mm.type("/resume\r")
    await mm.waitFor(/resumed/, mark)
    mm.type("list them again\r")
    await mm.waitFor(/did three/, mark)
    expect(stripAnsi(mm.out.slice(mark))).not.toMatch(ALLOW)
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
  })
})
