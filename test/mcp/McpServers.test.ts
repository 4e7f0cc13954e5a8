import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterEach, describe, expect, it } from "vitest"

import { parseConfig } from "../../src/config/ConfigParse"
import { SecretRegistry, Secrets } from "../../src/lib/Secrets"
import { entryFromConfig, entryFromEditor } from "../../src/mcp/McpEntries"
import { type McpGroup, startGroup } from "../../src/mcp/McpGroup"
import { serversListing, summaryLine } from "../../src/mcp/McpServers"
import { resultText } from "../../src/mcp/McpTools"
import { type McpTurnTools, turnTools } from "../../src/mcp/McpTurnTools"
import { FileAccessDisk } from "../../src/tools/FileAccess"
import { specOf } from "../../src/tools/Registry"
import { mcpToolName } from "../../src/tools/ToolNames"
import { describeCall } from "../../src/tools/ToolRecord"
import { runTool } from "../../src/tools/Tools"
import { startHttpServer, startSseServer } from "../support/mcp-test-server.mjs"
import { MCP_TEST_SERVER } from "../support/paths"
import { isAlive } from "../support/processes"
import { until } from "../support/until"

export const TEST_SERVER = MCP_TEST_SERVER

const groups: Array<McpGroup> = []
let secrets = new SecretRegistry()
afterEach(async () => {
  for (const group of groups.splice(0)) await group.close()
  secrets = new SecretRegistry()
})

/** One call of a turn's MCP tool, run as the agent runs a call (its output redacted and cut to `maxOutput`). */
const runCall = (
  tools: McpTurnTools,
  name: string,
  args: Record<string, unknown>,
  options: { readonly maxOutput: number; readonly timeoutSeconds: number }
) =>
  Effect.runPromise(
    runTool(tools.find(name)!, JSON.stringify(args), { cwd: os.tmpdir(), ...options }).pipe(
      Effect.provide(Layer.merge(FileAccessDisk, Layer.succeed(Secrets, secrets)))
    )
  )

/** What the model is told of a turn's MCP tools. */
const specsOf = (tools: McpTurnTools) => tools.tools().map(specOf)

/** Whether the process runs (a zombie waiting to be reaped does not). */
const stdio = (name: string, env: Record<string, string> = {}, command = process.execPath) => ({
  name,
  approval: "ask" as const,
  enabled: true,
  target: { kind: "stdio" as const, command, args: [TEST_SERVER], env, cwd: os.tmpdir() }
})

const started = async (...entries: Parameters<typeof startGroup>[0]) => {
  const group = startGroup(entries, { secrets, timeoutMs: 5000 })
  groups.push(group)
  await group.ready
  return group
}

describe("tool names", () => {
  it("are mcp__<server>__<tool>, cleaned, and cut at 64 characters with a stable suffix", () => {
    expect(mcpToolName("db", "query")).toBe("mcp__db__query")
    expect(mcpToolName("my db", "run.sql/now")).toBe("mcp__my_db__run_sql_now")
    const long = mcpToolName("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_on")
    expect(long).toHaveLength(64)
    expect(long).toMatch(/^mcp__a-very-long-server-name-for-testing__and_an_even_l_[0-9a-f]{8}$/)
    expect(mcpToolName("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_on")).toBe(long)
    expect(mcpToolName("a-very-long-server-name-for-testing", "and_an_even_longer_tool_name_that_goes_off")).not.toBe(
      long
    )
  })
})

