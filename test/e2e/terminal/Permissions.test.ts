// Remembered approvals across runs: an [a]lways answered in the terminal is kept in the user's
// state ($XDG_STATE_HOME/mm/projects/<hash>/permissions.json) and applies to a later `mm -p`;
// /permissions lists it and revokes it; a hand-broken file is refused in one line and trusted
// in nothing. A .mm/permissions.json the project ships grants nothing, is named in one line,
// and /permissions import offers only the rows mm would offer itself.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { rememberedFileOf } from "../../../src/approvals/RememberedApprovals"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { runMm, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const ALLOW = /allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /

/** Asks before bash; a generous watchdog, for a loaded machine. */
const asking = (url: string) =>
  tempProject(
    withSessions(url).map((l) =>
      l === "permissions: allow" ? "permissions: ask" : l.startsWith("watchdogTimeout") ? "watchdogTimeout: 60" : l
    )
  )

describe("remembered approvals", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const lastToolResult = (): string =>
    server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool").at(-1).content

  /** `mm -p` asking the model's bash call `command`: what the tool returned to the model, and stderr. */
  const printRun = async (project: string, command: string) => {
    server.push({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "ok" })
    const run = await runMm(project, [], ["-p", "run it"])
    return { result: lastToolResult(), stderr: stripAnsi(run.stderr) }
  }

  it("an always survives a restart, applies to mm -p, is listed and revoked by /permissions", async () => {
    const project = asking(server.url)
    const file = rememberedFileOf(project)
    // 1. the terminal: [a]lways on a harmless command, the preview saying what it covers (a word
    // prefix is offered only when the bash parser, dist/mm-bash.cjs and its .wasm files, loaded)
    const first = new PtyMm(project)
    await first.waitFor(/> /)
    server.push({ toolCalls: [{ name: "bash", arguments: { command: "ls" } }] }, { text: "done one" })
    first.type("say it\r")
    const asked = await first.waitForText(ALLOW)
    expect(asked).toContain("always: `ls` with read-only options, on paths inside the project")
    first.type("a")
    await first.waitForText(/done one/)
    first.type("\x04")
    await first.exit()
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
      version: 1,
      project,
      approvals: [{ _tag: "CommandPrefix", words: ["ls"] }]
    })
    expect(fs.existsSync(path.join(project, ".mm/permissions.json"))).toBe(false)

    // 2. a later mm -p: covered without asking; another command is still refused
    expect((await printRun(project, "ls -a")).result).toContain("agent.yaml")
    expect((await printRun(project, "ls > /tmp/x")).result).toMatch(/^not approved/)
    expect((await printRun(project, "ls ..")).result).toMatch(/^not approved/)
    expect((await printRun(project, "echo other")).result).toMatch(/^not approved/)

    // 3. /permissions lists it; /permissions rm 1 revokes it, in the file too
    const second = new PtyMm(project)
    await second.waitFor(/> /)
    second.type("/permissions\r")
    const listed = await second.waitForText(/1\. bash: `ls` with read-only options, on paths inside the project/)
    expect(listed).toContain(`1 remembered approval(s), in ${file} — /permissions rm N revokes one`)
    let mark = second.out.length
    second.type("/permissions rm 1\r")
    await second.waitForText(/revoked 1: bash: `ls` with read-only options/, mark)
    mark = second.out.length
    second.type("/permissions rm 7\r")
    await second.waitForText(/no remembered approval 7/, mark)
    second.type("\x04")
    await second.exit()
    expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({ version: 1, project, approvals: [] })
    expect((await printRun(project, "ls -a")).result).toMatch(/^not approved/)
  })

  it("a hand-broken permissions.json is refused in one line and trusted in nothing", async () => {
    const project = asking(server.url)
    const file = rememberedFileOf(project)
    fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    // one valid entry next to one edited in: the whole file is refused, the valid one included
    const broken = JSON.stringify({
      version: 1,
      project,
      approvals: [{ _tag: "CommandPrefix", words: ["echo", "hi"] }, { _tag: "CommandPrefix", words: [] }]
    })
    fs.writeFileSync(file, broken)
    const run = await printRun(project, "echo hi there")
    expect(run.result).toMatch(/^not approved/)
    const lines = run.stderr.split("\n").filter((l) => l.includes("permissions.json"))
    expect(lines).toHaveLength(1)
    expect(lines[0]).toMatch(
      /remembered approvals not used: .*permissions\.json is not a valid permissions file .*fix or delete it/
    )
    fs.writeFileSync(file, "{ not json")
    expect((await printRun(project, "echo hi there")).stderr).toMatch(/is not a valid permissions file/)
    // never overwritten by a later always
    expect(fs.readFileSync(file, "utf8")).toBe("{ not json")
  })

  /** A project that ships `.mm/permissions.json` with these rows, as a cloned repository could; its text. */
  const shipping = (rows: (project: string) => ReadonlyArray<unknown>) => {
    const project = asking(server.url)
    const shipped = path.join(project, ".mm/permissions.json")
    fs.mkdirSync(path.dirname(shipped), { recursive: true })
    const text = JSON.stringify({ version: 1, approvals: rows(project) })
    fs.writeFileSync(shipped, text)
    return { project, shipped, text }
  }

  it("a shipped .mm/permissions.json grants nothing: mm -p refuses bash, the terminal asks, each says so once", async () => {
    const { project, shipped, text } = shipping(() => [
      { _tag: "Tool", name: "bash" },
      { _tag: "CommandPrefix", words: ["rm"] }
    ])
    const keep = path.join(project, "keep.txt")
    fs.writeFileSync(keep, "kept")
    const ignored = `.mm/permissions.json in this project is ignored: approvals are kept in ${
      rememberedFileOf(project)
    }; /permissions import shows its rows`

    // mm -p under ask: both calls refused (no terminal), the line said once on stderr
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "rm keep.txt" } }] },
      { toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] },
      { text: "ok" }
    )
    const run = await runMm(project, [], ["-p", "run it"])
    const results = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
    expect(results.map((m: { content: string }) => m.content)).toEqual([
      expect.stringMatching(/^not approved/),
      expect.stringMatching(/^not approved/)
    ])
    expect(stripAnsi(run.stderr).split("\n").filter((l) => l.includes("permissions.json"))).toEqual([ignored])
    expect(fs.readFileSync(keep, "utf8")).toBe("kept")

    // the terminal: the line shown, and rm asked
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    server.push({ toolCalls: [{ name: "bash", arguments: { command: "rm keep.txt" } }] }, { text: "left alone" })
    mm.type("remove it\r")
    const asked = await mm.waitForText(ALLOW)
    expect(asked).toContain(".mm/permissions.json in this project is ignored")
    mm.type("n")
    await mm.waitForText(/left alone/)
    mm.type("\x04")
    await mm.exit()
    expect(fs.readFileSync(keep, "utf8")).toBe("kept")
    expect(fs.readFileSync(shipped, "utf8")).toBe(text)
  })

  it("/permissions import shows each row, imports on y only what mm would offer, and leaves the file", async () => {
    const { project, shipped, text } = shipping((project) => [
      { _tag: "Tool", name: "bash" },
      { _tag: "ExactCommand", command: "echo imported" },
      { _tag: "File", path: path.join(project, ".git", "config") },
      { _tag: "CommandPrefix", words: ["ls", "-la"] },
      { _tag: "Shell", command: "x" }
    ])
    const file = rememberedFileOf(project)
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    mm.type("/permissions import\r")
    const QUESTION = /import 1 approval\(s\)\? \[y\]es \[n\]o/
    const shown = await mm.waitForText(QUESTION)
    expect(shown).toContain(".mm/permissions.json in this project holds 5 row(s); 1 can be imported")
    expect(shown).toMatch(/1\. refused +tool: every bash call — bash is built in/)
    expect(shown).toMatch(/2\. import +bash, this exact command only: echo imported/)
    expect(shown).toMatch(/3\. refused +file: \.git\/config — outside this project, or one of/)
    expect(shown).toMatch(/4\. refused +bash: `ls -la` …, which covers nothing now: .* — mm would not offer it/)
    expect(shown).toMatch(/5\. refused +\{"_tag":"Shell","command":"x"\} — not an approval mm knows/)
    let mark = mm.out.length
    mm.type("n")
    await mm.waitForText(/nothing imported/, mark)
    expect(fs.existsSync(file)).toBe(false)

    mark = mm.out.length
    mm.type("/permissions import\r")
    await mm.waitForText(QUESTION, mark)
    mm.type("y")
    await mm.waitForText(/imported 1 approval\(s\) into .*; \.mm\/permissions\.json is left as it is/, mark)
    mark = mm.out.length
    mm.type("/permissions\r")
    const listed = await mm.waitForText(/is ignored/, mark)
    expect(listed).toContain(`1 remembered approval(s), in ${file} — /permissions rm N revokes one`)
    expect(listed).toContain("1. bash, this exact command only: echo imported")
    mm.type("\x04")
    await mm.exit()
    expect(JSON.parse(fs.readFileSync(file, "utf8")).approvals).toEqual([
      { _tag: "ExactCommand", command: "echo imported" }
    ])
    expect(fs.readFileSync(shipped, "utf8")).toBe(text)
    // the imported row applies to a later mm -p; what was refused still is
    expect((await printRun(project, "echo imported")).result).toContain("imported")
    expect((await printRun(project, "echo other")).result).toMatch(/^not approved/)
  })

  it("Shift-Tab at the prompt cycles the permission modes (plan last) for this run, and says which", async () => {
    const project = asking(server.url)
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: edits — file edits inside the project go ahead/)
    // in edits, a write inside the project goes ahead unasked
    server.push({ toolCalls: [{ name: "write_file", arguments: { path: "a.txt", content: "A" } }] }, { text: "wrote" })
    let mark = mm.out.length
    mm.type("write it\r")
    const screen = await mm.waitForText(/wrote/, mark)
    expect(screen).not.toMatch(ALLOW)
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("A")
    await mm.waitForText(/wrote[\s\S]*> /, mark)
    mark = mm.out.length
    mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: auto — edits inside the project and sandboxed commands go ahead/, mark)
    mark = mm.out.length
    mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: allow — nothing is asked/, mark)
    mark = mm.out.length
    mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: plan — only what reads runs; the model plans and changes nothing/, mark)
    mark = mm.out.length
    mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: ask — commands and edits are asked/, mark)
    // back in ask: the next write is asked again
    server.push({ toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "B" } }] }, { text: "fine" })
    mark = mm.out.length
    mm.type("write another\r")
    await mm.waitForText(ALLOW, mark)
    mm.type("n")
    await mm.waitForText(/fine/, mark)
    mm.type("\x04")
    await mm.exit()
  })
})
