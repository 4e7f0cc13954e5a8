import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { type AgentProcess, configYaml, makeProject, readSession, textOf, useAgents } from "../../support/acp-agent"

/** A 1×1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

const harness = useAgents({ models: ["fake-model", "m2"] })

const updatesOf = (agent: AgentProcess, sessionId: string) =>
  agent.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update) as Array<any>

/** Each tool call of a live thread as it ended: its start merged with its updates. */
const liveCalls = (updates: ReadonlyArray<any>): Map<string, any> => {
  const calls = new Map<string, any>()
  for (const u of updates) {
    if (u.sessionUpdate === "tool_call") calls.set(u.toolCallId, { ...u })
    if (u.sessionUpdate === "tool_call_update") {
      const { sessionUpdate: _, ...rest } = u
      calls.set(u.toolCallId, { ...calls.get(u.toolCallId), ...rest })
    }
  }
  return calls
}

const comparable = (call: any) => ({
  id: call.toolCallId,
  title: call.title,
  kind: call.kind,
  status: call.status,
  locations: call.locations,
  content: call.content
})

/** A live session through every kind of call and block, reloaded in a new `mm acp`. */
const liveSession = async (compact: boolean) => {
  const project = makeProject(
    configYaml({ url: harness.fake().url, permissions: "ask", keepTurns: 1 })
  )
  const dir = project.dir
  fs.writeFileSync(path.join(dir, "a.txt"), "one\ntwo\nthree\nfour\n")
  fs.writeFileSync(path.join(dir, "b.txt"), "old b\n")
  const agent = harness.start({ cwd: dir, config: project.config })
  await agent.initialize()
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] })
  await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "allow" })
  await agent.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "m2" })
  const ask = (prompt: Array<acp.ContentBlock>) =>
    agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt })

  harness.fake().push(
    { toolCalls: [{ id: "call_edit", name: "edit_file", arguments: { path: "a.txt", old: "two", new: "TWO" } }] },
    { text: "Edited." },
    {
      toolCalls: [
        { id: "call_over", name: "write_file", arguments: { path: "b.txt", content: "new b\n" } },
        { id: "call_new", name: "write_file", arguments: { path: "sub/c.txt", content: "c\n" } }
      ]
    },
    { text: "Written." },
    { text: "Seen." }
  )
  expect((await ask([{ type: "text", text: "edit a" }])).stopReason).toBe("end_turn")
  expect((await ask([{ type: "text", text: "write b and c" }])).stopReason).toBe("end_turn")
  const mention: Array<acp.ContentBlock> = [
    { type: "text", text: "look at" },
    { type: "resource_link", uri: `${pathToFileURL(path.join(dir, "a.txt")).href}#L2:3`, name: "a.txt" },
    { type: "resource", resource: { uri: pathToFileURL(path.join(dir, "notes.md")).href, text: "embedded notes" } },
    { type: "image", data: PNG, mimeType: "image/png" }
  ]
  expect((await ask(mention)).stopReason).toBe("end_turn")
  if (compact) {
    harness.fake().push({ text: "The user edited a, wrote b and c, and showed a selection." })
    await ask([{ type: "text", text: "/compact" }])
  }
  harness.fake().push({ text: "Fourth." }, { text: "Fifth." })
  await ask([{ type: "text", text: "fourth question" }])
  await ask([{ type: "text", text: "fifth question" }])
  const live = updatesOf(agent, sessionId)
  expect(agent.invalid()).toEqual([])
  await agent.kill()

  const reloaded = harness.start({ cwd: dir, config: project.config })
  await reloaded.initialize()
  const response = await reloaded.agent.request(acp.methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] })
  return { dir, sessionId, live, replayed: updatesOf(reloaded, sessionId), response, reloaded, mention }
}

