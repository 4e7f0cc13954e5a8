import { execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { closedPort, type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MM_BIN, runMm, tempProject } from "../../support/MmProcess"
import { REPO_ROOT } from "../../support/paths"

describe("the mm command", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("prints its version and lists the subcommands in --help", async () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8"))
    const version = await runMm(tempProject(undefined), [], ["--version"])
    expect(version.stdout.trim()).toBe(`mm ${pkg.version}`)
    expect(version.code).toBe(0)
    const help = await runMm(tempProject(undefined), [], ["--help"])
    const text = help.stdout
    expect(text).not.toContain("\u001b[")
    expect(text).toMatch(/\n {2}mm acp /)
    expect(text).toMatch(/\n {2}mm sessions /)
    expect(text).toContain("--config")
    expect(fs.existsSync(MM_BIN)).toBe(true)
  })

  it("streams the answer to a piped question on stdout, with the banner first on stderr", async () => {
    const dir = tempProject(configFor(server.url))
    server.push({ text: ["Hel", "lo ", "there", "!"] })
    const { stdout, stderr, code } = await runMm(dir, ["say hello"])
    const lines = stderr.split("\n")
    expect(lines[0]).toBe(`mm 0.1.0 · model fake-model at ${server.url} (answering) · 32k context`)
    expect(lines[1]).toBe(`project: ${dir} · config: ${path.join(dir, "agent.yaml")}`)
    expect(lines[2]).toBe(`sessions: saved under ${path.join(dir, ".mm", "sessions")} · no earlier sessions`)
    expect(stdout).toBe("Hello there!\n")
    expect(stderr).not.toContain("\u001b[")
    expect(code).toBe(0)
    const request = server.completions().at(-1)!.body
    expect(request.model).toBe("fake-model")
    expect(request.stream).toBe(true)
    expect(request.messages.at(-1)).toEqual({ role: "user", content: "say hello" })
    expect(request.messages[0].role).toBe("system")
  })

  it("keeps the conversation in memory across questions", async () => {
    const dir = tempProject(configFor(server.url))
    server.push({ text: "first answer" }, { text: "second answer" })
    const { stdout } = await runMm(dir, ["one", "two"])
    expect(stdout).toContain("first answer")
    expect(stdout).toContain("second answer")
    const messages = server.completions().at(-1)!.body.messages
    expect(messages.slice(1)).toEqual([
      { role: "user", content: "one" },
      { role: "assistant", content: "first answer" },
      { role: "user", content: "two" }
    ])
  })

  it("with no server, says so in one line naming the URL and goes on reading", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`
    const dir = tempProject(configFor(url))
    const { stdout, stderr, code } = await runMm(dir, ["first?", "/help", "second?"])
    expect(stderr.split("\n")[0]).toContain("(not answering)")
    const failures = stderr.split("\n").filter((line) => line.includes("cannot reach the model server"))
    expect(failures).toHaveLength(2)
    expect(failures[0]).toContain(url)
    expect(stdout).toContain("/sessions")
    expect(stdout + stderr).not.toMatch(/at .*\.js:\d+/)
    // the last turn failed
    expect(code).toBe(1)
  })

  it("rejects a bad agent.yaml with one line and exit code 2", async () => {
    const cases: Array<[string, RegExp]> = [
      ["model: [\n", /agent\.yaml:\d+:\d+: YAML syntax error: /],
      ["model:\n  nmae: x\n", /agent\.yaml: model\.nmae \(line 2, column 3\): unknown key/],
      [
        "watchdogTimeout: -1\n",
        /agent\.yaml: watchdogTimeout \(line 1, column 18\): expected a positive duration such as 90, "90s" or "2m", got -1/
      ]
    ]
    for (const [text, pattern] of cases) {
      const dir = tempProject(undefined)
      fs.writeFileSync(path.join(dir, "agent.yaml"), text)
      const { stdout, stderr, code } = await runMm(dir, ["hi"])
      expect(code).toBe(2)
      expect(stdout).toBe("")
      expect(stderr.trim().split("\n")).toHaveLength(1)
      expect(stderr).toMatch(pattern)
      expect(stderr).toContain(path.join(dir, "agent.yaml"))
    }
  })

  it("a --config that names a named pipe or /dev/zero is one line and exit 2, at once", async () => {
    const dir = tempProject(undefined)
    const fifo = path.join(dir, "agent.yaml")
    execFileSync("mkfifo", [fifo])
    // the FIFO is also ./agent.yaml, found without --config
    for (const args of [["--config", fifo], ["--config", "/dev/zero"], []]) {
      const { stdout, stderr, code } = await runMm(dir, ["hi"], args)
      expect(code).toBe(2)
      expect(stdout).toBe("")
      expect(stderr.trim().split("\n")).toHaveLength(1)
      expect(stderr).toMatch(
        /^mm: .*: cannot read the configuration: is (a named pipe \(FIFO\), not a file|not a regular file)$/m
      )
    }
  }, 20_000)

  it("finds its configuration through --config and AGENT_CONFIG", async () => {
    const dir = tempProject(undefined)
    const file = path.join(dir, "custom.yaml")
    fs.writeFileSync(file, configFor(server.url).join("\n").replace("fake-model", "from-flag"))
    const byFlag = await runMm(dir, [], ["--config", file])
    expect(byFlag.stderr).toContain("model from-flag")
    const byEnv = await runMm(dir, [], [], { AGENT_CONFIG: file })
    expect(byEnv.stderr).toContain("model from-flag")
    const missing = await runMm(dir, [], [], { AGENT_CONFIG: path.join(dir, "none.yaml") })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain("none.yaml: cannot read the configuration: no such file")
  })

  it("answers an unknown slash command with the list of commands", async () => {
    const { stdout } = await runMm(tempProject(configFor(server.url)), ["/frobnicate"])
    expect(stdout).toContain(
      "unknown command /frobnicate — commands: /help /sessions /resume /new /fork /compact /context /model /init /plan /changes /undo /rewind /last /jobs /mcp /permissions /exit /quit"
    )
  })

  it("a line that starts with a path is a question, not a command", async () => {
    server.push({ text: "look at line 3" })
    const { stdout } = await runMm(tempProject(configFor(server.url)), ["/etc/hosts is wrong"])
    expect(stdout).toContain("look at line 3")
    expect(server.completions().at(-1)!.body.messages.at(-1)).toEqual({ role: "user", content: "/etc/hosts is wrong" })
  })

  it("ends quietly when its reader goes away", async () => {
    const dir = tempProject(configFor(server.url))
    server.push({ text: "first answer\nmore" }, { text: "second answer" }, { text: "third answer" })
    const result = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
      const child = spawn("sh", ["-c", `printf 'a\\nb\\nc\\n' | ${process.execPath} ${MM_BIN} | head -1`], { cwd: dir })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      child.on("close", () => resolve({ stdout, stderr }))
    })
    expect(result.stdout).toBe("first answer\n")
    expect(result.stderr).toMatch(/^mm 0\.1\.0/)
    expect(result.stderr).not.toMatch(/EPIPE|Error|at .*\.js:\d+/)
  })
})
