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
