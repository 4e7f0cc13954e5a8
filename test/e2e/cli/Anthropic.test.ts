import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeAnthropicServer, startFakeAnthropicServer } from "../../support/FakeAnthropicServer"
import { onlySession, runMm, tempProject } from "../../support/MmProcess"

const KEY_ENV = "MM_E2E_ANTHROPIC_KEY"
const KEY = "sk-ant-e2e-5f4e3d2c1b0a"
/** What chat completions hold their first request to, with the default tools (test/agent/SearchTools.test.ts). */
const FIRST_REQUEST_BUDGET = 5000

const anthropicProject = (url: string): string =>
  tempProject([
    "model:",
    "  api: anthropic",
    `  url: ${url}`,
    "  name: claude-fake",
    `  apiKeyEnv: ${KEY_ENV}`,
    "  thinking: low",
    "watchdogTimeout: 10",
    "permissions: allow",
    "sessions:",
    "  enabled: true"
  ])

const jsonLines = (stdout: string): Array<any> => stdout.trim().split("\n").map((line) => JSON.parse(line))

const cacheMarks = (body: any): Array<string> => [
  ...(body.system ?? []).flatMap((b: any) => (b.cache_control === undefined ? [] : ["system"])),
  ...(body.tools ?? []).flatMap((t: any, i: number) =>
    t.cache_control === undefined ? [] : [i === body.tools.length - 1 ? "last tool" : `tool ${t.name}`]
  ),
  ...body.messages.flatMap((m: any, i: number) =>
    m.content.flatMap((b: any) => (b.cache_control === undefined ? [] : [`message ${i} ${m.role} ${b.type}`]))
  )
]

describe("mm -p over Anthropic Messages", () => {
  let server: FakeAnthropicServer
  beforeAll(async () => {
    server = await startFakeAnthropicServer()
  })
  afterAll(() => server.close())

  it("two turns with a tool call: the second request carries the breakpoints and the signed thinking, and the cached tokens are shown", async () => {
    const project = anthropicProject(server.url)
    const env = { [KEY_ENV]: KEY }
    server.push(
      {
        thinking: { text: "The user wants the files listed.", signature: "sig-turn-1" },
        toolUses: [{ id: "toolu_e2e", name: "bash", input: { command: "echo one-file" } }],
        usage: { input_tokens: 1800, output_tokens: 30, cache_creation_input_tokens: 0 }
      },
      { text: "There is one file.", usage: { input_tokens: 40, output_tokens: 6, cache_creation_input_tokens: 1900 } }
    )
    const first = await runMm(project, [], ["-p", "--output-format", "json", "list the files"], env)
    expect(first.code).toBe(0)
    const firstRequest = server.messages()[0]
    expect(firstRequest.headers["x-api-key"]).toBe(KEY)
    expect(firstRequest.body.thinking).toEqual({ type: "enabled", budget_tokens: 2048 })
    // the first request, as sent: the system prompt, the default tools and the question
    expect(firstRequest.body.tools.length).toBeGreaterThan(3)
    expect(firstRequest.bytes).toBeLessThanOrEqual(FIRST_REQUEST_BUDGET)
    console.info(`first Anthropic request with the default tools: ${firstRequest.bytes} bytes`)
    const firstResult = jsonLines(first.stdout).at(-1)
    expect(firstResult).toMatchObject({ type: "result", status: "answered", answer: "There is one file." })

    server.push({
      text: "Still one.",
      usage: { input_tokens: 12, output_tokens: 4, cache_read_input_tokens: 1900, cache_creation_input_tokens: 30 }
    })
    const second = await runMm(project, [], ["--continue", "-p", "--output-format", "json", "and now?"], env)
    expect(second.code).toBe(0)
    const body = server.messages()[2].body
    expect(cacheMarks(body)).toEqual([
      "system",
      "last tool",
      "message 3 assistant text",
      "message 4 user text"
    ])
    expect(body.messages[1].role).toBe("assistant")
    expect(body.messages[1].content[0]).toEqual({
      type: "thinking",
      thinking: "The user wants the files listed.",
      signature: "sig-turn-1"
    })
    expect(body.messages[1].content[1]).toMatchObject({ type: "tool_use", id: "toolu_e2e" })
    const usage = jsonLines(second.stdout).filter((line) => line.type === "usage").at(-1)
    expect(usage).toMatchObject({ promptTokens: 1942, completionTokens: 4, cachedTokens: 1900, cacheWriteTokens: 30 })

    // the session file keeps the signed thinking with the assistant message that called the tool
    const session = onlySession(project)
    const caller = session.messages.find((m: any) => m.tool_calls !== undefined)
    expect(caller.opaque).toEqual({
      api: "anthropic",
      model: "claude-fake",
      items: [{ type: "thinking", thinking: "The user wants the files listed.", signature: "sig-turn-1" }]
    })
    expect(JSON.stringify(session)).not.toContain(KEY)

    // the REPL's usage line after the answer says what was read from the cache
    server.push({ text: "Yes.", usage: { input_tokens: 5, output_tokens: 2, cache_read_input_tokens: 1960 } })
    const third = await runMm(project, ["once more"], ["--continue"], env)
    expect(third.stdout).toContain("Yes.")
    expect(third.all).toContain("2k in (2k cached) · 2 out")
  })

  it("a refused key is one line naming the variable, and the exit code says the turn failed", async () => {
    const project = anthropicProject(server.url)
    server.push({ kind: "error", status: 401, type: "authentication_error", message: "invalid x-api-key" })
    const run = await runMm(project, [], ["-p", "hello"], { [KEY_ENV]: KEY })
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain(
      `the Anthropic API refused the key (HTTP 401: invalid x-api-key) — check the key in $${KEY_ENV} (model.apiKeyEnv)`
    )
    expect(run.stderr).not.toMatch(/\bat .+:\d+:\d+/)
  })
})
