import * as acp from "@agentclientprotocol/sdk"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { configYaml, makeProject, textOf, useAgents } from "./support/acp-agent"

const harness = useAgents()

const KEY = "sk-acp-7e6d5c4b3a21"

describe("mm acp: hardening", () => {
  afterEach(() => {
    delete process.env.MM_TEST_ACP_KEY
  })

  it("a key echoed by the server or printed by a tool reaches the editor as [redacted]", async () => {
    process.env.MM_TEST_ACP_KEY = KEY
    const yaml = configYaml({ url: harness.fake().url }).replace("  name: fake-model\n", "  name: fake-model\n  apiKeyEnv: MM_TEST_ACP_KEY\n")
    const project = makeProject(yaml)
    fs.writeFileSync(path.join(project.dir, "key.txt"), KEY)
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const ask = (text: string) => agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
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
})
