import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import {
  configFor,
  MM_BIN,
  MmProcess,
  readSession,
  runMm,
  sessionFiles,
  sessionsDir,
  tempProject,
  withSessions
} from "../../support/MmProcess"

describe("the terminal with persistent sessions", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("saves, lists and resumes a conversation under the current system prompt", async () => {
    const project = tempProject(withSessions(server.url, ["system: old system prompt"]))
    server.push({ text: "answer one" }, { text: "answer two" })
    const first = await runMm(project, ["add a /new command", "and test it"])
    expect(first.stderr).toMatch(/sessions: saved under .* · no earlier sessions\n/)
    expect(first.stdout).toBe("answer one\nanswer two\n")
    const files = sessionFiles(project)
    expect(files).toHaveLength(1)
    const saved = readSession(project, files[0])
    expect(saved.turns).toBe(2)
    expect(saved.title).toBe("add a /new command")
    expect(saved.messages[0]).toEqual({
      role: "system",
      content: expect.stringMatching(/^old system prompt\n\n# Environment\n/)
    })
    expect(fs.statSync(path.join(sessionsDir(project), files[0])).mode & 0o777).toBe(0o600)
    expect(fs.statSync(sessionsDir(project)).mode & 0o777).toBe(0o700)

    fs.writeFileSync(
      path.join(project, "agent.yaml"),
      withSessions(server.url, ["system: new system prompt"]).join("\n")
    )
    const mm = new MmProcess(project)
    await mm.waitFor("/sessions to list", 0, undefined, "stderr")
    expect(mm.stderr).toContain(
      `sessions: saved under ${sessionsDir(project)} · 1 earlier — /resume to continue the latest, /sessions to list`
    )
    let mark = mm.stdout.length
    mm.send("/sessions")
    const listing = await mm.waitFor("add a /new command", mark)
    expect(listing).toContain(
      `1 session(s) in ${sessionsDir(project)} — /resume <id> to continue one, /resume for the latest`
    )
    expect(listing).toMatch(
      new RegExp(
        `\\n1   ${
          files[0].slice(0, -5)
        }  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d \\((just now|\\d+ min ago)\\)  2 turn\\(s\\)  add a /new command\\n`
      )
    )
    mark = mm.stdout.length
    mm.send("/resume")
    const resumed = await mm.waitFor("started with", mark)
    expect(resumed).toContain(`↩️ resumed ${files[0].slice(0, -5)} — 4 message(s), started with "add a /new command"\n`)
    server.push({ text: "answer three" })
    mark = mm.stdout.length
    mm.send("one more")
    await mm.waitFor("answer three", mark)
    mark = mm.stdout.length
    mm.send("/sessions")
    await mm.waitFor("turn(s)", mark)
    expect(mm.stdout.slice(mark)).toMatch(/\n1 \* \d{8}-\d{6}-[0-9a-f]{8} {2}.* {2}3 turn\(s\) {2}add a \/new command/)
    expect(await mm.end()).toBe(0)

    const request = server.completions().at(-1)!.body
    expect(request.messages).toEqual([
      { role: "system", content: expect.stringMatching(/^new system prompt\n\n# Environment\n/) },
      { role: "user", content: "add a /new command" },
      { role: "assistant", content: "answer one" },
      { role: "user", content: "and test it" },
      { role: "assistant", content: "answer two" },
      { role: "user", content: "one more" }
    ])
    expect(sessionFiles(project)).toEqual(files)
    const after = readSession(project, files[0])
    expect(after.turns).toBe(3)
    expect(after.messages.at(-1)).toEqual({ role: "assistant", content: "answer three" })
    expect(after.messages[0].content).toMatch(/^new system prompt\n\n# Environment\n/)
    expect(after.messages[0].content).not.toContain("old system prompt")
  })

  it("a launch without a question leaves no file; /new starts a new file at the next question", async () => {
    const project = tempProject(withSessions(server.url, ["system: s"]))
    const idle = await runMm(project, ["/sessions", "/help"])
    expect(idle.stdout).toContain("0 session(s) in")
    expect(fs.readdirSync(project)).toEqual(["agent.yaml"])
    server.push({ text: "a1" }, { text: "a2" })
    const run = await runMm(project, ["first topic", "/new", "second topic"])
    expect(run.stdout).toMatch(/new conversation — \d{8}-\d{6}-[0-9a-f]{8} stays as it is/)
    const files = sessionFiles(project)
    expect(files).toHaveLength(2)
    expect(files.map((f) => readSession(project, f).title).sort()).toEqual(["first topic", "second topic"])
  })

  it("a stopped server gives one red line and one generation record; the question is dropped, earlier turns kept", async () => {
    const own = await startFakeModelServer({ steps: [{ text: "fine" }] })
    const project = tempProject(withSessions(own.url, ["system: s"]))
    const mm = new MmProcess(project)
    mm.send("first question")
    await mm.waitFor("fine")
    await own.close()
    const mark = mm.stderr.length
    mm.send("second question")
    await mm.waitFor("cannot reach the model server", mark, undefined, "stderr")
    // piped, the last turn failed: exit code 1
    expect(await mm.end()).toBe(1)
    expect(mm.stdout).toBe("fine\n")
    const failedLines = mm.stderr.split("\n").filter((l) => l.includes("cannot reach"))
    expect(failedLines).toHaveLength(1)
    const [file] = sessionFiles(project)
    const session = readSession(project, file)
    expect(session.turns).toBe(1)
    expect(session.messages.map((m: any) => m.content)).toEqual([
      expect.stringMatching(/^s\n\n# Environment\n/),
      "first question",
      "fine"
    ])
    expect(session.errors).toHaveLength(1)
    const record = session.errors[0]
    expect(Object.keys(record).sort()).toEqual(["at", "kind", "line", "question", "raw", "turns"])
    expect(record).toMatchObject({ kind: "generation", turns: 1, question: "second question", line: failedLines[0] })
    expect(record.line).toContain(own.url)
    expect(record.raw.length).toBeGreaterThan(0)
    expect(new Date(record.at).getTime()).toBeGreaterThan(Date.now() - 60_000)
  })

  // the cap itself is appendError's (test/domain/Domain.test.ts); here, that a failure goes through it
  it("keeps the newest 200 failures: two more on a session that has 200 drop the two oldest", async () => {
    const own = await startFakeModelServer()
    own.setFallback({ kind: "status", status: 500, body: { error: { message: "overloaded" } } })
    const project = tempProject(withSessions(own.url, ["system: s"]))
    const id = "20260101-000000-0000abcd"
    const at = "2026-01-01T00:00:00.000Z"
    const old = Array.from({ length: 200 }, (_, i) => ({
      kind: "generation",
      at,
      turns: 0,
      question: `old ${i}`,
      line: "mm: the model server answered HTTP 500",
      raw: "overloaded"
    }))
    fs.mkdirSync(sessionsDir(project), { recursive: true, mode: 0o700 })
    fs.writeFileSync(
      path.join(sessionsDir(project), `${id}.json`),
      JSON.stringify(
        {
          version: 1,
          id,
          cwd: project,
          createdAt: at,
          updatedAt: at,
          title: "old 0",
          turns: 0,
          errors: old,
          messages: []
        },
        null,
        2
      ) + "\n",
      { mode: 0o600 }
    )
    const run = await runMm(project, ["question 0", "question 1"], ["--resume", id])
    await own.close()
    expect(run.stderr.split("\n").filter((l) => l.includes("HTTP 500"))).toHaveLength(2)
    expect(run.code).toBe(1)
    expect(run.stdout).toBe("")
    expect(sessionFiles(project)).toEqual([`${id}.json`])
    const session = readSession(project, `${id}.json`)
    expect(session.errors).toHaveLength(200)
    expect(session.errors.map((e: any) => e.question)).toEqual([
      ...old.slice(2).map((e) => e.question),
      "question 0",
      "question 1"
    ])
    // a failed turn is recorded as a failure only
    expect(session.title).toBe("old 0")
    expect(session.turns).toBe(0)
    expect(session.messages.filter((m: any) => m.role !== "system")).toEqual([])
  })

  it("a failed /resume is a red line and a resume record in the current session", async () => {
    const project = tempProject(withSessions(server.url, ["system: s"]))
    server.push({ text: "hello" })
    const run = await runMm(project, ["hi", "/resume ../../etc/passwd", "/resume 20260916-101530-4f2a9c1e", "/resume"])
    expect(run.stderr).toContain("not a session id: \"../../etc/passwd\"")
    expect(run.stderr).toContain("no session 20260916-101530-4f2a9c1e in this project")
    expect(run.stdout).toContain("no earlier session to resume")
    const [file] = sessionFiles(project)
    const session = readSession(project, file)
    expect(session.errors.map((e: any) => [e.kind, e.question])).toEqual([
      ["resume", "/resume ../../etc/passwd"],
      ["resume", "/resume 20260916-101530-4f2a9c1e"]
    ])
    const listing = await runMm(project, ["/sessions"])
    expect(listing.stdout).toMatch(/1 turn\(s\) {2}hi · ⚠️ 2 error\(s\)/)
  })

  it("resumes a named session and reports its errors", async () => {
    const project = tempProject(withSessions(server.url, ["system: s"]))
    server.push({ text: "ok" }, { kind: "status", status: 500, body: { error: { message: "bad" } } })
    await runMm(project, ["topic A", "this one fails"])
    const [file] = sessionFiles(project)
    const id = file.slice(0, -5)
    server.push({ text: "b" })
    const run = await runMm(project, ["topic B", `/resume ${id}`])
    expect(run.stdout).toContain(`↩️ resumed ${id} — 2 message(s), started with "topic A" · ⚠️ 1 error(s)`)
  })

  it("a sessions directory that cannot be written says not saved and answers anyway", async () => {
    const project = tempProject(undefined)
    fs.writeFileSync(path.join(project, "blocker"), "a file where a directory should be")
    fs.writeFileSync(
      path.join(project, "agent.yaml"),
      configFor(server.url, ["sessions:", "  enabled: true", "  dir: blocker/sessions"]).join("\n")
    )
    server.push({ text: "still answering" })
    const run = await runMm(project, ["hello"])
    expect(run.stderr).toMatch(/\nsessions: not saved \(.+\)\n/)
    expect(run.stdout).toBe("still answering\n")
    expect(run.code).toBe(0)
  })

  it("mm sessions prints the listing, and --json for scripts", async () => {
    const project = tempProject(withSessions(server.url, ["system: s"]))
    server.push({ text: "x" })
    await runMm(project, ["listed question"])
    const text = await runMm(project, [], ["sessions"])
    expect(text.stdout).toMatch(
      /^1 session\(s\) in .*\n1 {3}\d{8}-\d{6}-[0-9a-f]{8} {2}.* {2}1 turn\(s\) {2}listed question\n$/
    )
    const json = JSON.parse((await runMm(project, [], ["sessions", "--json"])).stdout)
    expect(json.dir).toBe(sessionsDir(project))
    expect(json.sessions[0]).toMatchObject({ title: "listed question", turns: 1, errors: 0, readable: true })
  })

  it("with one store shared by every project, each project lists and resumes only its own sessions", async () => {
    const store = tempProject(undefined, "mm-shared-store-")
    const shared = (url: string) => configFor(url, ["sessions:", "  enabled: true", `  dir: ${store}`])
    const a = tempProject(shared(server.url))
    const b = tempProject(shared(server.url))
    server.push({ text: "in A" })
    await runMm(a, ["question in project A"])
    const fromB = await runMm(b, ["/sessions", "/resume"])
    expect(fromB.stderr).toContain("· no earlier sessions")
    expect(fromB.stdout).toContain(`0 session(s) in ${store}`)
    expect(fromB.stdout).toContain("no earlier session to resume")
    const fromA = await runMm(a, ["/sessions"])
    expect(fromA.stdout).toContain("question in project A")
  })

  it("with a shared store, /resume of another project's session is refused and recorded; its file is untouched", async () => {
    const store = tempProject(undefined, "mm-shared-store-")
    const shared = (url: string) => configFor(url, ["sessions:", "  enabled: true", `  dir: ${store}`])
    const a = tempProject(shared(server.url))
    const b = tempProject(shared(server.url))
    server.push({ text: "in A" })
    await runMm(a, ["question in project A"])
    const [fileOfA] = fs.readdirSync(store).filter((f) => f.endsWith(".json"))
    const idOfA = fileOfA.slice(0, -5)
    const before = fs.readFileSync(path.join(store, fileOfA), "utf8")

    server.push({ text: "in B" })
    const fromB = await runMm(b, ["question in project B", `/resume ${idOfA}`])
    expect(fromB.stderr).toContain(`session ${idOfA} belongs to ${a}`)
    expect(fs.readFileSync(path.join(store, fileOfA), "utf8")).toBe(before)
    const ofB = fs
      .readdirSync(store)
      .filter((f) => f.endsWith(".json") && f !== fileOfA)
      .map((f) => JSON.parse(fs.readFileSync(path.join(store, f), "utf8")))
    expect(ofB).toHaveLength(1)
    expect(ofB[0].cwd).toBe(b)
    expect(ofB[0].errors.map((e: any) => [e.kind, e.question, e.line])).toEqual([
      ["resume", `/resume ${idOfA}`, `session ${idOfA} belongs to ${a}`]
    ])
  })

  it.runIf(process.getuid?.() === 0)(
    "a directory the user may not write (a real permission denied) says not saved and answers anyway",
    async () => {
      const project = tempProject(withSessions(server.url, ["system: s"]))
      fs.chmodSync(project, 0o755)
      fs.chmodSync(path.join(project, "agent.yaml"), 0o644)
      server.push({ text: "answered without saving" })
      // the fake server lives in this process: the child must run without blocking it
      const nobody = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [MM_BIN], {
          cwd: project,
          uid: 65534,
          gid: 65534,
          // nobody's own configuration is looked for under its (missing) home, not under this test's
          env: {
            ...process.env,
            HOME: "/nonexistent",
            XDG_CONFIG_HOME: undefined,
            NO_COLOR: undefined,
            AGENT_CONFIG: undefined
          }
        })
        let stdout = ""
        let stderr = ""
        child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
        child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
        child.on("exit", () => resolve({ stdout, stderr }))
        child.stdin.end("hello\n")
      })
      expect(nobody.stderr).toMatch(/\nsessions: not saved \(cannot write .*\.mm\/sessions: permission denied\)\n/)
      expect(nobody.stdout).toBe("answered without saving\n")
      expect(fs.existsSync(path.join(project, ".mm"))).toBe(false)
    }
  )

  it("piped under permissions: ask, a call is refused without reading stdin, and the next line is a question", async () => {
    const project = tempProject(
      withSessions(server.url, ["system: s"]).map((line) => (line === "permissions: allow" ? "permissions: ask" : line))
    )
    server.push(
      { toolCalls: [{ id: "asked", name: "bash", arguments: { command: "touch x" } }] },
      { text: "could not run it" },
      { text: "answer to y" },
      { text: "answer to q3" }
    )
    const before = server.completions().length
    const run = await runMm(project, ["q1", "y", "q3"])
    expect(run.code).toBe(0)
    expect(fs.existsSync(path.join(project, "x"))).toBe(false)
    expect(
      run.stderr.match(/✗ not approved: no terminal to ask \(set permissions: allow, or run mm in a terminal\)\n/g)
    ).toHaveLength(1)
    expect(run.stdout + run.stderr).not.toContain("allow?")
    const requests = server.completions().slice(before).map((r) => r.body.messages)
    expect(requests).toHaveLength(4)
    expect(requests[1].find((m: any) => m.role === "tool")).toEqual({
      role: "tool",
      tool_call_id: "asked",
      content: "not approved: no terminal to ask (set permissions: allow, or run mm in a terminal)"
    })
    // the line after the question was not taken as an answer: it is the next question
    expect(requests.slice(2).map((m) => m.at(-1))).toEqual([
      { role: "user", content: "y" },
      { role: "user", content: "q3" }
    ])
  })
})
