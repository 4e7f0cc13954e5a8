import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { parseConfig } from "../../../src/config/ConfigParse"
import { closedPort, type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import {
  configFor,
  MM_BIN,
  readSession,
  sessionFiles,
  sessionsDir,
  stripAnsi,
  tempProject,
  withSessions
} from "../../support/MmProcess"
import { MCP_TEST_SERVER } from "../../support/paths"
import { PtyMm } from "../../support/PtyMm"
import { indexedNames } from "../../support/store-fixtures"

const asking = (lines: ReadonlyArray<string>) => lines.map((l) => (l === "permissions: allow" ? "permissions: ask" : l))

/** mm once, as a script runs it: arguments, then what stdin holds (closed at once). */
const mm = (cwd: string, args: ReadonlyArray<string>, stdin = "", env: Record<string, string | undefined> = {}) =>
  new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
    const child = spawn(process.execPath, [MM_BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: undefined, AGENT_CONFIG: undefined, ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("close", (code) => resolve({ stdout, stderr, code }))
    child.stdin.end(stdin)
  })

describe("mm -p: one answer for scripts", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("prints exactly the answer on stdout, and nothing else anywhere", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: ["The ", "answer ", "is 42."] })
    const run = await mm(project, ["-p", "hi"])
    expect(run.stdout).toBe("The answer is 42.\n")
    expect(run.stderr).toBe("")
    expect(run.code).toBe(0)
    expect(server.completions().at(-1)!.body.messages.at(-1)).toEqual({ role: "user", content: "hi" })
  })

  it("with the server down: nothing on stdout, one line on stderr, exit 1, one generation record in the new session", async () => {
    const project = tempProject(withSessions(`http://127.0.0.1:${await closedPort()}/v1`))
    const run = await mm(project, ["--print", "are you there?"])
    expect(run.stdout).toBe("")
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1)
    expect(run.stderr).toContain("cannot reach the model server")
    expect(run.code).toBe(1)
    const files = sessionFiles(project)
    expect(files).toHaveLength(1)
    const session = readSession(project, files[0])
    expect(session.errors.map((e: any) => [e.kind, e.question])).toEqual([["generation", "are you there?"]])
    expect(session.errors[0].line).toBe(run.stderr.trim())
  })

  it("adds what stdin holds to the question as context; with no text, stdin is the question", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: "looks fine" }, { text: "two" })
    const run = await mm(project, ["-p", "review this"], "diff --git a/x b/x\n+added line\n")
    expect(run.stdout).toBe("looks fine\n")
    expect(server.completions().at(-1)!.body.messages.at(-1)).toEqual({
      role: "user",
      content: "review this\n\ndiff --git a/x b/x\n+added line"
    })
    const alone = await mm(project, ["-p"], "what is 1 + 1?\n")
    expect(alone.stdout).toBe("two\n")
    expect(server.completions().at(-1)!.body.messages.at(-1)).toEqual({ role: "user", content: "what is 1 + 1?" })
    const nothing = await mm(project, ["-p"])
    expect(nothing.code).toBe(2)
    expect(nothing.stderr).toContain("-p needs a question")
  })

  it("--output-format json: one object per event, a tool call with its input and output, then the result", async () => {
    const project = tempProject(withSessions(server.url))
    server.push(
      {
        text: "Let me look. ",
        toolCalls: [{ id: "call-1", name: "bash", arguments: { command: "echo from-the-tool" } }]
      },
      { text: "It printed from-the-tool.", usage: { prompt_tokens: 120, completion_tokens: 7 } }
    )
    const run = await mm(project, ["-p", "--output-format", "json", "run echo"])
    expect(run.code).toBe(0)
    expect(run.stderr).toBe("")
    const events = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    const types = events.map((e) => e.type)
    expect(types[0]).toBe("text")
    expect(types.slice(-2)).toEqual(["turn_finished", "result"])
    const call = events.find((e) => e.type === "tool_call")
    expect(call).toMatchObject({
      id: "call-1",
      name: "bash",
      kind: "execute",
      input: { command: "echo from-the-tool" }
    })
    expect(call.title).toContain("echo from-the-tool")
    const result = events.find((e) => e.type === "tool_result")
    expect(result).toMatchObject({ id: "call-1", name: "bash", status: "completed" })
    expect(result.output).toContain("from-the-tool")
    expect(events.at(-2)).toEqual({
      type: "turn_finished",
      stopReason: "end_turn",
      usage: { promptTokens: 120, completionTokens: 7 }
    })
    const [file] = sessionFiles(project)
    expect(events.at(-1)).toEqual({
      type: "result",
      status: "answered",
      sessionId: file.slice(0, -5),
      answer: "Let me look. \nIt printed from-the-tool.",
      model: "fake-model"
    })
  })

  it("--output-format json: a failed turn is one turn_failed object with line, raw and kind, then the result; exit 1", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ kind: "status", status: 500, body: { error: { message: "kaput" } } })
    const run = await mm(project, ["-p", "--output-format=json", "q"])
    expect(run.code).toBe(1)
    const events = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(events[0]).toMatchObject({
      type: "turn_failed",
      kind: "http",
      line: "model server answered HTTP 500: kaput — check the server's log"
    })
    expect(typeof events[0].raw).toBe("string")
    // sessions are on by default: the failure is recorded in the new session, which the result names
    const [file] = sessionFiles(project)
    expect(events[1]).toEqual({
      type: "result",
      status: "failed",
      sessionId: file.slice(0, -5),
      answer: "",
      model: "fake-model"
    })
  })

  it("approvals: with nobody to ask a tool is refused (said on stderr, stdin never read as an answer); --yes allows it", async () => {
    const project = tempProject(asking(configFor(server.url)))
    server.push({ toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "out.txt", content: "x" } }] }, {
      text: "could not write"
    })
    const refused = await mm(project, ["-p", "write it"], "y\n")
    expect(refused.stdout).toBe("could not write\n")
    expect(refused.stderr).toContain("write_file")
    expect(refused.stderr).toContain("no terminal to ask")
    expect(fs.existsSync(path.join(project, "out.txt"))).toBe(false)
    // "y" was context for the question, not an answer
    const asked = server.completions().at(-2)!.body.messages
    expect(asked.at(-1)).toEqual({ role: "user", content: "write it\n\ny" })

    server.push({ toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "out.txt", content: "x" } }] }, {
      text: "written"
    })
    const allowed = await mm(project, ["-p", "--yes", "write it"])
    expect(allowed.stdout).toBe("written\n")
    expect(allowed.code).toBe(0)
    expect(fs.readFileSync(path.join(project, "out.txt"), "utf8")).toBe("x")
  })

  it("--verbose: tool lines and the session id on stderr; stdout is still only the answer", async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ toolCalls: [{ name: "bash", arguments: { command: "echo hi" } }] }, { text: "done" })
    const run = await mm(project, ["-p", "--verbose", "go"])
    expect(run.stdout).toBe("done\n")
    const [file] = sessionFiles(project)
    const id = file.slice(0, -5)
    expect(run.stderr).toContain("⚙ bash  echo hi")
    expect(run.stderr).toContain("↳ exit code 0 · hi")
    expect(run.stderr).toContain(`session ${id}`)
  })

  it(
    "MCP servers: one that did not start is one line on stderr, text or json; one with 5,000 tools is warned about",
    async () => {
      const project = tempProject(
        configFor(server.url, [
          "mcpServers:",
          "  missing:",
          "    command: mm-no-such-mcp-server",
          "  wide:",
          `    command: ${process.execPath}`,
          `    args: [${JSON.stringify(MCP_TEST_SERVER)}]`,
          "    env: {MCP_TEST_TOOLS: \"5000\"}"
        ])
      )
      const missing = "mcp server \"missing\" did not start: spawn mm-no-such-mcp-server ENOENT"
      const wide =
        /^mcp server "wide" declares 5006 tools \(\d\.\d MB of definitions\), sent with every request — disable it \(enabled: false\) or use a server with fewer tools$/
      for (const format of ["text", "json"]) {
        server.push({ text: "fine" })
        const run = await mm(project, ["-p", "--output-format", format, "hi"])
        const lines = run.stderr.trimEnd().split("\n")
        expect(lines.filter((line) => line === missing), run.stderr).toHaveLength(1)
        expect(lines.filter((line) => wide.test(line)), run.stderr).toHaveLength(1)
        // so many tools leave no room in the window: the line names them, not the server's -c
        const tooSmall = lines.filter((line) => line.includes("too small to work in"))
        expect(tooSmall, run.stderr).toHaveLength(1)
        expect(tooSmall[0]).toMatch(/the MCP servers' tools take about [\d,]+ of it.*enabled: false/)
        expect(lines, run.stderr).toHaveLength(3)
        expect(run.code).toBe(0)
      }
    },
    60_000
  )

  it("--continue -p adds a turn to the latest session, and the request carries its history", async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ text: "first answer" })
    await mm(project, ["-p", "first question"])
    const [file] = sessionFiles(project)
    const before = readSession(project, file)
    server.push({ text: "second answer" })
    const run = await mm(project, ["--continue", "-p", "and now the tests"])
    expect(run.stdout).toBe("second answer\n")
    expect(run.code).toBe(0)
    expect(sessionFiles(project)).toEqual([file])
    const after = readSession(project, file)
    expect(after.turns).toBe(before.turns + 1)
    expect(server.completions().at(-1)!.body.messages.slice(1)).toEqual([
      { role: "user", content: "first question" },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "and now the tests" }
    ])
  })

  it("--resume with a wrong or ambiguous id is bad usage: one line, exit 2, nothing written", async () => {
    const project = tempProject(withSessions(server.url))
    const run = await mm(project, ["--resume", "1999", "-p", "q"])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr).toBe("mm: no session \"1999\" in this project\n")
    expect(sessionFiles(project)).toEqual([])
    const offProject = tempProject(configFor(server.url, ["sessions:", "  enabled: false"]))
    const off = await mm(offProject, ["--continue", "-p", "q"])
    expect(off.code).toBe(2)
    expect(off.stderr).toBe("mm: sessions are off (sessions.enabled: false): no conversation is kept\n")
  })
})

