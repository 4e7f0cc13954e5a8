import * as fs from "node:fs"
import * as path from "node:path"

import { afterEach, beforeEach, describe, expect, it } from "vitest"

import { type FakeResponsesServer, responsesYaml, startFakeResponsesServer } from "../../support/FakeResponsesServer"
import { onlySession, runMm, tempProject } from "../../support/MmProcess"

const KEY_ENV = "MM_E2E_RESPONSES_KEY"
const KEY = "sk-e2e-responses-abcdef123456"

describe("mm -p against an OpenAI Responses server", () => {
  let server: FakeResponsesServer
  beforeEach(async () => {
    server = await startFakeResponsesServer()
  })
  afterEach(() => server.close())

  it("runs a tool turn, sends the reasoning back, shows the usage, and goes on in the next run", async () => {
    const project = tempProject(responsesYaml(server.url, KEY_ENV))
    server.push(
      {
        reasoning: { summary: ["The user wants a greeting file."], encrypted: "ENC-ONE" },
        calls: [{ name: "bash", arguments: { command: "echo hi > hi.txt && cat hi.txt" }, callId: "call_hi" }],
        usage: { input_tokens: 1500, output_tokens: 40 }
      },
      { text: "Wrote hi.txt.", usage: { input_tokens: 1600, output_tokens: 6, cached_tokens: 1024 } }
    )
    const run = await runMm(project, [], ["-p", "--output-format", "json", "make hi.txt"], { [KEY_ENV]: KEY })
    expect(run.stderr).toBe("")
    const lines = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(lines.at(-1)).toMatchObject({ type: "result", status: "answered", answer: "Wrote hi.txt." })
    expect(lines.filter((l) => l.type === "usage").at(-1)).toMatchObject({
      promptTokens: 1600,
      completionTokens: 6,
      cachedTokens: 1024
    })
    expect(fs.readFileSync(path.join(project, "hi.txt"), "utf8")).toBe("hi\n")

    const [first, second] = server.posts()
    expect(first.headers.authorization).toBe(`Bearer ${KEY}`)
    expect(first.body).toMatchObject({ store: false, stream: true, include: ["reasoning.encrypted_content"] })
    expect(first.body.instructions).toContain("# Environment")
    // what the first request weighs with the default tools (said in docs/reference/model-servers.md)
    console.log(`first Responses request: ${first.bytes} bytes, ${first.body.tools.length} tools`)
    expect(first.bytes).toBeLessThanOrEqual(5000)
    // stateless: the second request carries the whole turn, the reasoning item before its call
    expect(second.body.input.map((item: any) => item.type)).toEqual([
      "message",
      "reasoning",
      "function_call",
      "function_call_output"
    ])
    expect(second.body.input[1]).toEqual({
      type: "reasoning",
      summary: [{ type: "summary_text", text: "The user wants a greeting file." }],
      encrypted_content: "ENC-ONE"
    })
    expect(second.body.input[3]).toEqual({
      type: "function_call_output",
      call_id: "call_hi",
      output: "exit code 0\nhi\n"
    })

    const session = onlySession(project)
    const assistant = session.messages.find((m: any) => m.role === "assistant" && m.tool_calls !== undefined)
    expect(assistant.opaque).toMatchObject({
      api: "responses",
      model: "fake-model",
      items: [{ encrypted_content: "ENC-ONE" }]
    })
    expect(assistant.reasoning).toBe("The user wants a greeting file.")
    expect(JSON.stringify(session)).not.toContain(KEY)

    // the next run resumes the session: the reasoning goes back to the same model again
    server.push({ text: "Still here." })
    const again = await runMm(project, [], ["-p", "--continue", "and now?"], { [KEY_ENV]: KEY })
    expect(again.stdout).toBe("Still here.\n")
    const third = server.posts()[2].body
    expect(third.input.filter((item: any) => item.type === "reasoning")).toEqual([second.body.input[1]])
    expect(third.input.at(-1)).toEqual({
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "and now?" }]
    })
  }, 60_000)

  it("a refused key is one line naming the variable, with the key redacted", async () => {
    const project = tempProject(responsesYaml(server.url, KEY_ENV))
    server.push({
      kind: "status",
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${KEY}.`,
          type: "invalid_request_error",
          code: "invalid_api_key"
        }
      }
    })
    const run = await runMm(project, [], ["-p", "hello"], { [KEY_ENV]: KEY })
    expect(run.code).not.toBe(0)
    expect(run.stderr.trim().split("\n")).toEqual([
      `the Responses API refused the key (HTTP 401: Incorrect API key provided: [redacted].) — check the key in $${KEY_ENV} (model.apiKeyEnv)`
    ])
  }, 30_000)
})
