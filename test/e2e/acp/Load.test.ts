import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { type AgentProcess, configYaml, makeProject, readSession, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()
const start = harness.start

const updatesOf = (agent: AgentProcess, sessionId: string) => agent.updates.filter((n) => n.sessionId === sessionId)

describe("mm acp: a session survives the agent", () => {
  it("replays the whole conversation on session/load, runs nothing again, and goes on in the same file", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, system: "first system prompt" }))
    harness.fake().push(
      {
        text: "I will make both.",
        toolCalls: [
          { id: "call_bash", name: "bash", arguments: { command: "touch marker" } },
          { id: "call_write", name: "write_file", arguments: { path: "out/hello.txt", content: "hello\n" } }
        ]
      },
      { text: "Both are there." }
    )

    const first = start({ cwd: project.dir, config: project.config })
    const init = await first.initialize()
    expect(init.agentCapabilities).toMatchObject({ loadSession: true, sessionCapabilities: { list: {}, resume: {} } })
    expect(init.agentInfo).toMatchObject({ name: "mm" })

    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    expect(sessionId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/)
    const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
    expect(fs.existsSync(file)).toBe(true)
    await first.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "available_commands_update"))
    const newResponseAt = first.traffic.findIndex((t) =>
      t.direction === "out" && t.message?.result?.sessionId === sessionId
    )
    const commandsAt = first.traffic.findIndex((t) =>
      t.direction === "out" && t.message?.params?.update?.sessionUpdate === "available_commands_update"
    )
    expect(commandsAt).toBeGreaterThan(newResponseAt)
    const commands = (first.updates[0].update as any).availableCommands
    expect(commands.map((c: any) => c.name)).toEqual(["new", "compact", "init", "changes", "undo", "permissions"])
    expect(commands[1].input).toEqual({ hint: expect.any(String) })

    const answer = await first.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "make a marker and a file" }]
    })
    expect(answer.stopReason).toBe("end_turn")
    expect(fs.existsSync(path.join(project.dir, "marker"))).toBe(true)
    expect(fs.readFileSync(path.join(project.dir, "out/hello.txt"), "utf8")).toBe("hello\n")

    const live = updatesOf(first, sessionId).map((n) => n.update)
    expect(live.some((u) => u.sessionUpdate === "available_commands_update")).toBe(true)
    expect(textOf(updatesOf(first, sessionId), "agent_message_chunk")).toBe("I will make both.Both are there.")
    const started = live.filter((u) => u.sessionUpdate === "tool_call") as Array<any>
    const finished = live.filter((u) => u.sessionUpdate === "tool_call_update") as Array<any>
    expect(started.map((u) => [u.toolCallId, u.status, u.kind])).toEqual([
      ["call_bash", "in_progress", "execute"],
      ["call_write", "in_progress", "edit"]
    ])
    expect(started[1].locations).toEqual([{ path: path.join(project.dir, "out/hello.txt") }])
    expect(finished.map((u) => [u.toolCallId, u.status])).toEqual([
      ["call_bash", "completed"],
      ["call_write", "completed"]
    ])
    expect(finished[1].content[0]).toEqual({
      type: "diff",
      path: path.join(project.dir, "out/hello.txt"),
      newText: "hello\n"
    })
    expect(first.invalid()).toEqual([])
    await first.kill()

    // the stored calls must not run again: their traces are removed before the reload
    fs.rmSync(path.join(project.dir, "marker"))
    fs.rmSync(path.join(project.dir, "out"), { recursive: true })
    fs.writeFileSync(project.config, configYaml({ url: harness.fake().url, system: "second system prompt" }))

    const second = start({ cwd: project.dir, config: project.config })
    await second.initialize()
    await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })

    const replayed = updatesOf(second, sessionId).map((n) => n.update)
    expect(replayed.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "agent_message_chunk",
      "tool_call",
      "tool_call",
      "agent_message_chunk",
      "usage_update",
      "session_info_update",
      "available_commands_update"
    ])
    expect(textOf(updatesOf(second, sessionId), "user_message_chunk")).toBe("make a marker and a file")
    expect(textOf(updatesOf(second, sessionId), "agent_message_chunk")).toBe("I will make both.Both are there.")
    const calls = replayed.filter((u) => u.sessionUpdate === "tool_call") as Array<any>
    expect(calls.map((c) => [c.toolCallId, c.status, c.kind, c.title])).toEqual([
      ["call_bash", "completed", "execute", "touch marker"],
      ["call_write", "completed", "edit", "out/hello.txt"]
    ])
    expect(calls[0].rawInput).toEqual({ command: "touch marker" })
    expect(calls[1].rawInput).toEqual({ path: "out/hello.txt", content: "hello\n" })
    for (const [i, call] of calls.entries()) {
      expect(call.rawOutput).toBe(finished[i].rawOutput)
      expect(call.content).toEqual(finished[i].content)
    }
    expect(calls[1].locations).toEqual(started[1].locations)

    // the response comes after the last replayed notification
    const loadId = second.traffic.find((t) => t.direction === "in" && t.message?.method === "session/load")!.message.id
    const responseAt = second.traffic.findIndex((t) =>
      t.direction === "out" && t.message?.id === loadId && !("method" in t.message)
    )
    const lastUpdateAt = second.traffic.map((t) => t.direction === "out" && t.message?.method === "session/update")
      .lastIndexOf(true)
    expect(responseAt).toBeGreaterThan(lastUpdateAt)

    expect(fs.existsSync(path.join(project.dir, "marker"))).toBe(false)
    expect(fs.existsSync(path.join(project.dir, "out"))).toBe(false)
    expect(harness.fake().completions()).toHaveLength(2)

    // the thread goes on under the current system prompt, in the same file
    harness.fake().push({ text: "Still here." })
    const again = await second.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "and now?" }]
    })
    expect(again.stopReason).toBe("end_turn")
    const request = harness.fake().completions()[2].body
    // the configured prompt, then the environment lines of this turn
    expect(request.messages[0]).toEqual({
      role: "system",
      content: expect.stringMatching(/^second system prompt\n\n# Environment\n/)
    })
    expect(request.messages.map((m: any) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
      "user"
    ])
    const stored = readSession(file)
    expect(stored.turns).toBe(2)
    expect(stored.messages.at(-1)).toMatchObject({ role: "assistant", content: "Still here." })
    expect(fs.readdirSync(path.dirname(file)).filter((f) => f.endsWith(".json") && !f.startsWith("."))).toEqual([
      `${sessionId}.json`
    ])
    expect(second.invalid()).toEqual([])
    expect(second.stderr()).not.toContain("not saved")
  })

  it("session/resume takes the thread back without replaying it", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    harness.fake().push({ text: "first answer" })
    const first = start({ cwd: project.dir, config: project.config })
    await first.initialize()
    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    await first.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "first question" }]
    })
    await first.kill()

    const second = start({ cwd: project.dir, config: project.config })
    await second.initialize()
    await second.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: project.dir })
    // nothing replayed; the context meter and the title as they stand
    expect(updatesOf(second, sessionId).map((n) => n.update.sessionUpdate)).toEqual([
      "usage_update",
      "session_info_update",
      "available_commands_update"
    ])

    harness.fake().push({ text: "second answer" })
    await second.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "second question" }]
    })
    expect(harness.fake().completions()[1].body.messages.map((m: any) => m.content)).toEqual([
      expect.stringMatching(/^You are a test agent\.\n\n# Environment\n/),
      "first question",
      "first answer",
      "second question"
    ])
    expect(second.invalid()).toEqual([])
  })

  it("/new keeps the editor's id: the old conversation and its errors move to a new file", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const agent = start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    harness.fake().push({ text: "an answer" }, {
      kind: "status",
      status: 500,
      body: { error: { message: "the server broke" } }
    })
    await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "old question" }]
    })
    const failed = await agent.agent
      .request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "failing question" }] })
      .catch((error: { message: string }) => error)
    expect(failed).toMatchObject({ message: expect.stringContaining("the server broke") })
    const dir = path.join(project.dir, ".mm", "sessions")
    expect(readSession(path.join(dir, `${sessionId}.json`)).errors).toHaveLength(1)

    const before = agent.updates.length
    const answer = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "/new" }]
    })
    expect(answer.stopReason).toBe("end_turn")
    const files = fs.readdirSync(dir).filter((f) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f))
    expect(files).toHaveLength(2)
    const archivedId = files.map((f) => f.slice(0, -5)).find((id) => id !== sessionId)!
    const message = textOf(agent.updates.slice(before), "agent_message_chunk")
    expect(message).toContain(archivedId)
    expect(message).toContain(path.join(dir, `${archivedId}.json`))

    const archived = readSession(path.join(dir, `${archivedId}.json`))
    expect(archived.messages.map((m: any) => m.content)).toContain("old question")
    expect(archived.errors).toHaveLength(1)
    expect(archived.errors[0]).toMatchObject({ kind: "generation", question: "failing question" })
    const current = readSession(path.join(dir, `${sessionId}.json`))
    expect(current.messages).toEqual([])
    expect(current.errors).toEqual([])
    expect(harness.fake().completions()).toHaveLength(2)
    await agent.kill()

    const reloaded = start({ cwd: project.dir, config: project.config })
    await reloaded.initialize()
    await reloaded.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
    expect(updatesOf(reloaded, sessionId).map((n) => n.update.sessionUpdate)).toEqual([
      "usage_update",
      "available_commands_update"
    ])
    expect(reloaded.invalid()).toEqual([])
  })

  it("/compact over ACP: a failure is one message and one record; a summary is replayed as such", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, keepTurns: 1 }))
    const agent = start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    harness.fake().push({ text: "one" }, { text: "two" })
    await ask("first question")
    await ask("second question")

    harness.fake().push({ kind: "status", status: 500, body: { error: { message: "no summaries today" } } })
    let before = agent.updates.length
    expect((await ask("/compact")).stopReason).toBe("end_turn")
    const failure = textOf(agent.updates.slice(before), "agent_message_chunk")
    expect(failure).toContain("no summaries today")
    expect(readSession(file).errors).toEqual([expect.objectContaining({ kind: "compaction", line: failure })])

    harness.fake().push({ text: "The user asked a first question; the answer was one." })
    before = agent.updates.length
    await ask("/compact keep it short")
    expect(textOf(agent.updates.slice(before), "agent_message_chunk")).toMatch(/^Compacted: 2 older message\(s\)/)
    expect(harness.fake().completions().at(-1)!.body.messages[1].content).toContain("keep it short")
    await agent.kill()

    const reloaded = start({ cwd: project.dir, config: project.config })
    await reloaded.initialize()
    await reloaded.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
    const replayed = updatesOf(reloaded, sessionId).map((n) => n.update) as Array<any>
    // the turns the compaction replaced come first, from the archive, then where it compacted
    expect(replayed.map((u) => u.sessionUpdate)).toEqual([
      "user_message_chunk",
      "agent_message_chunk",
      "agent_message_chunk",
      "agent_message_chunk",
      "user_message_chunk",
      "agent_message_chunk",
      "usage_update",
      "session_info_update",
      "available_commands_update"
    ])
    expect(replayed[2].content.text).toContain("compacted here")
    expect(replayed[3].content.text).toMatch(/^\*\*Summary of earlier conversation\*\*/)
    expect(replayed[3].content.text).toContain("The user asked a first question")
    expect(replayed[4].content.text).toBe("second question")
    expect(JSON.stringify(replayed)).not.toContain("no summaries today")
    expect(reloaded.invalid()).toEqual([])
  })
})