describe("mm on the command line", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("echo hi | mm > out: the file holds the answer and no banner; the banner is on stderr", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: "hello back" })
    const run = await mm(project, [], "hi\n")
    expect(run.stdout).toBe("hello back\n")
    expect(run.stderr).toMatch(/^mm 0\.1\.0 · model fake-model/)
    expect(run.code).toBe(0)
  })

  it("piped REPL: exit 1 when the last turn failed, 0 when a failure was followed by an answer", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: "fine" }, { kind: "status", status: 500, body: { error: { message: "down" } } })
    const failedLast = await mm(project, [], "one\ntwo\n")
    expect(failedLast.stdout).toBe("fine\n")
    expect(failedLast.stderr).toContain("model server answered HTTP 500: down")
    expect(failedLast.code).toBe(1)
    server.push({ kind: "status", status: 500, body: { error: { message: "down" } } }, { text: "back" })
    const recovered = await mm(project, [], "one\ntwo\n")
    expect(recovered.stdout).toBe("back\n")
    expect(recovered.code).toBe(0)
  })

  it("mm \"QUESTION\" asks it first, then reads the next questions", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: "answer one" }, { text: "answer two" })
    const run = await mm(project, ["why", "is", "it", "slow?"], "and then?\n")
    expect(run.stdout).toBe("answer one\nanswer two\n")
    const asked = server.completions().at(-1)!.body.messages.filter((m: any) => m.role === "user").map((m: any) =>
      m.content
    )
    expect(asked).toEqual(["why is it slow?", "and then?"])
  })

  it("mm --resume <8-char prefix> starts on that session; --resume <suffix> too", async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ text: "old answer" })
    await mm(project, ["-p", "an old topic"])
    const [file] = sessionFiles(project)
    const id = file.slice(0, -5)
    server.push({ text: "resumed answer" })
    const run = await mm(project, ["--resume", id.slice(0, 8)], "go on\n")
    expect(run.stderr).toContain(`↩️ resumed ${id} — 2 message(s), started with "an old topic"`)
    expect(run.stdout).toBe("resumed answer\n")
    expect(server.completions().at(-1)!.body.messages.slice(1).map((m: any) => m.content)).toEqual([
      "an old topic",
      "old answer",
      "go on"
    ])
    expect(readSession(project, file).turns).toBe(2)
    server.push({ text: "again" })
    const bySuffix = await mm(project, [`--resume=${id.slice(-8)}`], "once more\n")
    expect(bySuffix.stderr).toContain(`↩️ resumed ${id}`)
    expect(sessionFiles(project)).toEqual([file])
  })

  it("mm sessions show ID prints the conversation as Markdown: question, answer, tool call with command and output", async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ text: "Checking.", toolCalls: [{ name: "bash", arguments: { command: "echo shown-output" } }] }, {
      text: "All good."
    })
    await mm(project, ["-p", "is the build green?"])
    server.push({ kind: "status", status: 500, body: { error: { message: "kaput" } } })
    await mm(project, ["--continue", "-p", "and the docs?"])
    const [file] = sessionFiles(project)
    const id = file.slice(0, -5)
    const run = await mm(project, ["sessions", "show", id.slice(-8)])
    expect(run.code).toBe(0)
    const md = run.stdout
    expect(md).toContain("# is the build green?")
    expect(md).toContain(`- id: \`${id}\``)
    expect(md).toContain("## 1. Question\n\n> is the build green?")
    expect(md).toContain("Checking.")
    expect(md).toContain("**Tool call `bash`** (completed)\n\n```sh\necho shown-output\n```")
    expect(md).toMatch(/Output:\n\n```text\n(exit code 0\n)?shown-output\n```/)
    expect(md).toContain("All good.")
    expect(md).toMatch(
      /## Errors\n\n- .* · generation · after turn 1 · "and the docs\?": model server answered HTTP 500: kaput/
    )
    expect(md.indexOf("## Errors")).toBeGreaterThan(md.indexOf("All good."))
    const missing = await mm(project, ["sessions", "show", "1999"])
    expect(missing.code).toBe(2)
    expect(missing.stderr).toBe("mm: no session \"1999\" in this project\n")
  })

  it("mm sessions show ID ends with the files mm's tools changed, turn by turn", async () => {
    const project = tempProject(withSessions(server.url))
    fs.writeFileSync(path.join(project, "a.txt"), "one\ntwo\n")
    server.push(
      { toolCalls: [{ name: "edit_file", arguments: { path: "a.txt", old: "two", new: "2" } }] },
      { toolCalls: [{ name: "write_file", arguments: { path: "b.txt", content: "x\ny\nz\n" } }] },
      { text: "Done." }
    )
    const turn = await mm(project, ["-p", "--yes", "fix the numbers"])
    expect(turn.code).toBe(0)
    const [file] = sessionFiles(project)
    const run = await mm(project, ["sessions", "show", file.slice(0, -5)])
    expect(run.code).toBe(0)
    const md = run.stdout
    expect(md).toContain("## Files changed")
    expect(md).toMatch(/- turn 1 · "fix the numbers" · .*\n {2}- `a.txt` \+1 -1\n {2}- `b.txt` \+3 -0 \(created\)/)
    expect(md.indexOf("## Files changed")).toBeGreaterThan(md.indexOf("Done."))
  })

  /** A project with sessions on and two conversations saved, one question each. */
  const projectWithTwoSessions = async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ text: "a" }, { text: "b" })
    await mm(project, ["-p", "first"])
    await mm(project, ["-p", "second"])
    return { project, files: sessionFiles(project) }
  }

  it("mm sessions rm ID --yes removes exactly that file; without a terminal or --yes nothing is deleted", async () => {
    const { files, project } = await projectWithTwoSessions()
    expect(files).toHaveLength(2)
    const [keep, remove] = files
    const refused = await mm(project, ["sessions", "rm", remove.slice(0, -5)])
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain("pass --yes")
    expect(sessionFiles(project)).toEqual(files)
    const ambiguous = await mm(project, ["sessions", "rm", "--yes", remove.slice(0, 8)])
    expect(ambiguous.code).toBe(2)
    expect(ambiguous.stderr).toContain("matches 2 sessions")
    expect(sessionFiles(project)).toEqual(files)
    const run = await mm(project, ["sessions", "rm", remove.slice(0, -5), "--yes"])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`deleted ${remove.slice(0, -5)}\n`)
    expect(sessionFiles(project)).toEqual([keep])
    const listing = await mm(project, ["sessions"])
    expect(listing.stdout.split("\n")[0]).toMatch(/^1 session\(s\) in .* — mm --resume <id> to continue one$/)
  })

  it("mm sessions leaves the listing's index behind when it exits", async () => {
    const { files, project } = await projectWithTwoSessions()
    // files changed in the last two seconds are never cached: these are older
    const hourAgo = new Date(Date.now() - 3_600_000)
    for (const file of files) fs.utimesSync(path.join(sessionsDir(project), file), hourAgo, hourAgo)
    const index = path.join(sessionsDir(project), ".index.json")
    fs.rmSync(index, { force: true })
    const listing = await mm(project, ["sessions"])
    expect(listing.code).toBe(0)
    expect(listing.stdout.split("\n")[0]).toMatch(/^2 session\(s\) in /)
    const kept = JSON.parse(fs.readFileSync(index, "utf8"))
    expect(indexedNames(kept).sort()).toEqual(files)
    expect(fs.statSync(index).mode & 0o777).toBe(0o600)
  })

  it("mm sessions rm takes with it the checkpoints no other session uses", async () => {
    const project = tempProject(withSessions(server.url))
    server.push(
      { toolCalls: [{ name: "write_file", arguments: { path: "notes.txt", content: "only in the removed session" } }] },
      { text: "written" },
      { toolCalls: [{ name: "write_file", arguments: { path: "kept.txt", content: "in the kept session" } }] },
      { text: "written too" }
    )
    await mm(project, ["-p", "write notes"])
    const [removed] = sessionFiles(project)
    await mm(project, ["-p", "write kept"])
    const checkpoints = path.join(project, ".mm/checkpoints")
    const blobs = () => fs.readdirSync(checkpoints).filter((f) => !f.startsWith("."))
    const before = blobs()
    expect(before.length).toBeGreaterThanOrEqual(2)
    // blobs written in the last minute are kept (a running mm may be about to record them): age them
    const hourAgo = new Date(Date.now() - 3_600_000)
    for (const blob of before) fs.utimesSync(path.join(checkpoints, blob), hourAgo, hourAgo)
    const run = await mm(project, ["sessions", "rm", "--yes", removed.slice(0, -5)])
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(/^deleted .*\nremoved [1-9]\d* checkpoint\(s\) no session uses/)
    const after = blobs()
    expect(after.length).toBeLessThan(before.length)
    const kept = readSession(project, sessionFiles(project)[0])
    for (const change of kept.changes) if (change.after !== null) expect(after).toContain(change.after)
  })

  it("an unknown option says so with the usage, exit 2; so do the library's options mm does not offer", async () => {
    const project = tempProject(configFor(server.url))
    for (
      const args of [["--nope"], ["-p", "q", "--nope"], ["sessions", "--nope"], ["--wizard"], ["--log-level", "debug"]]
    ) {
      const run = await mm(project, args)
      expect(run.code).toBe(2)
      expect(run.stdout).toBe("")
      expect(run.stderr.split("\n")[0]).toBe(
        `mm: unknown option ${args.find((a) => a.startsWith("--") && a !== "--yes")}`
      )
      // the usage of the command the line was for: mm's, or the subcommand's
      expect(run.stderr).toContain(
        args[0] === "sessions" ? "usage: mm sessions list" : "usage: mm [options] [QUESTION]"
      )
    }
    const help = await mm(project, ["--help"])
    expect(help.code).toBe(0)
    for (
      const flag of [
        "--print",
        "--output-format",
        "--continue",
        "--resume",
        "--yes",
        "--verbose",
        "--config",
        "--completions"
      ]
    ) {
      expect(help.stdout).toContain(flag)
    }
    expect(help.stdout).not.toMatch(/--wizard|--log-level|A user-defined piece of text/)
    expect(help.stdout).toContain("EXIT CODES")
    expect(help.stdout).toContain("/resume")
  })

  it("mm init writes a commented agent.yaml with the server's model and sessions on, leaves .gitignore alone, never overwrites without --force", async () => {
    const models = await startFakeModelServer({ models: ["small-coder:1b"] })
    const project = tempProject(undefined)
    fs.writeFileSync(path.join(project, ".gitignore"), "node_modules")
    const run = await mm(project, ["init", "--url", models.url])
    expect(run.code).toBe(0)
    const yaml = fs.readFileSync(path.join(project, "agent.yaml"), "utf8")
    expect(yaml).toMatch(/^# /)
    const parsed = parseConfig(yaml, "agent.yaml")
    expect(parsed._tag).toBe("Right")
    if (parsed._tag === "Right") {
      expect(parsed.right.model).toMatchObject({ url: models.url, name: "small-coder:1b" })
      expect(parsed.right.sessions.enabled).toBe(true)
    }
    // the .mm/ made at the first question ignores itself: the project's own file is not touched
    expect(fs.readFileSync(path.join(project, ".gitignore"), "utf8")).toBe("node_modules")
    expect(fs.existsSync(path.join(project, ".mm"))).toBe(false)
    expect(run.stdout).toContain(`wrote ${path.join(project, "agent.yaml")}`)
    // only known values are written, and the last line says what to run
    expect(yaml).not.toContain("undefined")
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("next: run mm here to start")

    const again = await mm(project, ["init", "--url", models.url, "--model", "other"])
    expect(again.code).toBe(2)
    expect(again.stderr).toContain("already exists — pass --force")
    const forced = await mm(project, ["init", "--url", models.url, "--model", "other", "--force"])
    expect(forced.code).toBe(0)
    expect(fs.readFileSync(path.join(project, "agent.yaml"), "utf8")).toContain("name: other")
    expect(fs.readFileSync(path.join(project, ".gitignore"), "utf8")).toBe("node_modules")
    await models.close()

    const sub = path.join(project, "src", "deep")
    fs.mkdirSync(sub, { recursive: true })
    const below = await mm(sub, [], "")
    expect(below.stderr).toContain(`agent.yaml found in ${project} — start mm there, or pass --config`)
  })
})

