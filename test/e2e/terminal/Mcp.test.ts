import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterEach, beforeEach, describe, expect, it } from "vitest"

import { builtinTools } from "../../../src/tools/Registry"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { startHttpServer } from "../../support/mcp-test-server.mjs"
import { configFor, MM_BIN, MmProcess, stripAnsi, tempProject } from "../../support/MmProcess"
import { MCP_TEST_SERVER } from "../../support/paths"
import { isAlive, waitUntilGone } from "../../support/processes"

const SERVER = MCP_TEST_SERVER

let fake: FakeModelServer
let scratch: string
beforeEach(async () => {
  fake = await startFakeModelServer()
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mm-mcp-scratch-"))
})
afterEach(async () => {
  await fake.close()
  fs.rmSync(scratch, { recursive: true, force: true })
})

/** Whether the process runs (a zombie waiting to be reaped does not). */
const lines = (file: string): Array<any> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []

/** Every file under `dir`, with its text. */
const filesUnder = (dir: string): Array<[string, string]> =>
  fs.readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const file = path.join(e.parentPath ?? (e as any).path, e.name)
      return [file, fs.readFileSync(file, "utf8")]
    })

describe("MCP servers in the terminal", () => {
  it(
    "gives the model their tools, shows calls and results, saves them, and survives a missing, a crashing and a hanging server",
    async () => {
      const log = path.join(scratch, "calls.log")
      const pids = path.join(scratch, "pids")
      const project = tempProject(
        configFor(fake.url, [
          "sessions:",
          "  enabled: true",
          "mcpServers:",
          "  test:",
          `    command: ${process.execPath}`,
          `    args: [${JSON.stringify(SERVER)}]`,
          `    env: {MCP_TEST_LOG: ${JSON.stringify(log)}, MCP_TEST_PIDFILE: ${JSON.stringify(pids)}}`,
          "  missing:",
          "    command: mm-no-such-mcp-server",
          "  off:",
          "    command: mm-never-started",
          "    enabled: false"
        ])
      )
      fake.push(
        { toolCalls: [{ name: "mcp__test__echo", arguments: { text: "hi there" } }] },
        { text: "The server said hi." },
        { toolCalls: [{ name: "mcp__test__sleep", arguments: { seconds: 30 } }] },
        { text: "It was too slow." },
        { toolCalls: [{ name: "mcp__test__fail", arguments: {} }] },
        { text: "It failed." },
        { toolCalls: [{ name: "mcp__test__crash", arguments: {} }] },
        { text: "It crashed." },
        { text: "Still here." }
      )
      fs.writeFileSync(
        path.join(project, "agent.yaml"),
        fs.readFileSync(path.join(project, "agent.yaml"), "utf8").replace("watchdogTimeout: 5", "watchdogTimeout: 2")
      )
      const mm = new MmProcess(project)
      mm.send("say hi through the server")
      await mm.waitFor("The server said hi.")
      // piped: the banner, notices and tool lines are on stderr, answers on stdout
      expect(mm.stderr).toContain("mcp: 2 servers starting — /mcp to see them")
      expect(mm.stderr).toContain("mcp server \"missing\" did not start: spawn mm-no-such-mcp-server ENOENT")
      expect(mm.stderr).toContain("⚙ mcp__test__echo  hi there\n  ↳ echo: hi there\n")
      const [first, second] = fake.completions()
      expect(first.body.tools.map((t: any) => t.function.name)).toEqual([
        ...builtinTools.map((tool) => tool.name),
        "mcp__test__echo",
        "mcp__test__look",
        "mcp__test__fail",
        "mcp__test__sleep",
        "mcp__test__env",
        "mcp__test__crash"
      ])
      expect(first.body.tools.find((t: any) => t.function.name === "mcp__test__echo").function).toMatchObject({
        description: "Says the text back.",
        parameters: { properties: { text: { type: "string" } } }
      })
      expect(second.body.messages.at(-1)).toMatchObject({ role: "tool", content: "echo: hi there" })
      expect(lines(log)).toEqual([{ tool: "echo", text: "hi there" }])

      mm.send("now wait")
      await mm.waitFor("It was too slow.")
      expect(mm.stderr).toContain(
        "✗ mcp server \"test\" did not answer within 2 s; its tools are left out for the rest of this turn"
      )
      expect(fake.completions()[3].body.tools.map((t: any) => t.function.name)).not.toContain("mcp__test__echo")

      mm.send("now fail")
      await mm.waitFor("It failed.")
      expect(mm.stderr).toContain("⚙ mcp__test__fail\n  ✗ it failed on purpose\n")
      expect(fake.completions()[5].body.messages.at(-1)).toMatchObject({
        role: "tool",
        content: "it failed on purpose"
      })

      mm.send("/mcp")
      await mm.waitFor("missing  mm-no-such-mcp-server")
      const listing = mm.stdout.slice(mm.stdout.indexOf("test  "))
      expect(listing).toContain(
        `test  ${process.execPath} ${SERVER}  — ready, 6 tool(s)\n    mcp__test__echo\n    mcp__test__look  (read-only)\n`
      )
      expect(listing).toContain(
        "missing  mm-no-such-mcp-server  — failed: did not start: spawn mm-no-such-mcp-server ENOENT"
      )
      expect(listing).toContain("off  mm-never-started  — disabled (enabled: false)")

      mm.send("now crash")
      await mm.waitFor("It crashed.")
      mm.send("still there?")
      await mm.waitFor("Still here.")
      expect(mm.stderr).toContain(
        "⚙ mcp__test__crash\n  ✗ mcp server \"test\" stopped during the call (crashing on purpose)\n"
      )
      expect(mm.stdout).toContain("It crashed.\nStill here.")
      // each answer is followed by its dim usage line, on stderr when piped
      expect(mm.stderr).toMatch(/~[\d.k]+ in · [^\n]* context\n/)
      expect(fake.completions().at(-1)!.body.tools.map((t: any) => t.function.name)).toEqual(
        builtinTools.map((tool) => tool.name)
      )
      expect(await mm.end()).toBe(0)

      const [saved] = fs.readdirSync(path.join(project, ".mm/sessions")).filter((f) => f.endsWith(".json"))
      const session = JSON.parse(fs.readFileSync(path.join(project, ".mm/sessions", saved), "utf8"))
      const call = session.messages.find((m: any) => m.tool_calls?.[0]?.function.name === "mcp__test__echo")
      expect(call.tool_calls[0].function.arguments).toBe("{\"text\":\"hi there\"}")
      expect(session.messages).toContainEqual({
        role: "tool",
        tool_call_id: call.tool_calls[0].id,
        content: "echo: hi there"
      })
      expect(session.messages).toContainEqual(
        expect.objectContaining({ role: "tool", content: "it failed on purpose", failed: true })
      )
      const started = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number)
      expect(started).toHaveLength(1)
      expect(await waitUntilGone(started[0])).toBe(true)
    },
    60_000
  )

  it("sends a remote server the headers read from the environment, and keeps the value out of every file", async () => {
    const http = await startHttpServer()
    const log = path.join(scratch, "calls.log")
    const pids = path.join(scratch, "pids")
    try {
      const project = tempProject(
        configFor(fake.url, [
          "sessions:",
          "  enabled: true",
          "mcpServers:",
          "  remote:",
          `    url: ${http.url}`,
          "    headers:",
          "      Authorization: Bearer ${MM_TEST_MCP_TOKEN}",
          "  local:",
          `    command: ${process.execPath}`,
          `    args: [${JSON.stringify(SERVER)}]`,
          `    env: {MCP_TEST_PIDFILE: ${JSON.stringify(pids)}}`
        ])
      )
      fake.push({ toolCalls: [{ name: "mcp__remote__echo", arguments: { text: "over http" } }] }, {
        text: "Done remotely."
      })
      process.env.MCP_TEST_LOG = log
      const mm = new MmProcess(project, [], { MM_TEST_MCP_TOKEN: "tok-9f8e7d6c5b4a" })
      mm.send("call the remote server")
      await mm.waitFor("Done remotely.")
      const [local] = fs.readFileSync(pids, "utf8").trim().split("\n").map(Number)
      expect(isAlive(local)).toBe(true)
      expect(await mm.end()).toBe(0)
      expect(await waitUntilGone(local)).toBe(true)
      expect(lines(log)).toEqual([{ tool: "echo", text: "over http", authorization: "Bearer tok-9f8e7d6c5b4a" }])
      expect(mm.stderr).toContain("⚙ mcp__remote__echo  over http\n  ↳ echo: over http\n")
      const files = filesUnder(project)
      expect(files.some(([file]) => file.includes(".mm/sessions"))).toBe(true)
      for (const [file, text] of files) expect(text.includes("tok-9f8e7d6c5b4a"), file).toBe(false)
    } finally {
      delete process.env.MCP_TEST_LOG
      await http.close()
    }
  }, 30_000)

  it(
    "a 300 MB reply from a remote server (event stream or JSON) fails its call in one line; mm stays under 600 MB",
    async () => {
      const http = await startHttpServer()
      try {
        const project = tempProject(configFor(fake.url, ["mcpServers:", "  remote:", `    url: ${http.url}`]))
        const bytes = 300 * 1024 * 1024
        fake.push(
          { toolCalls: [{ name: "mcp__remote__flood", arguments: { bytes } }] },
          { text: "The stream was too much." },
          { toolCalls: [{ name: "mcp__remote__flood", arguments: { bytes, json: true } }] },
          { text: "The body was too much." }
        )
        const mm = new MmProcess(project)
        mm.send("flood me")
        await mm.waitFor("The stream was too much.", 0, 60_000)
        mm.send("again, as JSON")
        await mm.waitFor("The body was too much.", 0, 60_000)
        // the highest resident set mm had, read while it still runs
        const status = fs.readFileSync(`/proc/${mm.child.pid}/status`, "utf8")
        const peakMb = Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) / 1024
        expect(await mm.end()).toBe(0)
        expect(peakMb, `mm's peak resident set: ${peakMb} MB`).toBeLessThan(600)
        const tooLarge = "mcp server \"remote\" failed the call: reply over 10 MiB (the MCP message limit), dropped"
        expect(mm.stderr.split("\n").filter((line) => line === `  ✗ ${tooLarge}`), mm.stderr).toHaveLength(2)
        // the model reads the same line as each call's result
        const results = [1, 3].map((i) => fake.completions()[i].body.messages.at(-1))
        for (const result of results) {
          expect(result).toMatchObject({
            role: "tool",
            content: expect.stringContaining("reply over 10 MiB")
          })
        }
        // mm stopped reading: neither reply was sent whole
        expect(http.floods.map((f) => f.bytes < bytes)).toEqual([true, true])
      } finally {
        await http.close()
      }
    },
    120_000
  )

  it("at a terminal, says once every server is up, above the prompt, without waiting for a question", async () => {
    const project = tempProject(
      configFor(fake.url, [
        "mcpServers:",
        "  test:",
        `    command: ${process.execPath}`,
        `    args: [${JSON.stringify(SERVER)}]`,
        "  missing:",
        "    command: mm-no-such-mcp-server"
      ])
    )
    const child = spawn("script", ["-qfec", `${process.execPath} ${MM_BIN}`, "/dev/null"], {
      cwd: project,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, TERM: "xterm", NO_COLOR: undefined, AGENT_CONFIG: undefined }
    })
    let screen = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (screen += d))
    const exited = new Promise((resolve) => child.on("exit", resolve))
    const deadline = Date.now() + 15_000
    while (!/failed: missing — \/mcp to see why[\s\S]*> $/.test(stripAnsi(screen)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    const plain = stripAnsi(screen).replace(/\r/g, "")
    expect(plain).toContain("mcp: 2 servers starting — /mcp to see them\n")
    expect(plain).toContain(
      "mcp: 1 server, 6 tools · failed: missing — /mcp to see why\nmcp server \"missing\" did not start: spawn mm-no-such-mcp-server ENOENT\n> "
    )
    expect(screen).toContain("\u001b[33mmcp server \"missing\" did not start")
    child.stdin!.write("/exit\r")
    await exited
  }, 30_000)
})