describe("mm acp: a reload shows what the thread showed", () => {
  it("replays every tool call, block, mode, model and the context meter as they were", async () => {
    const { dir, live, mention, reloaded, replayed, response } = await liveSession(false)

    // the selection reached the model as path:2-3 and its lines
    const third = harness.fake().completions().find((r) =>
      r.body.messages.some((m: any) => m.role === "user" && String(m.content).startsWith("look at"))
    )!
    const asked = third.body.messages.findLast((m: any) => m.role === "user").content as string
    expect(asked).toContain("@a.txt:2-3")
    expect(asked).toContain("<context ref=\"a.txt:2-3\">\nTWO\nthree\n</context>")
    expect(third.body.model).toBe("m2")
    // the image was not sent (this model cannot see), and the thread said so
    expect(textOf(live.map((update) => ({ sessionId: "", update })), "agent_message_chunk")).toMatch(
      /: not sent — fake-model cannot see images/
    )

    const liveByCall = liveCalls(live)
    const replayedCalls = replayed.filter((u) => u.sessionUpdate === "tool_call")
    expect([...liveByCall.keys()]).toEqual(["call_edit", "call_over", "call_new"])
    expect(replayedCalls.map((c) => c.toolCallId)).toEqual([...liveByCall.keys()])
    for (const call of replayedCalls) expect(comparable(call)).toEqual(comparable(liveByCall.get(call.toolCallId)))
    // the edit shows the whole file, the overwrite its old text
    const edit = replayedCalls.find((c) => c.toolCallId === "call_edit")
    expect(edit.content[0]).toEqual({
      type: "diff",
      path: path.join(dir, "a.txt"),
      oldText: "one\ntwo\nthree\nfour\n",
      newText: "one\nTWO\nthree\nfour\n"
    })
    expect(replayedCalls.find((c) => c.toolCallId === "call_over").content[0]).toMatchObject({ oldText: "old b\n" })

    // the user's blocks as sent
    const users = replayed.filter((u) => u.sessionUpdate === "user_message_chunk").map((u) => u.content)
    expect(users.map((b) => [b.type, b.uri ?? b.resource?.uri])).toEqual([
      ["text", undefined],
      ["text", undefined],
      ...mention.map((b: any) => [b.type, b.uri ?? b.resource?.uri]),
      ["text", undefined],
      ["text", undefined]
    ])
    expect(users[4].resource.text).toBe("embedded notes")
    expect(users[5]).toEqual({ type: "image", data: PNG, mimeType: "image/png" })

    // mode and model restored; the meter and title told
    expect(response.modes?.currentModeId).toBe("allow")
    expect(response.configOptions?.find((o) => o.id === "model")?.currentValue).toBe("m2")
    const usage = replayed.find((u) => u.sessionUpdate === "usage_update")
    expect(usage.used).toBeGreaterThan(0)
    expect(usage.size).toBeGreaterThan(0)
    expect(replayed.find((u) => u.sessionUpdate === "session_info_update")).toMatchObject({ title: "edit a" })
    expect(reloaded.invalid()).toEqual([])
  })

  it("replays the turns a /compact replaced, then says where it compacted", async () => {
    const { dir, live, replayed, sessionId } = await liveSession(true)
    const session = readSession(path.join(dir, ".mm", "sessions", `${sessionId}.json`))
    expect(session.archives).toHaveLength(1)

    const liveByCall = liveCalls(live)
    const replayedCalls = replayed.filter((u) => u.sessionUpdate === "tool_call")
    expect(replayedCalls.map((c) => c.toolCallId)).toEqual(["call_edit", "call_over", "call_new"])
    for (const call of replayedCalls) expect(comparable(call)).toEqual(comparable(liveByCall.get(call.toolCallId)))
    const said = textOf(replayed.map((update) => ({ sessionId, update })), "agent_message_chunk")
    expect(said.indexOf("Edited.")).toBeLessThan(said.indexOf("compacted here"))
    expect(said.indexOf("compacted here")).toBeLessThan(said.indexOf("Summary of earlier conversation"))
    expect(said.indexOf("Summary of earlier conversation")).toBeLessThan(said.indexOf("Fifth."))
  })
})