describe("mm init's presets for hosted APIs", () => {
  it("--preset writes the API, its address, a model and the key's variable, and says which key to set", async () => {
    const project = tempProject(undefined)
    const run = await mm(project, ["init", "--preset", "anthropic"], "", { ANTHROPIC_API_KEY: "" })
    expect(run.code).toBe(0)
    const yaml = fs.readFileSync(path.join(project, "agent.yaml"), "utf8")
    const parsed = parseConfig(yaml, "agent.yaml")
    expect(parsed._tag === "Right" && parsed.right.model).toMatchObject({
      api: "anthropic",
      url: "https://api.anthropic.com/v1",
      name: "claude-sonnet-4-5",
      apiKeyEnv: "ANTHROPIC_API_KEY"
    })
    expect(run.stdout).toContain("(Anthropic), sessions on")
    expect(run.stdout.trimEnd().split("\n").at(-1)).toBe("next: export ANTHROPIC_API_KEY=<your key>, then run mm here")

    const openai = await mm(project, ["init", "--preset", "openai", "--model", "gpt-5-mini", "--force"], "", {
      OPENAI_API_KEY: "sk-test"
    })
    expect(openai.code).toBe(0)
    const written = parseConfig(fs.readFileSync(path.join(project, "agent.yaml"), "utf8"), "agent.yaml")
    expect(written._tag === "Right" && written.right.model).toMatchObject({
      api: "responses",
      url: "https://api.openai.com/v1",
      name: "gpt-5-mini",
      apiKeyEnv: "OPENAI_API_KEY"
    })
    // the key is there: nothing more to do
    expect(openai.stdout.trimEnd().split("\n").at(-1)).toBe("next: run mm here to start")

    const wrong = await mm(project, ["init", "--preset", "gemini", "--force"])
    expect(wrong.code).toBe(2)
    expect(wrong.stderr.split("\n")[0]).toBe(
      `mm: --preset takes local or openai or anthropic or openrouter, not "gemini"`
    )
  })
})