describe("results", () => {
  it("join text and describe anything else in one line", () => {
    expect(
      resultText({
        content: [
          { type: "text", text: "first" },
          { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
          { type: "resource_link", uri: "file:///a.txt", name: "a.txt" },
          { type: "text", text: "last" }
        ]
      })
    ).toBe("first\n[image: image/png, 5 bytes]\n[resource link: a.txt file:///a.txt]\nlast")
    expect(resultText({ content: [] })).toBe("(no output)")
    expect(resultText({ content: [], structuredContent: { rows: 2 } })).toBe("{\"rows\":2}")
  })

  // a server's reply of a million characters took a quadratic regular expression minutes
  it("describe a megabyte of padding or of spaces at once", () => {
    const padded = "=".repeat(1_000_000) + "A"
    expect(resultText({ content: [{ type: "image", data: padded, mimeType: "image/png" }] })).toBe(
      "[image: image/png, 750000 bytes]"
    )
    expect(resultText({ content: [{ type: "resource", resource: { uri: "u", blob: "QUJD".repeat(250_000) + "==" } }] }))
      .toBe("[resource: u (binary, 749999 bytes)]")
    expect(resultText({ content: [{ type: "resource_link", name: " ".repeat(1_000_000) + "x", uri: "u " }] })).toBe(
      "[resource link: x u]"
    )
    expect(resultText({ content: [{ type: "resource_link", name: "a.txt", uri: "" }] })).toBe("[resource link: a.txt]")
  })
})

describe("mcpServers in agent.yaml", () => {
  it("take a command or a url, and say in one line what is wrong", () => {
    const ok = parseConfig(
      "mcpServers:\n  db:\n    command: psql-mcp\n    args: [--ro]\n  gh:\n    url: https://x.test/mcp\n    approval: allow\n",
      "agent.yaml"
    )
    expect(ok._tag).toBe("Right")
    const bad = (text: string) => {
      const r = parseConfig(text, "agent.yaml")
      return r._tag === "Left" ? r.left.message : "accepted"
    }
    expect(bad("mcpServers:\n  db:\n    args: [a]\n")).toBe(
      "agent.yaml: mcpServers.db (line 3, column 5): expected command (a local server) or url (a remote one)"
    )
    expect(bad("mcpServers:\n  db:\n    command: x\n    approval: maybe\n")).toBe(
      "agent.yaml: mcpServers.db.approval (line 4, column 15): expected \"ask\" or \"allow\", got \"maybe\""
    )
    expect(bad("mcpServers:\n  db:\n    url: ftp://x\n")).toBe(
      "agent.yaml: mcpServers.db.url (line 3, column 10): expected an http:// or https:// URL, got \"ftp://x\""
    )
    expect(bad("mcpServers:\n  db:\n    command: x\n    headers: {}\n")).toBe(
      "agent.yaml: mcpServers.db.headers (line 4, column 5): unknown key"
    )
  })

  it("read ${NAME} from the environment and keep the value secret", () => {
    process.env.MM_TEST_MCP_TOKEN = "s3cr3t-value-123"
    try {
      const parsed = parseConfig(
        "mcpServers:\n  gh:\n    url: https://x.test/mcp\n    headers:\n      Authorization: Bearer ${MM_TEST_MCP_TOKEN}\n",
        "agent.yaml"
      )
      if (parsed._tag === "Left") throw parsed.left
      const entry = entryFromConfig("gh", parsed.right.mcpServers.gh, "/p", secrets)
      expect(entry.target).toEqual({
        kind: "http",
        url: "https://x.test/mcp",
        headers: { Authorization: "Bearer s3cr3t-value-123" }
      })
      expect(secrets.redact("sent Bearer s3cr3t-value-123")).toBe("sent Bearer [redacted]")
      const missing = parseConfig(
        "mcpServers:\n  gh:\n    command: x\n    env: {T: '${MM_TEST_UNSET_VAR}'}\n",
        "agent.yaml"
      )
      if (missing._tag === "Left") throw missing.left
      expect(entryFromConfig("gh", missing.right.mcpServers.gh, "/p", secrets).target).toEqual({
        kind: "invalid",
        reason: "environment variable MM_TEST_UNSET_VAR is not set"
      })
    } finally {
      delete process.env.MM_TEST_MCP_TOKEN
    }
  })

  it("an editor's headers and credential-looking variables are secrets", () => {
    entryFromEditor(
      { name: "a", url: "http://x/mcp", headers: [{ name: "X-Api", value: "header-secret-1" }] },
      "/p",
      secrets
    )
    entryFromEditor(
      {
        name: "b",
        command: "x",
        env: [{ name: "GITHUB_TOKEN", value: "ghp-secret-2" }, { name: "MODE", value: "verbose" }]
      },
      "/p",
      secrets
    )
    expect(secrets.redact("header-secret-1 ghp-secret-2 verbose")).toBe("[redacted] [redacted] verbose")
  })
})

describe("a stdio server", () => {
  it("is started, lists its tools, answers, fails with isError, and times out", async () => {
    const group = await started(stdio("test"))
    expect(summaryLine(group)).toBe("mcp: 1 server, 6 tools")
    const tools = turnTools([group], secrets)
    expect(specsOf(tools).map((s) => s.name)).toEqual([
      "mcp__test__echo",
      "mcp__test__look",
      "mcp__test__fail",
      "mcp__test__sleep",
      "mcp__test__env",
      "mcp__test__crash"
    ])
    expect(specsOf(tools)[0]).toMatchObject({
      description: "Says the text back.",
      parameters: { type: "object", properties: { text: { type: "string" } } }
    })
    expect(describeCall(tools.find("mcp__test__look")!, { what: "the sky" })).toEqual({
      title: "the sky",
      kind: "read",
      locations: []
    })
    expect(describeCall(tools.find("mcp__test__echo")!, { text: "hi" }).kind).toBe("other")
    const run = (name: string, args: Record<string, unknown>, timeoutSeconds = 5) =>
      runCall(tools, name, args, { maxOutput: 1000, timeoutSeconds })
    expect(await run("mcp__test__echo", { text: "hello" })).toEqual({ output: "echo: hello", failed: false })
    expect(await run("mcp__test__look", { what: "x" })).toEqual({
      output: "looked at x\n[image: image/png, 16 bytes]",
      failed: false
    })
    expect(await run("mcp__test__fail", {})).toEqual({ output: "it failed on purpose", failed: true })
    expect(await run("mcp__test__echo", { text: "x".repeat(5000) })).toMatchObject({
      failed: false,
      output: expect.stringContaining("characters cut")
    })
    expect(await run("mcp__test__sleep", { seconds: 3 }, 0.5)).toEqual({
      output: "mcp server \"test\" did not answer within 0.5 s; its tools are left out for the rest of this turn",
      failed: true
    })
    expect(specsOf(tools)).toEqual([])
    expect(specsOf(turnTools([group], secrets))).toHaveLength(6)
  })

  it("leaves no process behind once closed", async () => {
    const group = await started(stdio("test"))
    const pid = group.connection("test")!.pid!
    expect(isAlive(pid)).toBe(true)
    await group.close()
    expect(isAlive(pid)).toBe(false)
  })

  it("that cannot start, crashes at start or hangs is one line each, and the others work", async () => {
    const group = startGroup(
      [
        stdio("missing", {}, "mm-no-such-mcp-server"),
        stdio("broken", { MCP_TEST_START: "crash" }),
        stdio("stuck", { MCP_TEST_START: "hang" }),
        stdio("good")
      ],
      // mm waits 10 s for a server to start; 3 s is still many times what a working one needs
      { secrets, timeoutMs: 3000 }
    )
    groups.push(group)
    expect(summaryLine(group)).toBe("mcp: 4 servers starting — /mcp to see them")
    await group.ready
    expect(group.takeProblems()).toEqual([
      "mcp server \"missing\" did not start: spawn mm-no-such-mcp-server ENOENT",
      "mcp server \"broken\" did not start: the connection closed (cannot open the database)",
      "mcp server \"stuck\" did not start: no answer within 3 s"
    ])
    expect(group.takeProblems()).toEqual([])
    expect(summaryLine(group)).toBe("mcp: 1 server, 6 tools · failed: missing, broken, stuck — /mcp to see why")
    expect(serversListing([group])).toContain(
      "stuck  " + process.execPath + " " + TEST_SERVER + "  — failed: did not start: no answer within 3 s"
    )
  })

  it("that crashes during a call fails the call, says why once, and its tools go", async () => {
    const group = await started(stdio("test"))
    const tools = turnTools([group], secrets)
    const result = await runCall(tools, "mcp__test__crash", {}, { maxOutput: 1000, timeoutSeconds: 5 })
    expect(result.failed).toBe(true)
    expect(result.output).toBe("mcp server \"test\" stopped during the call (crashing on purpose)")
    // the server's end is known once the listing says so; its line, had it come, came with it
    await until(() => serversListing([group]).includes("— failed: stopped"), "the listing to show the server stopped")
    expect(group.takeProblems()).toEqual([])
    expect(serversListing([group])).toContain("— failed: stopped: the server exited (crashing on purpose)")
    expect(specsOf(tools)).toEqual([])
  })
})

describe("an HTTP server of the older SSE kind", () => {
  it("is spoken to over SSE after its 405 to streamable HTTP, headers included", async () => {
    const server = await startSseServer()
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mm-mcp-")), "calls.log")
    process.env.MCP_TEST_LOG = log
    try {
      const group = await started({
        name: "old",
        approval: "allow",
        enabled: true,
        target: { kind: "http", url: server.url, headers: { Authorization: "Bearer sse-456" } }
      })
      const tools = turnTools([group], secrets)
      const result = await runCall(tools, "mcp__old__echo", { text: "over sse" }, {
        maxOutput: 1000,
        timeoutSeconds: 5
      })
      expect(result).toEqual({ output: "echo: over sse", failed: false })
      expect(JSON.parse(fs.readFileSync(log, "utf8").trim())).toEqual({
        tool: "echo",
        text: "over sse",
        authorization: "Bearer sse-456"
      })
      // streamable HTTP was tried first, then the event stream was opened
      expect(server.requests[0]).toBe("POST /mcp")
      expect(server.requests).toContain("GET /mcp")
      expect(server.requests).toContain("POST /messages")
    } finally {
      delete process.env.MCP_TEST_LOG
      await server.close()
    }
  })
})

describe("a streamable HTTP server", () => {
  it("gets the headers and answers", async () => {
    const server = await startHttpServer()
    const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mm-mcp-")), "calls.log")
    process.env.MCP_TEST_LOG = log
    try {
      const group = await started({
        name: "remote",
        approval: "allow",
        enabled: true,
        target: { kind: "http", url: server.url, headers: { Authorization: "Bearer abc-123" } }
      })
      const tools = turnTools([group], secrets)
      expect(tools.find("mcp__remote__echo")?.preapproved).toBe(true)
      const result = await runCall(tools, "mcp__remote__echo", { text: "over http" }, {
        maxOutput: 1000,
        timeoutSeconds: 5
      })
      expect(result).toEqual({ output: "echo: over http", failed: false })
      expect(JSON.parse(fs.readFileSync(log, "utf8").trim())).toEqual({
        tool: "echo",
        text: "over http",
        authorization: "Bearer abc-123"
      })
    } finally {
      delete process.env.MCP_TEST_LOG
      await server.close()
    }
  })
})
