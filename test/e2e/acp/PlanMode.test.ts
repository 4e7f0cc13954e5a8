// Plan mode over ACP: the editor enters and leaves it as any mode (session/set_mode). In plan
// mode a write is refused (a failed call, nothing asked, the model told why and told it plans);
// set back to edits, the next prompt's write goes ahead, and the session's plan is kept.
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, useAgents } from "../../support/acp-agent"
import { lastToolResults } from "../../support/FakeModelServer"

const harness = useAgents()

describe("mm acp: plan mode", () => {
  it("set_mode plan refuses a write; set_mode edits lets the next one through; the plan is kept", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    const first = harness.start({ cwd: project.dir, config: project.config })
    await first.initialize()
    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    harness.fake().push({ text: "hello" })
    await first.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "hi" }] })
    await first.kill()
    // the plan the session holds (written by `todo` in a real run)
    const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
    const plan = { turn: 1, entries: [{ content: "write a.txt", status: "pending" }] }
    fs.writeFileSync(file, JSON.stringify({ ...readSession(file), plan }))

    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow-once" } })
    })
    await agent.initialize()
    await agent.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    const updates = () => agent.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update as any)

    expect(await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "plan" })).toEqual({})
    expect(updates().filter((u) => u.sessionUpdate === "current_mode_update").at(-1).currentModeId).toBe("plan")
    harness.fake().push(
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
      { text: "the plan: write a.txt" }
    )
    const planning = harness.fake().completions().length
    await ask("plan it")
    expect(lastToolResults(harness.fake()).w1).toMatch(/^refused in plan mode: write_file changes files/)
    expect(updates().find((u) => u.toolCallId === "w1" && u.sessionUpdate === "tool_call_update").status).toBe(
      "failed"
    )
    expect(harness.fake().completions()[planning].body.messages[0].content).toContain("# Plan mode")
    expect(fs.existsSync(path.join(project.dir, "a.txt"))).toBe(false)

    // leaving plan mode is the editor's mode change; the next prompt runs in the new mode
    await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "edits" })
    harness.fake().push(
      { toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
      { text: "done" }
    )
    const doing = harness.fake().completions().length
    await ask("go on with the plan")
    expect(fs.readFileSync(path.join(project.dir, "a.txt"), "utf8")).toBe("A")
    expect(harness.fake().completions()[doing].body.messages[0].content).not.toContain("# Plan mode")
    expect(agent.permissionRequests).toEqual([])

    const saved = readSession(file)
    expect(saved.plan).toEqual(plan)
    expect(saved.settings).toEqual({ mode: "edits" })
    expect(agent.invalid()).toEqual([])
  })

  it("an unknown mode is refused with the list of modes, plan among them", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const bad = await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" }).catch((
      e
    ) => e)
    expect(bad.code).toBe(-32602)
    expect(bad.message).toContain("unknown mode \"yolo\"; the modes are ask, edits, auto, allow, plan")
  })
})
