import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MmProcess, runMm, tempProject, withSessions } from "../../support/MmProcess"

/** Issue 44: no file a user attaches, nor any file of the project mm reads itself, can stop mm from answering. */
describe("no file mm reads can freeze it", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("@fifo, @link-to-/dev/zero and @a-socket are refused in one line, unopened; a too large file says the cap", async () => {
    const project = tempProject(configFor(server.url))
    execFileSync("mkfifo", [path.join(project, "pipe")])
    fs.symlinkSync("/dev/zero", path.join(project, "zero"))
    fs.writeFileSync(path.join(project, "big.txt"), "x".repeat(300 * 1024))
    fs.writeFileSync(path.join(project, "ok.txt"), "fine\n")
    const socket = net.createServer()
    await new Promise<void>((resolve) => socket.listen(path.join(project, "sock"), resolve))
    const mm = new MmProcess(project)
    const lines = [
      "@pipe is a named pipe (FIFO); only regular files can be attached (nothing was sent)",
      "@zero is a character device; only regular files can be attached (nothing was sent)",
      "@big.txt is 307200 bytes, more than 262144 can be attached (nothing was sent)",
      "@sock is a socket; only regular files can be attached (nothing was sent)"
    ]
    mm.send("what is in @pipe")
    await mm.waitFor(lines[0], 0, 15_000, "stderr")
    mm.send("and @zero?")
    await mm.waitFor(lines[1], 0, 15_000, "stderr")
    mm.send("and @big.txt?")
    await mm.waitFor(lines[2], 0, 15_000, "stderr")
    mm.send("and @sock?")
    await mm.waitFor(lines[3], 0, 15_000, "stderr")
    socket.close()
    // nothing was sent, and the next question goes through with its file
    const before = server.completions().length
    server.push({ text: "it says fine" })
    mm.send("and @ok.txt?")
    await mm.waitFor("it says fine")
    expect(await mm.end()).toBe(0)
    const sent = server.completions().slice(before)
    expect(sent).toHaveLength(1)
    expect(sent[0].body.messages.at(-1).content).toBe("and @ok.txt?\n\n<file path=\"ok.txt\">\nfine\n</file>")
    for (const line of lines) expect(mm.stderr.split("\n").filter((l) => l === line)).toHaveLength(1)
  })
  it("a project whose own files are FIFOs (a skill, AGENTS.md, the sessions index, .gitignore, .mm/.gitignore) still gets answers", async () => {
    const project = tempProject(withSessions(server.url))
    fs.mkdirSync(path.join(project, ".mm", "skills", "deploy"), { recursive: true })
    fs.mkdirSync(path.join(project, ".mm", "sessions"), { recursive: true })
    const fifos = [
      ".mm/skills/deploy/SKILL.md",
      "AGENTS.md",
      ".mm/sessions/.index.json",
      ".gitignore",
      ".mm/.gitignore"
    ]
    for (const file of fifos) {
      execFileSync("mkfifo", [path.join(project, file)])
    }
    server.push({ text: "answered anyway" }, { text: "and again" })
    const first = await runMm(project, [], ["-p", "hello"])
    expect(first.stdout).toContain("answered anyway")
    expect(first.code).toBe(0)
    const next = await runMm(project, [], ["-p", "--continue", "again"])
    expect(next.stdout).toContain("and again")
    expect(next.code).toBe(0)
    // mm init never touches the project's .gitignore, and mm never opens a .mm/.gitignore already there
    expect(fs.statSync(path.join(project, ".mm", ".gitignore")).isFIFO()).toBe(true)
    const init = await runMm(project, [], ["init", "--url", server.url, "--model", "fake-model", "--force"])
    expect(init.code).toBe(0)
    expect(fs.statSync(path.join(project, ".gitignore")).isFIFO()).toBe(true)
  })
})
