import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MmProcess, runMm, sessionsDir, tempProject } from "../../support/MmProcess"

/** End-to-end checks of docs/explanation/guarantees.md, one per breaking case of issue 17. */
describe("hardening", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("read_file of /dev/zero and of a FIFO fail at once, and the next question is answered", async () => {
    const project = tempProject(configFor(server.url))
    execFileSync("mkfifo", [path.join(project, "pipe")])
    server.push(
      {
        toolCalls: [{ name: "read_file", arguments: { path: "/dev/zero" } }, {
          name: "read_file",
          arguments: { path: "pipe" }
        }]
      },
      { text: "both refused" },
      { text: "next answer" }
    )
    const run = await runMm(project, ["read them", "and now?"])
    // piped, tool lines are on stderr
    expect(run.stderr).toContain("  ✗ /dev/zero is a character device; the file tools read regular files only")
    expect(run.stderr).toContain("  ✗ pipe is a named pipe (FIFO); the file tools read regular files only")
    expect(run.stdout).toContain("next answer")
    expect(run.code).toBe(0)
  })

  it("read_file outside the project asks under permissions: ask; inside it does not", async () => {
    const project = tempProject(
      configFor(server.url).map((line) => (line === "permissions: allow" ? "permissions: ask" : line))
    )
    fs.writeFileSync(path.join(project, "in.txt"), "inside\n")
    server.push(
      {
        toolCalls: [{ name: "read_file", arguments: { path: "in.txt" } }, {
          name: "read_file",
          arguments: { path: "/etc/hostname" }
        }]
      },
      { text: "ok" }
    )
    // piped, no one can answer: the call that needs approval is refused, the other runs
    const run = await runMm(project, ["read both"])
    expect(run.stderr.match(/not approved: no terminal to ask/g)).toHaveLength(1)
    const toolResults = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
    expect(toolResults.map((m: { content: string }) => m.content)).toEqual([
      "inside",
      "not approved: no terminal to ask (set permissions: allow, or run mm in a terminal)"
    ])
  })

  const sessionFile = (project: string, except = "") => {
    const dir = path.join(project, ".mm/sessions")
    const files = fs.readdirSync(dir).filter((f) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f) && f !== `${except}.json`)
    expect(files).toHaveLength(1)
    return JSON.parse(fs.readFileSync(path.join(dir, files[0]), "utf8"))
  }

  it(
    "a 50 MB error body is one line, at most 4 KB of it is kept in raw, and the next question is answered",
    async () => {
      const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
      server.push(
        {
          kind: "status",
          status: 500,
          body: JSON.stringify({ error: { message: "overloaded", detail: "y".repeat(50 * 1024 * 1024) } })
        },
        { text: "second answer" }
      )
      const run = await runMm(project, ["first", "second"])
      const lines = run.stderr.split("\n")
      expect(lines.filter((line) => line.startsWith("model server answered HTTP 500"))).toEqual([
        "model server answered HTTP 500: overloaded — check the server's log"
      ])
      expect(run.stdout).toBe("second answer\n")
      expect(run.stderr.length).toBeLessThan(2000)
      const saved = sessionFile(project)
      expect(saved.errors).toHaveLength(1)
      expect(Buffer.byteLength(saved.errors[0].raw)).toBeLessThanOrEqual(4096)
      expect(saved.errors[0].raw).toMatch(
        /^HTTP 500 from .*\/chat\/completions: \{"error":\{"message":"overloaded","detail":"yyy+ … \[\d+ bytes cut\]$/
      )
    },
    60_000
  )

  it(
    "an answer past model.maxAnswerBytes fails as one generation record, and the next question is answered",
    async () => {
      const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
      const piece = "z".repeat(100 * 1024)
      server.push({ text: Array.from({ length: 60 }, () => piece) }, { text: "short answer" })
      const run = await runMm(project, ["write a lot", "now briefly"])
      expect(run.stderr).toContain("the answer passed model.maxAnswerBytes (4194304 bytes) — the turn was given up")
      expect(run.stdout).toContain("short answer")
      const saved = sessionFile(project)
      expect(saved.errors).toMatchObject([
        {
          kind: "generation",
          question: "write a lot",
          line: "the answer passed model.maxAnswerBytes (4194304 bytes) — the turn was given up"
        }
      ])
      expect(saved.turns).toBe(1)
    },
    60_000
  )

  it("an SSE event with an empty data: line is ignored", async () => {
    const project = tempProject(configFor(server.url))
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    server.push({
      kind: "raw",
      chunks: [
        chunk({ role: "assistant", content: "" }),
        "data:\n\n",
        chunk({ content: "still here" }),
        "data: \n\n",
        chunk({}, "stop"),
        "data: [DONE]\n\n"
      ]
    })
    const run = await runMm(project, ["hello"])
    expect(run.stdout).toContain("still here")
    expect(run.stdout).not.toContain("not JSON")
  })

  const withSessions = (extra: ReadonlyArray<string> = []) =>
    tempProject(configFor(server.url, ["sessions:", "  enabled: true", ...extra]))
  const idLike = (n: number) => `20260101-00000${n}-0000000${n}`

  it("a 100,000-deep session file is refused on /resume in one red line and one record, and mm goes on", async () => {
    const project = withSessions()
    fs.mkdirSync(sessionsDir(project), { recursive: true })
    const deep = "[".repeat(100_000) + "]".repeat(100_000)
    fs.writeFileSync(
      path.join(sessionsDir(project), `${idLike(1)}.json`),
      `{"version":1,"id":"${
        idLike(1)
      }","cwd":"/x","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","title":"t","turns":1,"messages":[{"role":"user","content":${deep}}]}`
    )
    server.push({ text: "still answering" })
    const run = await runMm(project, [`/resume ${idLike(1)}`, "are you there?"])
    expect(run.stderr).toContain(
      `session ${idLike(1)} is unreadable: nested deeper than 256 levels; not a session mm wrote`
    )
    expect(run.stdout).toContain("still answering")
    expect(run.code).toBe(0)
    expect(run.stderr).not.toContain("call stack")
    const saved = sessionFile(project, idLike(1))
    expect(saved.errors).toMatchObject([{ kind: "resume", question: `/resume ${idLike(1)}` }])
  })

  it("a file whose turns are out of range is listed as unreadable; a session file that is a link is refused unread", async () => {
    const project = withSessions()
    fs.mkdirSync(sessionsDir(project), { recursive: true })
    const fields = (id: string, turns: number) =>
      `{"version":1,"id":"${id}","cwd":"/x","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","title":"t","turns":${turns},"errors":[],"messages":[]}`
    fs.writeFileSync(path.join(sessionsDir(project), `${idLike(2)}.json`), fields(idLike(2), -5))
    const secret = path.join(project, "secret.txt")
    fs.writeFileSync(secret, "TOP-SECRET-CONTENT that must never be quoted")
    fs.symlinkSync(secret, path.join(sessionsDir(project), `${idLike(3)}.json`))
    const run = await runMm(project, ["/sessions", `/resume ${idLike(3)}`])
    expect(run.stdout).toContain(`${idLike(2)}  unreadable: turns: expected a whole number of 0 or more, got -5`)
    expect(run.stdout).toContain(`${idLike(3)}  unreadable:`)
    expect(run.stderr).toContain(
      `session ${idLike(3)} is unreadable: it is a symbolic link; mm reads only session files it wrote`
    )
    expect(run.stdout + run.stderr).not.toContain("TOP-SECRET")
  })

  it("a sessions directory that is a dangling link is said at start: not saved", async () => {
    const project = withSessions()
    fs.mkdirSync(path.join(project, ".mm"))
    fs.symlinkSync(path.join(project, "gone"), sessionsDir(project))
    server.push({ text: "answered anyway" })
    const run = await runMm(project, ["hello"])
    expect(run.stderr).toContain(
      `sessions: not saved (cannot write ${sessionsDir(project)}: ${sessionsDir(project)} is a symbolic link to ${
        path.join(project, "gone")
      }, which does not exist)`
    )
    expect(run.stdout + run.stderr).not.toContain("saved under")
    expect(run.stdout).toBe("answered anyway\n")
  })

  it("a session file rewritten by a newer mm mid-session: the conversation goes on under a new id, nothing lost", async () => {
    const project = withSessions()
    server.push({ text: "first answer" }, { text: "second answer" })
    const mm = new MmProcess(project)
    mm.send("first question")
    await mm.waitFor("first answer")
    const [file] = fs.readdirSync(sessionsDir(project)).filter((f) => f.endsWith(".json") && !f.startsWith("."))
    // the first turn is on disk before the other mm rewrites the file
    let upgraded = JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8"))
    for (let i = 0; i < 200 && upgraded.turns !== 1; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      upgraded = JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8"))
    }
    fs.writeFileSync(
      path.join(sessionsDir(project), file),
      JSON.stringify({ ...upgraded, version: 2, updatedAt: new Date().toISOString() }, null, 2) + "\n"
    )
    const mark = mm.stdout.length
    mm.send("second question")
    await mm.waitFor("second answer", mark)
    expect(await mm.end()).toBe(0)
    const said = /session (\S+) was rewritten by a newer mm; this conversation continues as (\S+)/.exec(mm.stderr)
    expect(said?.[1]).toBe(file.slice(0, -5))
    const moved = JSON.parse(fs.readFileSync(path.join(sessionsDir(project), `${said![2]}.json`), "utf8"))
    expect(moved.turns).toBe(2)
    expect(moved.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content))
      .toEqual(["first question", "second question"])
    expect(JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8")).version).toBe(2)
  })

  /** The live (not zombie) processes of a process group, read from /proc. */
  const groupMembers = (pgid: number): Array<number> =>
    fs.readdirSync("/proc").flatMap((name) => {
      if (!/^\d+$/.test(name)) return []
      try {
        const stat = fs.readFileSync(`/proc/${name}/stat`, "utf8")
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
        return fields[0] !== "Z" && Number(fields[2]) === pgid ? [Number(name)] : []
      } catch {
        return []
      }
    })

  const waitUntil = async (check: () => boolean, ms = 5000): Promise<boolean> => {
    const deadline = Date.now() + ms
    while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25))
    return check()
  }

  it("SIGHUP mid-answer saves the question and the partial answer", async () => {
    const project = withSessions()
    server.push({ kind: "stall", text: "partial words" })
    const mm = new MmProcess(project)
    mm.send("the question")
    await mm.waitFor("partial words")
    mm.child.kill("SIGHUP")
    expect(await mm.exited).not.toBeNull()
    const saved = sessionFile(project)
    expect(saved.messages.filter((m: { role: string }) => m.role !== "system")).toEqual([
      { role: "user", content: "the question" },
      { role: "assistant", content: "partial words" }
    ])
  })

  // unconfined bash leads its group; test/e2e/cli/Sandbox.test.ts does the same for a confined one
  it("SIGHUP while bash runs kills its whole process group and saves the call as cancelled", async () => {
    const project = withSessions(["sandbox: off"])
    server.push({
      text: "running it",
      toolCalls: [{ name: "bash", arguments: { command: "echo $$ > group.pid; sleep 300 & sleep 300" } }]
    })
    const mm = new MmProcess(project)
    mm.send("start something long")
    const pidFile = path.join(project, "group.pid")
    expect(await waitUntil(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim() !== "")).toBe(true)
    const group = Number(fs.readFileSync(pidFile, "utf8"))
    expect(await waitUntil(() => groupMembers(group).length === 3)).toBe(true)
    mm.child.kill("SIGHUP")
    await mm.exited
    expect(await waitUntil(() => groupMembers(group).length === 0)).toBe(true)
    const saved = sessionFile(project)
    expect(saved.messages.at(-1)).toMatchObject({ role: "tool", content: "cancelled by the user", failed: true })
    expect(saved.messages.find((m: { role: string }) => m.role === "user")).toEqual({
      role: "user",
      content: "start something long"
    })
  })

  it("SIGKILL of mm while bash runs: the watchdog kills the command's process group", async () => {
    const project = withSessions(["sandbox: off"])
    server.push({ toolCalls: [{ name: "bash", arguments: { command: "echo $$ > group.pid; sleep 300 & sleep 300" } }] })
    const mm = new MmProcess(project)
    mm.send("start something long")
    const pidFile = path.join(project, "group.pid")
    expect(await waitUntil(() => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").trim() !== "")).toBe(true)
    const group = Number(fs.readFileSync(pidFile, "utf8"))
    expect(await waitUntil(() => groupMembers(group).length === 3)).toBe(true)
    mm.kill()
    await mm.exited
    expect(await waitUntil(() => groupMembers(group).length === 0)).toBe(true)
  })

  it("escape sequences from a tool, the model and a session title never reach the terminal", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push(
      {
        toolCalls: [{
          name: "bash",
          arguments: { command: "printf '\\033]0;PWNED\\007'; printf 'moved\\033[2J\\033[H\\n'" }
        }]
      },
      { text: ["done \u001b]0;", "TITLE\u0007 and \u001b[31mred\u001b[0m"] }
    )
    const run = await runMm(project, ["title \u001b]0;EVIL\u0007 here", "/sessions"])
    // each shown as its visible bytes, nothing of the text around it lost
    expect(run.stdout).toContain("done \\x1b]0;TITLE\\x07 and \\x1b[31mred\\x1b[0m")
    // piped, tool lines are on stderr
    // a tool's output: the OSC shown as its escapes, the screen-clearing CSI dropped (a terminal would act on it)
    expect(run.stderr).toContain("  ↳ exit code 0 · \\x1b]0;PWNED\\x07moved  (3 lines)")
    expect(run.stdout).toMatch(/1 turn\(s\) {2}title \\x1b\]0;EVIL\\x07 here\n/)
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(run.stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(run.stdout + run.stderr).not.toContain("PWNED\u0007")
  })
})