describe("mm acp: /new on a compacted thread", () => {
  it("the moved conversation keeps its archives, and they name its new id, not the thread's", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, keepTurns: 1 }))
    const agent = start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const dir = path.join(project.dir, ".mm", "sessions")
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    harness.fake().push({ text: "one" }, { text: "two" }, { text: "The user asked a first question." })
    await ask("first question")
    await ask("second question")
    await ask("/compact")
    const [archiveId] = readSession(path.join(dir, `${sessionId}.json`)).archives
    expect(readSession(path.join(dir, `${archiveId}.json`)).archiveOf).toBe(sessionId)

    const before = agent.updates.length
    expect((await ask("/new")).stopReason).toBe("end_turn")
    const movedId = textOf(agent.updates.slice(before), "agent_message_chunk").match(/kept as session (\S+):/)![1]
    const moved = readSession(path.join(dir, `${movedId}.json`))
    expect(moved.messages.map((m: any) => m.content)).toContain("second question")
    expect(moved.archives).toEqual([archiveId])
    expect(readSession(path.join(dir, `${archiveId}.json`)).archiveOf).toBe(movedId)
    const thread = readSession(path.join(dir, `${sessionId}.json`))
    expect(thread.messages).toEqual([])
    expect(thread.archives).toBeUndefined()
    await agent.kill()

    // the moved conversation, loaded in an editor, still tells the turns its archive holds
    const reloaded = start({ cwd: project.dir, config: project.config })
    await reloaded.initialize()
    await reloaded.agent.request(acp.methods.agent.session.load, {
      sessionId: movedId,
      cwd: project.dir,
      mcpServers: []
    })
    expect(textOf(updatesOf(reloaded, movedId), "user_message_chunk")).toBe("first questionsecond question")
    expect(reloaded.invalid()).toEqual([])
  })
})
