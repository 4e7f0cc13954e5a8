import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type FakeModelServer, startFakeModelServer } from "./support/FakeModelServer"
import { configFor, runMm, tempProject } from "./support/MmProcess"

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
      { toolCalls: [{ name: "read_file", arguments: { path: "/dev/zero" } }, { name: "read_file", arguments: { path: "pipe" } }] },
      { text: "both refused" },
      { text: "next answer" }
    )
    const run = await runMm(project, ["read them", "and now?"])
    expect(run.stdout).toContain("  ✗ /dev/zero is a character device; the file tools read regular files only")
    expect(run.stdout).toContain("  ✗ pipe is a named pipe (FIFO); the file tools read regular files only")
    expect(run.stdout).toContain("next answer")
    expect(run.code).toBe(0)
  })

  it("read_file outside the project asks under permissions: ask; inside it does not", async () => {
    const project = tempProject(configFor(server.url).map((line) => (line === "permissions: allow" ? "permissions: ask" : line)))
    fs.writeFileSync(path.join(project, "in.txt"), "inside\n")
    server.push(
      { toolCalls: [{ name: "read_file", arguments: { path: "in.txt" } }, { name: "read_file", arguments: { path: "/etc/hostname" } }] },
      { text: "ok" }
    )
    const run = await runMm(project, ["read both", "n"])
    expect(run.stdout).not.toContain("allow read_file  in.txt?")
    expect(run.stdout).toContain("allow read_file  /etc/hostname?")
    const toolResults = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
    expect(toolResults.map((m: { content: string }) => m.content)).toEqual(["inside", "denied by the user"])
  })

  const sessionFile = (project: string) => {
    const dir = path.join(project, ".mm/sessions")
    const files = fs.readdirSync(dir).filter((f) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f))
    expect(files).toHaveLength(1)
    return JSON.parse(fs.readFileSync(path.join(dir, files[0]), "utf8"))
  }

  it("a 50 MB error body is one line, at most 4 KB of it is kept in raw, and the next question is answered", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push(
      { kind: "status", status: 500, body: JSON.stringify({ error: { message: "overloaded", detail: "y".repeat(50 * 1024 * 1024) } }) },
      { text: "second answer" }
    )
    const run = await runMm(project, ["first", "second"])
    const lines = run.stdout.split("\n")
    expect(lines.filter((line) => line.startsWith("model server answered HTTP 500"))).toEqual(["model server answered HTTP 500: overloaded"])
    expect(run.stdout).toContain("second answer")
    expect(run.stderr).toBe("")
    const saved = sessionFile(project)
    expect(saved.errors).toHaveLength(1)
    expect(Buffer.byteLength(saved.errors[0].raw)).toBeLessThanOrEqual(4096)
    expect(saved.errors[0].raw).toMatch(/^HTTP 500 from .*\/chat\/completions: \{"error":\{"message":"overloaded","detail":"yyy+ … \[\d+ bytes cut\]$/)
  }, 60_000)

  it("an answer past model.maxAnswerBytes fails as one generation record, and the next question is answered", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    const piece = "z".repeat(100 * 1024)
    server.push({ text: Array.from({ length: 60 }, () => piece) }, { text: "short answer" })
    const run = await runMm(project, ["write a lot", "now briefly"])
    expect(run.stdout).toContain("the answer passed model.maxAnswerBytes (4194304 bytes) — the turn was given up")
    expect(run.stdout).toContain("short answer")
    const saved = sessionFile(project)
    expect(saved.errors).toMatchObject([
      { kind: "generation", question: "write a lot", line: "the answer passed model.maxAnswerBytes (4194304 bytes) — the turn was given up" }
    ])
    expect(saved.turns).toBe(1)
  }, 60_000)

  it("an SSE event with an empty data: line is ignored", async () => {
    const project = tempProject(configFor(server.url))
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`
    server.push({
      kind: "raw",
      chunks: [chunk({ role: "assistant", content: "" }), "data:\n\n", chunk({ content: "still here" }), "data: \n\n", chunk({}, "stop"), "data: [DONE]\n\n"]
    })
    const run = await runMm(project, ["hello"])
    expect(run.stdout).toContain("still here")
    expect(run.stdout).not.toContain("not JSON")
  })

  it("escape sequences from a tool, the model and a session title never reach the terminal", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "printf '\\033]0;PWNED\\007'; printf 'moved\\033[2J\\033[H\\n'" } }] },
      { text: ["done \u001b]0;", "TITLE\u0007 and \u001b[31mred\u001b[0m"] }
    )
    const run = await runMm(project, ["title \u001b]0;EVIL\u0007 here", "/sessions"])
    expect(run.stdout).toContain("done TITLE and red")
    expect(run.stdout).toContain("  ↳ exit code 0 · moved")
    expect(run.stdout).toMatch(/1 turn\(s\)  title  here\n/)
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(run.stdout).not.toContain("PWNED\u0007")
  })
})
