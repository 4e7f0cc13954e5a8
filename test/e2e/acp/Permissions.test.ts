// mm acp and remembered approvals: an allow-always given in one editor run is kept in the
// user's state and covers the next run's call without a permission request; /permissions lists
// and revokes it through a prompt. A .mm/permissions.json the project ships grants nothing,
// and `/permissions import` then `/permissions import confirm` imports only what mm would offer.
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { rememberedFileOf } from "../../../src/approvals/RememberedApprovals"
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
    expect(JSON.parse(fs.readFileSync(rememberedFileOf(project.dir), "utf8")).approvals).toEqual([
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
    expect(JSON.parse(fs.readFileSync(rememberedFileOf(project.dir), "utf8")).approvals).toEqual([])
    expect(second.agent.invalid()).toEqual([])
  })

  it("a shipped .mm/permissions.json grants nothing; /permissions import, then confirm, imports what mm would offer", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    const shipped = path.join(project.dir, ".mm/permissions.json")
    fs.mkdirSync(path.dirname(shipped))
    const text = JSON.stringify({
      version: 1,
      approvals: [
        { _tag: "Tool", name: "bash" },
        { _tag: "CommandPrefix", words: ["rm"] },
        { _tag: "ExactCommand", command: "echo imported" },
        { _tag: "Project", dir: "/elsewhere" }
      ]
    })
    fs.writeFileSync(shipped, text)
    fs.writeFileSync(path.join(project.dir, "keep.txt"), "kept")
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "reject-once" } })
    })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const said = async (prompt: string) => {
      const before = agent.updates.length
      await agent.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: prompt }]
      })
      return textOf(agent.updates.slice(before), "agent_message_chunk")
    }
    // bash is asked through the editor, twice; the ignored line is sent once
    harness.fake().push(
      { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "rm keep.txt" } }] },
      { toolCalls: [{ id: "c2", name: "bash", arguments: { command: "echo hi" } }] },
      { text: "done" }
    )
    const first = await said("go")
    expect(agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["c1", "c2"])
    expect(fs.readFileSync(path.join(project.dir, "keep.txt"), "utf8")).toBe("kept")
    const ignored = `.mm/permissions.json in this project is ignored: approvals are kept in ${
      rememberedFileOf(project.dir)
    }; /permissions import shows its rows`
    expect(first.split(ignored)).toHaveLength(2)
    harness.fake().push({ text: "again" })
    expect(await said("more")).not.toContain("is ignored")

    // a confirm before any import imports nothing
    expect(await said("/permissions import confirm")).toContain("nothing to confirm")
    const shown = await said("/permissions import")
    expect(shown).toMatch(/1\. refused +tool: every bash call — bash is built in/)
    expect(shown).toMatch(/3\. import +bash, this exact command only: echo imported/)
    expect(shown).toMatch(/4\. refused +edits: .* — another directory than this project/)
    expect(shown).toContain("send /permissions import confirm to import these")
    expect(fs.existsSync(rememberedFileOf(project.dir))).toBe(false)
    expect(await said("/permissions import confirm")).toMatch(/^imported \d approval\(s\) into .*left as it is/)
    const approvals = JSON.parse(fs.readFileSync(rememberedFileOf(project.dir), "utf8")).approvals
    expect(approvals).toContainEqual({ _tag: "ExactCommand", command: "echo imported" })
    expect(approvals).not.toContainEqual({ _tag: "Tool", name: "bash" })
    expect(approvals).not.toContainEqual({ _tag: "Project", dir: "/elsewhere" })
    expect(fs.readFileSync(shipped, "utf8")).toBe(text)
    // the confirmation is used once
    expect(await said("/permissions import confirm")).toContain("nothing to confirm")
    // the imported row covers the next call: no permission request
    harness.fake().push({ toolCalls: [{ id: "c3", name: "bash", arguments: { command: "echo imported" } }] }, {
      text: "ran"
    })
    await said("run it")
    expect(agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["c1", "c2"])
    expect(agent.invalid()).toEqual([])
  })
})