describe("mm init's picker, on a terminal", () => {
  it("lists the server's models; the arrow keys and Enter choose the one written", async () => {
    const models = await startFakeModelServer({ models: ["alpha-coder:1b", "beta-coder:7b", "gamma:3b"] })
    const project = tempProject(undefined)
    const pty = new PtyMm(project, {}, ["init", "--url", models.url], { columns: 100, rows: 30 })
    await pty.waitFor(/gamma:3b/)
    const screen = stripAnsi(pty.out)
    expect(screen).toContain("alpha-coder:1b")
    expect(screen).toContain("beta-coder:7b")
    const mark = pty.out.length
    pty.type("\u001b[B")
    // the picker redrawn with the mark on the second model
    await pty.waitForText(/● beta-coder:7b/, mark)
    pty.type("\r")
    expect(await pty.exit()).toBe(0)
    const parsed = parseConfig(fs.readFileSync(path.join(project, "agent.yaml"), "utf8"), "agent.yaml")
    expect(parsed._tag === "Right" && parsed.right.model.name).toBe("beta-coder:7b")
    await models.close()
  })

  it("when mm looks for itself, offers the hosted APIs beside what it found", async () => {
    const project = tempProject(undefined)
    const pty = new PtyMm(project, {}, ["init"], { columns: 100, rows: 30 })
    await pty.waitFor(/OpenRouter/)
    const screen = stripAnsi(pty.out)
    expect(screen).toContain("Anthropic (claude-sonnet-4-5)")
    expect(screen).toContain("needs $ANTHROPIC_API_KEY")
    expect(screen).toContain("OpenAI (gpt-5)")
    pty.type("\u0003")
    expect(await pty.exit()).toBe(130)
    expect(fs.existsSync(path.join(project, "agent.yaml"))).toBe(false)
  })

  it("left with Ctrl-C, writes nothing and ends with 130", async () => {
    const models = await startFakeModelServer({ models: ["alpha-coder:1b", "beta-coder:7b"] })
    const project = tempProject(undefined)
    const pty = new PtyMm(project, {}, ["init", "--url", models.url], { columns: 100, rows: 30 })
    await pty.waitFor(/beta-coder:7b/)
    pty.type("\u0003")
    expect(await pty.exit()).toBe(130)
    expect(stripAnsi(pty.out)).toContain("nothing written")
    expect(fs.existsSync(path.join(project, "agent.yaml"))).toBe(false)
    await models.close()
  })
})

describe("mm init's look for a local server", () => {
  it("asks each port's /v1/models on 127.0.0.1 and keeps those that answer, with their models", async () => {
    const ollama = await startFakeModelServer({ models: ["qwen2.5-coder:7b", "llama3.2:3b"] })
    const closed = await closedPort()
    const { probeLocalServers, USUAL_SERVERS } = await import("../../../src/cli/Init")
    expect(USUAL_SERVERS.map((s) => s.port)).toEqual([11434, 8080, 1234, 8000])
    const found = await probeLocalServers([
      { port: closed, name: "nobody" },
      { port: ollama.port, name: "Ollama" }
    ])
    expect(found).toEqual([{
      url: `http://127.0.0.1:${ollama.port}/v1`,
      name: "Ollama",
      models: ["qwen2.5-coder:7b", "llama3.2:3b"]
    }])
    expect(ollama.requests.map((r) => `${r.method} ${r.path}`)).toEqual(["GET /v1/models"])
    await ollama.close()
  })
})
