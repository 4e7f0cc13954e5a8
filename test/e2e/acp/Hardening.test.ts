import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { afterEach, describe, expect, it } from "vitest"

import { configYaml, makeProject, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

const KEY = "sk-acp-7e6d5c4b3a21"

describe("mm acp: hardening", () => {
  afterEach(() => {
    delete process.env.MM_TEST_ACP_KEY
  })

  it("a key echoed by the server or printed by a tool reaches the editor as [redacted]", async () => {
    process.env.MM_TEST_ACP_KEY = KEY
    const yaml = configYaml({ url: harness.fake().url }).replace(
      "  name: fake-model\n",
      "  name: fake-model\n  apiKeyEnv: MM_TEST_ACP_KEY\n"
    )
    const project = makeProject(yaml)
    fs.writeFileSync(path.join(project.dir, "key.txt"), KEY)
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    harness.fake().push(
      { kind: "status", status: 401, body: { error: { message: `bad key ${KEY}` } } },
      { toolCalls: [{ name: "bash", arguments: { command: "echo \"env=$MM_TEST_ACP_KEY\"; cat key.txt" } }] },
      { text: ["it is sk-acp-7e6d", "5c4b3a21"] }
    )
    // a failed generation answers the prompt with a JSON-RPC error, redacted like the line
    const failed = await ask("one").catch((error: { message: string }) => error)
    expect(failed).toMatchObject({ message: expect.stringContaining("bad key [redacted]") })
    await ask("two")
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("bad key [redacted]")
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("it is [redacted]")
    const wire = agent.traffic.filter((t) => t.direction === "out").map((t) => t.line).join("\n")
    expect(wire).toContain("env=\\n[redacted]")
    expect(wire).not.toContain(KEY)
    const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
    expect(fs.readFileSync(file, "utf8")).not.toContain(KEY)
    expect(agent.invalid()).toEqual([])
  })

  it("a 40 MB line is answered with an error, logged once, and the next request is served", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const big = "A".repeat(40 * 1024 * 1024)
    const withId = `{"jsonrpc":"2.0","id":"big-1","method":"session/new","params":{"cwd":${
      JSON.stringify(project.dir)
    },"mcpServers":[],"_meta":{"junk":"${big}"}}}\n`
    const withoutId = `{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"${big}"}}\n`
    await new Promise<void>((resolve) => agent.child.stdin.write(withId + withoutId, () => resolve()))
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    expect(sessionId).toMatch(/\S/)
    const answer = agent.traffic.find((t) => t.direction === "out" && t.message?.id === "big-1")
    expect(answer?.message).toEqual({
      jsonrpc: "2.0",
      id: "big-1",
      error: {
        code: -32600,
        message: expect.stringMatching(/^message too large: \d+ bytes, over the limit of 33554432; it was discarded$/)
      }
    })
    const logged = agent.stderr().split("\n").filter((line) => line.includes("dropped an incoming message"))
    expect(logged).toHaveLength(2)
    expect(logged[0]).toMatch(
      /^\[acp\] dropped an incoming message of \d+ bytes, over the limit of 33554432 \(request id "big-1"\)$/
    )
    expect(logged[1]).toMatch(/^\[acp\] dropped an incoming message of \d+ bytes, over the limit of 33554432$/)
    harness.fake().push({ text: "still serving" })
    const done = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hi" }]
    })
    expect(done.stopReason).toBe("end_turn")
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("still serving")
  }, 60_000)
})
