// A sub-agent under `mm acp`: its steps shown under the task call as they come, its question
// asked under its name, its conversation saved beside the parent's, and the parent's reload
// replaying the task call as it ended without a request to the model.
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, replayOf, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

/** The text of a tool call update's content blocks, joined. */
const contentText = (update: any): string =>
  (update.content ?? []).map((block: any) => (block.content?.type === "text" ? block.content.text : "")).join("")

describe("mm acp: sub-agents", () => {
  it("shows a sub-agent's steps under its task call, asks under its name, saves it, and replays the parent", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    harness.fake().push(
      {
        toolCalls: [{
          id: "call_task",
          name: "task",
          arguments: { description: "make a marker", prompt: "Run: touch made-by-sub. Then say done." }
        }]
      },
      { toolCalls: [{ id: "call_sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }] },
      { text: "made-by-sub is there" },
      { text: "The sub-agent made it." }
    )
    const first = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow-once" } })
    })
    await first.initialize()
    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const answer = await first.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "use a sub-agent to make a marker" }]
    })
    expect(answer.stopReason).toBe("end_turn")
    expect(fs.existsSync(path.join(project.dir, "made-by-sub"))).toBe(true)

    // the sub-agent's question names it and its call
    expect(first.permissionRequests).toHaveLength(1)
    expect(first.permissionRequests[0].toolCall).toMatchObject({
      toolCallId: "call_task/call_sub_bash",
      title: "general: bash touch made-by-sub"
    })

    // its steps came under the task call while it ran; its answer closes the call
    const updates = first.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update as any)
    // the question's card is closed once answered: the sub-agent's call shows no further
    expect(updates.filter((u) => u.toolCallId === "call_task/call_sub_bash").map((u) => u.status)).toEqual([
      "completed"
    ])
    const ofTask = updates.filter((u) => u.toolCallId === "call_task")
    expect(ofTask[0]).toMatchObject({ sessionUpdate: "tool_call", title: "make a marker" })
    expect(
      ofTask.some((u) => u.sessionUpdate === "tool_call_update" && contentText(u).includes("bash touch made-by-sub"))
    )
      .toBe(true)
    const done = ofTask.at(-1)
    expect(done).toMatchObject({ sessionUpdate: "tool_call_update", status: "completed" })
    expect(contentText(done)).toContain("made-by-sub is there")
    expect(first.invalid()).toEqual([])

    // its conversation is a session of its own, linked to the call that ran it
    const childId = /session ([^\]]+)\]/.exec(contentText(done))?.[1] ?? ""
    const child = readSession(path.join(project.dir, ".mm", "sessions", `${childId}.json`))
    expect(child.parent).toEqual({ id: sessionId, turn: 1, callId: "call_task" })
    expect(child.messages.map((m: any) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant"])

    // a reload of the parent replays the task call as it ended, asking the model nothing
    await first.kill()
    const requests = harness.fake().completions().length
    const replay = await replayOf(harness.start({ cwd: project.dir, config: project.config }), sessionId, project.dir)
    const replayed = replay.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_task")
    expect(replayed).toMatchObject({ status: "completed", title: "make a marker" })
    expect(contentText(replayed)).toContain("made-by-sub is there")
    expect(harness.fake().completions().length).toBe(requests)
  })

  it("/new moves the sub-agent's session with the conversation that ran it", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    harness.fake().push(
      { toolCalls: [{ id: "call_task", name: "task", arguments: { description: "look", prompt: "Say hi." } }] },
      { text: "hi from the sub-agent" },
      { text: "The sub-agent said hi." }
    )
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    expect((await ask("ask a sub-agent")).stopReason).toBe("end_turn")
    const dir = path.join(project.dir, ".mm", "sessions")
    const childId = fs.readdirSync(dir).map((f) => f.slice(0, -5)).find((id) =>
      /^\d{8}-\d{6}-[0-9a-f]{8}$/.test(id) && id !== sessionId
    )!
    expect(readSession(path.join(dir, `${childId}.json`)).parent).toEqual({
      id: sessionId,
      turn: 1,
      callId: "call_task"
    })

    const before = agent.updates.length
    expect((await ask("/new")).stopReason).toBe("end_turn")
    const told = textOf(agent.updates.slice(before), "agent_message_chunk")
    const movedId = told.match(/kept as session (\S+):/)![1]
    // nothing failed to follow: the answer is the one line
    expect(told).not.toContain("\n")
    expect(readSession(path.join(dir, `${movedId}.json`)).messages.map((m: any) => m.content)).toContain(
      "ask a sub-agent"
    )
    expect(readSession(path.join(dir, `${childId}.json`)).parent).toEqual({
      id: movedId,
      turn: 1,
      callId: "call_task"
    })
    expect(agent.invalid()).toEqual([])
  })
})
