import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { runMm, tempProject } from "../../support/MmProcess"

describe("the API key end to end", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a 401 echoing the key and a bash running env leave it in no output, session file or request", async () => {
    const key = "sk-test-4f9a8b7c6d5e"
    const project = tempProject([
      "model:",
      `  url: ${server.url}`,
      "  name: fake-model",
      "  apiKeyEnv: MM_TEST_API_KEY",
      "watchdogTimeout: 5",
      "permissions: allow",
      "sessions:",
      "  enabled: true"
    ])
    server.push(
      { kind: "status", status: 401, body: { error: { message: `invalid key ${key} for this server` } } },
      {
        toolCalls: [{
          name: "bash",
          arguments: { command: "env; echo \"key=$MM_TEST_API_KEY\"; echo leaked-by-file $(cat key.txt)" }
        }]
      },
      { text: `the key is ${key}` }
    )
    fs.writeFileSync(path.join(project, "key.txt"), key)
    const run = await runMm(project, ["first question", "show the environment"], [], { MM_TEST_API_KEY: key })
    expect(run.stderr).toContain("model server answered HTTP 401: invalid key [redacted] for this server")
    expect(run.stdout).toContain("the key is [redacted]")
    expect(run.stdout + run.stderr).not.toContain(key)
    const requests = server.completions().slice(-2)
    expect(requests[0].headers.authorization).toBe(`Bearer ${key}`)
    const toolResult = requests[1].body.messages.find((m: { role: string }) => m.role === "tool")
    expect(toolResult.content).toContain("key=\n")
    expect(toolResult.content).not.toContain("MM_TEST_API_KEY")
    expect(toolResult.content).toContain("leaked-by-file [redacted]")
    expect(JSON.stringify(requests.map((r) => r.body))).not.toContain(key)
    const dir = path.join(project, ".mm/sessions")
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json") && !f.startsWith("."))
    expect(files).toHaveLength(1)
    const saved = fs.readFileSync(path.join(dir, files[0]), "utf8")
    expect(saved).not.toContain(key)
    expect(saved).toContain("invalid key [redacted] for this server")
  })

  it("a key in the URL's user part is redacted in the banner, the error and the session file", async () => {
    const key = "sk-url-key-9876"
    // nothing listens on port 1: the request fails with a line naming the URL
    const project = tempProject([
      "model:",
      `  url: http://me:${key}@127.0.0.1:1/v1`,
      "  name: fake-model",
      "watchdogTimeout: 5",
      "sessions:",
      "  enabled: true"
    ])
    const run = await runMm(project, ["hello"])
    expect(run.stderr).toContain("model fake-model at http://[redacted]@127.0.0.1:1/v1")
    expect(run.stderr).toContain("cannot reach the model server at http://[redacted]@127.0.0.1:1/v1")
    expect(run.all).not.toContain(key)
    const dir = path.join(project, ".mm/sessions")
    const files = fs.readdirSync(dir).filter((f) => f.endsWith(".json"))
    expect(files).toHaveLength(1)
    const saved = fs.readFileSync(path.join(dir, files[0]), "utf8")
    expect(saved).toContain("[redacted]@127.0.0.1:1")
    expect(saved).not.toContain(key)
  })
})
