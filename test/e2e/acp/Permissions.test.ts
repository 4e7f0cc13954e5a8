// mm acp and remembered approvals: an allow-always given in one editor run is kept in
// .mm/permissions.json and covers the next run's call without a permission request;
// /permissions lists and revokes it through a prompt.
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

describe("mm acp: remembered approvals", () => {
  it("an allow-always survives a restart of the agent; /permissions lists it and rm revokes it", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    const run = async (onPermission: () => acp.RequestPermissionResponse) => {
      const agent = harness.start({ cwd: project.dir, config: project.config, onPermission })
      await agent.initialize()
      const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
        cwd: project.dir,
        mcpServers: []
      })
      const ask = (text: string) =>
        agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
      return { agent, ask }
    }
    const first = await run(() => ({ outcome: { outcome: "selected", optionId: "allow-always" } }))
    harness.fake().push({ toolCalls: [{ id: "c1", name: "bash", arguments: { command: "touch made-one" } }] }, {
      text: "done"
    })
    await first.ask("go")
    expect(first.agent.permissionRequests).toHaveLength(1)
    expect(first.agent.permissionRequests[0].options.filter((o) => o.kind === "allow_always").map((o) => o.name))
      .toEqual([
        "Always run exactly this command, in this project",
        "Allow exactly this command until this session ends"
      ])
    await first.agent.kill()
    expect(JSON.parse(fs.readFileSync(path.join(project.dir, ".mm/permissions.json"), "utf8")).approvals).toEqual([
      { _tag: "ExactCommand", command: "touch made-one" }
    ])

    // a new agent process: covered, no permission request; anything else still asks
    const second = await run(() => ({ outcome: { outcome: "cancelled" } }))
    harness.fake().push(
      { toolCalls: [{ id: "c2", name: "bash", arguments: { command: "touch made-one" } }] },
      { toolCalls: [{ id: "c3", name: "bash", arguments: { command: "touch made-one made-two" } }] },
      { text: "done" }
    )
    await second.ask("again")
    expect(fs.existsSync(path.join(project.dir, "made-two"))).toBe(false)
    expect(second.agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["c3"])

    const said = async (text: string) => {
      const before = second.agent.updates.length
      await second.ask(text)
      return textOf(second.agent.updates.slice(before), "agent_message_chunk")
    }
    expect(await said("/permissions")).toContain("1. bash, this exact command only: touch made-one")
    expect(await said("/permissions rm 1")).toContain("revoked 1: bash, this exact command only: touch made-one")
    expect(JSON.parse(fs.readFileSync(path.join(project.dir, ".mm/permissions.json"), "utf8")).approvals).toEqual([])
    expect(second.agent.invalid()).toEqual([])
  })
})
