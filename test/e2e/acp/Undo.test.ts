import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, type startAgent, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

const open = async (onPermission?: Parameters<typeof startAgent>[0]["onPermission"]) => {
  const project = makeProject(configYaml({ url: harness.fake().url }))
  fs.writeFileSync(path.join(project.dir, "a.txt"), "one\ntwo\n")
  const agent = harness.start({ cwd: project.dir, config: project.config, onPermission })
  await agent.initialize()
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
  const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
  const ask = (text: string) =>
    agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
  return { project, agent, sessionId, file, ask }
}

const editingTurn = () =>
  harness.fake().push(
    {
      toolCalls: [
        { id: "call_edit", name: "edit_file", arguments: { path: "a.txt", old: "two", new: "TWO" } },
        { id: "call_new", name: "write_file", arguments: { path: "new.txt", content: "fresh\n" } }
      ]
    },
    { text: "done" }
  )

describe("mm acp: /changes and /undo", () => {
  it("announces /changes and /undo", async () => {
    const { agent } = await open()
    await agent.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "available_commands_update"))
    const announced = agent.updates.map((n) => n.update).find((u) =>
      u.sessionUpdate === "available_commands_update"
    ) as any
    expect(announced.availableCommands.map((c: acp.AvailableCommand) => c.name)).toEqual([
      "new",
      "compact",
      "init",
      "changes",
      "undo",
      "permissions"
    ])
  })

  it("/undo shows the reverse diffs, asks through session/request_permission, then restores the files", async () => {
    const { project, agent, sessionId, file, ask } = await open((request) => ({
      outcome: { outcome: "selected", optionId: request.options[0].optionId }
    }))
    editingTurn()
    await ask("change things")
    expect(fs.readFileSync(path.join(project.dir, "a.txt"), "utf8")).toBe("one\nTWO\n")

    await ask("/changes")
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("a.txt  +1 -1\n  new.txt  +1 -0  (created)")

    const before = agent.updates.length
    expect((await ask("/undo")).stopReason).toBe("end_turn")
    expect(agent.permissionRequests).toHaveLength(1)
    const request = agent.permissionRequests[0]
    expect(request.sessionId).toBe(sessionId)
    expect(request.toolCall.title).toBe("Undo turn 1")
    expect(request.toolCall.content).toEqual([
      { type: "diff", path: path.join(project.dir, "a.txt"), oldText: "one\nTWO\n", newText: "one\ntwo\n" },
      { type: "diff", path: path.join(project.dir, "new.txt"), oldText: "fresh\n", newText: "" },
      { type: "content", content: { type: "text", text: "new.txt: deleted" } }
    ])
    expect(request.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"])
    expect(fs.readFileSync(path.join(project.dir, "a.txt"), "utf8")).toBe("one\ntwo\n")
    expect(fs.existsSync(path.join(project.dir, "new.txt"))).toBe(false)

    const updates = agent.updates.slice(before).map((n) => n.update)
    expect(updates[0]).toMatchObject({
      sessionUpdate: "tool_call",
      title: "Undo turn 1",
      kind: "edit",
      status: "pending"
    })
    expect(updates.filter((u) => u.sessionUpdate === "tool_call_update").map((u: any) => u.status)).toEqual([
      "in_progress",
      "completed"
    ])
    expect(textOf(agent.updates.slice(before), "agent_message_chunk")).toContain(
      "↩️ undid turn 1: restored a.txt; deleted new.txt"
    )

    const stored = readSession(file)
    expect(stored.changes.filter((c: any) => c.kind === "undo").map((c: any) => c.path)).toEqual(["a.txt", "new.txt"])
    expect(stored.messages.at(-1)).toEqual({
      role: "user",
      content: "[mm] the user reverted the changes of turn 1: files a.txt, new.txt (new.txt deleted)",
      note: true
    })
    expect(agent.invalid()).toEqual([])
  })

  it("a failed question's changes are its own group, named by the turn it came after, in /changes and /undo", async () => {
    const { project, agent, file, ask } = await open((request) => ({
      outcome: { outcome: "selected", optionId: request.options[0].optionId }
    }))
    editingTurn()
    await ask("change things")
    harness.fake().push(
      { toolCalls: [{ id: "call_x", name: "write_file", arguments: { path: "x.txt", content: "x\n" } }] },
      { kind: "status", status: 500, body: { error: { message: "kaput" } } }
    )
    await ask("this one fails").catch(() => undefined)
    expect(fs.readFileSync(path.join(project.dir, "x.txt"), "utf8")).toBe("x\n")

    let before = agent.updates.length
    await ask("/changes")
    expect(textOf(agent.updates.slice(before), "agent_message_chunk")).toContain(
      "turn 1  \"change things\"\n  a.txt  +1 -1\n  new.txt  +1 -0  (created)\n" +
        "failed question after turn 1  \"this one fails\"\n  x.txt  +1 -0  (created)"
    )
    before = agent.updates.length
    await ask("/undo")
    expect(agent.permissionRequests.map((r) => r.toolCall.title)).toEqual(["Undo the failed question after turn 1"])
    expect(textOf(agent.updates.slice(before), "agent_message_chunk")).toContain(
      "↩️ undid the failed question after turn 1: deleted x.txt"
    )
    expect(fs.existsSync(path.join(project.dir, "x.txt"))).toBe(false)
    expect(fs.readFileSync(path.join(project.dir, "a.txt"), "utf8")).toBe("one\nTWO\n")
    const stored = readSession(file)
    expect(stored.changes.map((c: any) => [c.path, c.turn, c.kind ?? (c.failed === undefined ? "turn" : "failed")]))
      .toEqual([["a.txt", 1, "turn"], ["new.txt", 1, "turn"], ["x.txt", 1, "failed"], ["x.txt", 1, "undo"]])
    expect(agent.invalid()).toEqual([])
  })

  it("a refused /undo leaves every file as it is", async () => {
    const { project, agent, ask } = await open(() => ({ outcome: { outcome: "selected", optionId: "keep" } }))
    editingTurn()
    await ask("change things")
    await ask("/undo")
    expect(agent.permissionRequests).toHaveLength(1)
    expect(fs.readFileSync(path.join(project.dir, "a.txt"), "utf8")).toBe("one\nTWO\n")
    expect(fs.existsSync(path.join(project.dir, "new.txt"))).toBe(true)
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("Nothing undone.")
    expect(agent.invalid()).toEqual([])
  })

  it("a file changed since is asked for separately, with its diff", async () => {
    const answers = ["undo", "keep"]
    const { project, agent, ask } = await open(() => ({
      outcome: { outcome: "selected", optionId: answers.shift() ?? "keep" }
    }))
    editingTurn()
    await ask("change things")
    fs.writeFileSync(path.join(project.dir, "a.txt"), "by hand\n")
    await ask("/undo")
    expect(agent.permissionRequests).toHaveLength(2)
    expect(agent.permissionRequests[1].toolCall.content).toContainEqual({
      type: "diff",
      path: path.join(project.dir, "a.txt"),
      oldText: "by hand\n",
      newText: "one\ntwo\n"
    })
    expect(fs.readFileSync(path.join(project.dir, "a.txt"), "utf8")).toBe("by hand\n")
    expect(fs.existsSync(path.join(project.dir, "new.txt"))).toBe(false)
    expect(agent.invalid()).toEqual([])
  })

  it("/changes N shows the turn's diffs as diff content; session/load replays only what the messages show", async () => {
    const { project, agent, sessionId, ask } = await open((request) => ({
      outcome: { outcome: "selected", optionId: request.options[0].optionId }
    }))
    editingTurn()
    await ask("change things")
    const before = agent.updates.length
    await ask("/changes 1")
    const shown = agent.updates.slice(before).map((n) => n.update).find((u) => u.sessionUpdate === "tool_call") as any
    expect(shown).toMatchObject({ title: "Changes of turn 1", status: "completed" })
    expect(shown.content).toEqual([
      { type: "diff", path: path.join(project.dir, "a.txt"), oldText: "one\ntwo\n", newText: "one\nTWO\n" },
      { type: "diff", path: path.join(project.dir, "new.txt"), oldText: null, newText: "fresh\n" }
    ])
    await ask("/undo")

    const other = harness.start({ cwd: project.dir, config: path.join(project.dir, "agent.yaml") })
    await other.initialize()
    await other.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
    const replayed = other.updates.map((n) => n.update)
    expect(replayed.filter((u) => u.sessionUpdate === "tool_call").map((u: any) => u.toolCallId)).toEqual([
      "call_edit",
      "call_new"
    ])
    expect(textOf(other.updates, "agent_message_chunk")).toContain("[mm] the user reverted the changes of turn 1")
    expect(textOf(other.updates, "user_message_chunk")).toBe("change things")
    expect(other.invalid()).toEqual([])
  })
  it("with an editor that writes files, /undo restores text files through fs/write_text_file; a deletion is mm's", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const notes = path.join(project.dir, "a.txt")
    fs.writeFileSync(notes, "one\ntwo\n")
    const writes: Array<acp.WriteTextFileRequest> = []
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      // as an editor does: the buffer is written, and saved
      editor: {
        writeTextFile: (params) => {
          writes.push(params)
          fs.writeFileSync(params.path, params.content)
          return {}
        }
      },
      onPermission: (request) => ({ outcome: { outcome: "selected", optionId: request.options[0].optionId } })
    })
    await agent.initialize({ fs: { readTextFile: false, writeTextFile: true }, terminal: false })
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    editingTurn()
    await ask("change things")
    expect(writes.map((w) => [w.path, w.content])).toEqual([
      [notes, "one\nTWO\n"],
      [path.join(project.dir, "new.txt"), "fresh\n"]
    ])

    expect((await ask("/undo")).stopReason).toBe("end_turn")
    expect(writes.slice(2)).toEqual([{ sessionId, path: notes, content: "one\ntwo\n" }])
    expect(fs.readFileSync(notes, "utf8")).toBe("one\ntwo\n")
    expect(fs.existsSync(path.join(project.dir, "new.txt"))).toBe(false)
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("↩️ undid turn 1: restored a.txt; deleted new.txt")
    expect(agent.invalid()).toEqual([])
  })
  it("with an editor that reads files, a buffer changed since mm wrote it (unsaved) is asked about before it is restored", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const notes = path.join(project.dir, "a.txt")
    fs.writeFileSync(notes, "one\ntwo\n")
    const buffers = new Map<string, string>()
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      editor: {
        readTextFile: ({ path: p }) => {
          if (buffers.has(p)) return { content: buffers.get(p)! }
          if (!fs.existsSync(p)) throw new Error(`no file ${p}`)
          return { content: fs.readFileSync(p, "utf8") }
        },
        writeTextFile: (params) => {
          buffers.set(params.path, params.content)
          fs.writeFileSync(params.path, params.content)
          return {}
        }
      },
      // the undo itself yes, the file changed since: keep it
      onPermission: (request) => ({
        outcome: {
          outcome: "selected",
          optionId: request.toolCall.title === "Undo turn 1"
            ? request.options[0].optionId
            : request.options[1].optionId
        }
      })
    })
    await agent.initialize({ fs: { readTextFile: true, writeTextFile: true }, terminal: false })
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const ask = (text: string) =>
      agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    editingTurn()
    await ask("change things")
    // the user types in the editor after mm's edit, without saving
    buffers.set(notes, "one\nTWO\nmine, unsaved\n")

    expect((await ask("/undo")).stopReason).toBe("end_turn")
    expect(agent.permissionRequests).toHaveLength(2)
    expect(agent.permissionRequests[1].toolCall.content).toContainEqual({
      type: "diff",
      path: notes,
      oldText: "one\nTWO\nmine, unsaved\n",
      newText: "one\ntwo\n"
    })
    expect(buffers.get(notes)).toBe("one\nTWO\nmine, unsaved\n")
    expect(fs.existsSync(path.join(project.dir, "new.txt"))).toBe(false)
    expect(textOf(agent.updates, "agent_message_chunk")).toContain(
      "↩️ undid turn 1: deleted new.txt; left as they are: a.txt (changed since mm wrote it)"
    )
    expect(agent.invalid()).toEqual([])
  })
})
