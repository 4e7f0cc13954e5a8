import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import {
  configYaml,
  errorOf,
  makeProject,
  readSession,
  type startAgent,
  textOf,
  useAgents
} from "../../support/acp-agent"
import { until } from "../../support/until"

const harness = useAgents()

const open = async (
  options: { readonly yaml?: string; readonly onPermission?: Parameters<typeof startAgent>[0]["onPermission"] } = {}
) => {
  const project = makeProject(options.yaml ?? configYaml({ url: harness.fake().url }))
  const agent = harness.start({ cwd: project.dir, config: project.config, onPermission: options.onPermission })
  await agent.initialize()
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
  const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
  const ask = (text: string) =>
    agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
  return { project, agent, sessionId, file, ask }
}

describe("mm acp: prompts", () => {
  it("a cancel stops the answer at once: cancelled, what was shown is kept, nothing in errors", async () => {
    const { agent, sessionId, file, ask } = await open()
    harness.fake().push({ text: Array.from({ length: 100 }, (_, i) => `w${i} `), chunkDelayMs: 50 })
    const answer = ask("count slowly")
    await agent.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "agent_message_chunk"))
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId })
    expect((await answer).stopReason).toBe("cancelled")
    // the request was dropped, not read to its end (100 words, 5 s)
    expect(await harness.fake().waitForAbort()).toBe(true)
    const stored = readSession(file)
    expect(stored.errors).toEqual([])
    expect(stored.messages[1]).toEqual({ role: "user", content: "count slowly" })
    expect(stored.messages[2].content).toMatch(/^w0 /)
    expect(stored.messages[2].content).not.toContain("w99")
    expect(agent.invalid()).toEqual([])
  })

  it("1,000 cancels sent while idle stop nothing later: the next prompt ends its turn; a live cancel still stops one", async () => {
    const { agent, sessionId, ask } = await open()
    harness.fake().push({ text: "after the storm" })
    const cancel = JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId } })
    agent.writeRaw(Array.from({ length: 1000 }, () => cancel).join("\n"))
    const answer = await ask("still there?")
    expect(answer.stopReason).toBe("end_turn")
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("after the storm")

    harness.fake().push({ text: Array.from({ length: 100 }, (_, i) => `w${i} `), chunkDelayMs: 50 })
    const live = ask("count slowly")
    await agent.waitFor((updates) => textOf(updates, "agent_message_chunk").includes("w0 "))
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId })
    expect((await live).stopReason).toBe("cancelled")
    expect(agent.invalid()).toEqual([])
  })

  it("a cancel kills a running tool and closes its call as failed", async () => {
    const { project, agent, sessionId, file, ask } = await open()
    harness.fake().push({
      toolCalls: [{ id: "call_sleep", name: "bash", arguments: { command: "touch started; sleep 30; touch late" } }]
    })
    const answer = ask("wait a while")
    await until(() => fs.existsSync(path.join(project.dir, "started")), "the command to run")
    const cancelledAt = Date.now()
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId })
    expect((await answer).stopReason).toBe("cancelled")
    // a kill, not the 30 s sleep running out
    expect(Date.now() - cancelledAt).toBeLessThan(15_000)
    const closing = agent.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call_update")
    expect(closing).toEqual([expect.objectContaining({ toolCallId: "call_sleep", status: "failed" })])
    const stored = readSession(file)
    expect(stored.errors).toEqual([])
    expect(stored.messages.at(-1)).toMatchObject({ role: "tool", tool_call_id: "call_sleep", failed: true })
    expect(fs.existsSync(path.join(project.dir, "late"))).toBe(false)

    // the session is free again
    harness.fake().push({ text: "ok" })
    expect((await ask("again")).stopReason).toBe("end_turn")
    expect(agent.invalid()).toEqual([])
  })

  it("a failed generation is one agent message, one generation record and a JSON-RPC error", async () => {
    const { agent, sessionId, file, ask } = await open()
    harness.fake().push({ kind: "status", status: 500, body: { error: { message: "the GPU caught fire" } } })
    expect((await errorOf(ask("hello?"))).message).toContain("the GPU caught fire")
    const said = textOf(agent.updates.filter((n) => n.sessionId === sessionId), "agent_message_chunk").trim()
    expect(said).toContain("the GPU caught fire")
    expect(said.split("\n")).toHaveLength(1)
    const stored = readSession(file)
    expect(stored.errors).toHaveLength(1)
    expect(stored.errors[0]).toMatchObject({ kind: "generation", question: "hello?", line: said })
    expect(stored.messages.filter((m: any) => m.role === "user")).toEqual([])
    expect(agent.invalid()).toEqual([])
  })

  it("a second prompt while one runs is a JSON-RPC error, and the first goes on", async () => {
    const { agent, sessionId, ask } = await open()
    harness.fake().push({ text: ["a", "b", "c", "d"], chunkDelayMs: 100 })
    const first = ask("slow one")
    await agent.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "agent_message_chunk"))
    const error = await errorOf(ask("impatient"))
    expect(error.code).toBe(-32600)
    expect(error.message).toContain("already running")
    expect((await first).stopReason).toBe("end_turn")
    expect(textOf(agent.updates.filter((n) => n.sessionId === sessionId), "agent_message_chunk")).toBe("abcd")
    expect(agent.invalid()).toEqual([])
  })

  it("commands are answered in the thread and never reach the model", async () => {
    const { agent, sessionId, ask } = await open()
    const said = async (text: string) => {
      const before = agent.updates.length
      expect((await ask(text)).stopReason).toBe("end_turn")
      return textOf(agent.updates.slice(before).filter((n) => n.sessionId === sessionId), "agent_message_chunk")
    }
    expect(await said("/compact")).toContain("Nothing to compact")
    expect(await said("/sessions")).toContain("terminal command")
    expect(await said("/frobnicate now")).toContain("Unknown command /frobnicate")
    expect(harness.fake().completions()).toHaveLength(0)
    expect(agent.invalid()).toEqual([])
  })

  it("works on when the sessions directory cannot be written: [acp] not saved on stderr", async () => {
    const project = makeProject("")
    fs.writeFileSync(path.join(project.dir, "blocker"), "a file, not a directory")
    fs.writeFileSync(project.config, configYaml({ url: harness.fake().url, sessionsDir: "blocker/sessions" }))
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    expect(sessionId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/)
    expect(agent.stderr()).toMatch(/^\[acp\] not saved: .+/m)
    harness.fake().push({ text: "answered anyway" })
    const answer = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hi" }]
    })
    expect(answer.stopReason).toBe("end_turn")
    expect(textOf(agent.updates, "agent_message_chunk")).toContain("answered anyway")
    for (const line of agent.stderr().trim().split("\n")) expect(line).toMatch(/^\[acp\] /)
    expect(agent.invalid()).toEqual([])
  })
})

describe("mm acp: permissions", () => {
  it("asks before a tool runs: allow once runs it, reject tells the model it was denied", async () => {
    const answers: Array<string> = ["allow-once", "reject"]
    const { project, agent, ask } = await open({
      yaml: configYaml({ url: harness.fake().url, permissions: "ask" }),
      onPermission: (request) => ({
        outcome: { outcome: "selected", optionId: answers.shift() ?? request.options[2].optionId }
      })
    })
    harness.fake().push({ toolCalls: [{ id: "call_one", name: "bash", arguments: { command: "touch allowed" } }] }, {
      text: "done"
    })
    await ask("first")
    expect(fs.existsSync(path.join(project.dir, "allowed"))).toBe(true)
    expect(agent.permissionRequests).toHaveLength(1)
    const request = agent.permissionRequests[0]
    expect(request.toolCall).toMatchObject({
      toolCallId: "call_one",
      title: "touch allowed",
      kind: "execute",
      rawInput: { command: "touch allowed" }
    })
    // not read-only: its exact line, remembered or for this session
    expect(request.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "allow_always", "reject_once"])
    const first = agent.updates.map((n) => n.update)
    expect(first.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({
      toolCallId: "call_one",
      status: "pending"
    })
    expect(first.filter((u) => u.sessionUpdate === "tool_call_update").map((u: any) => u.status)).toEqual([
      "in_progress",
      "completed"
    ])

    harness.fake().push({
      toolCalls: [{ id: "call_two", name: "write_file", arguments: { path: "denied.txt", content: "no" } }]
    }, { text: "ok, I won't" })
    await ask("second")
    expect(fs.existsSync(path.join(project.dir, "denied.txt"))).toBe(false)
    expect(agent.permissionRequests[1].toolCall.content).toEqual([{
      type: "diff",
      path: path.join(project.dir, "denied.txt"),
      newText: "no"
    }])
    const toModel = harness.fake().completions().at(-1)!.body.messages.at(-1)
    expect(toModel).toEqual({ role: "tool", tool_call_id: "call_two", content: "denied by the user" })
    expect(
      agent.updates.map((n) => n.update).find((u: any) =>
        u.toolCallId === "call_two" && u.sessionUpdate === "tool_call_update"
      )
    ).toMatchObject({
      status: "failed",
      rawOutput: "denied by the user"
    })
    expect(agent.invalid()).toEqual([])
  })

  it("a cancelled permission request is a refusal; allow always on npm test covers that line, not rm", async () => {
    const answers: Array<acp.RequestPermissionOutcome> = [{ outcome: "cancelled" }, {
      outcome: "selected",
      optionId: "allow-always"
    }]
    const { project, agent, ask } = await open({
      yaml: configYaml({ url: harness.fake().url, permissions: "ask" }),
      onPermission: () => ({ outcome: answers.shift() ?? { outcome: "cancelled" } })
    })
    fs.writeFileSync(
      path.join(project.dir, "package.json"),
      JSON.stringify({ name: "p", scripts: { test: "echo tested" } })
    )
    fs.writeFileSync(path.join(project.dir, "keep.txt"), "keep")
    harness.fake().push(
      { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "touch one" } }] },
      { toolCalls: [{ id: "c2", name: "bash", arguments: { command: "npm test" } }] },
      { toolCalls: [{ id: "c3", name: "bash", arguments: { command: "npm test" } }] },
      { toolCalls: [{ id: "c4", name: "bash", arguments: { command: "rm -f keep.txt" } }] },
      { text: "done" }
    )
    await ask("go")
    expect(agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["c1", "c2", "c4"])
    expect(agent.permissionRequests[1].options.find((o) => o.kind === "allow_always")?.name).toBe(
      "Always run exactly this command, in this project"
    )
    expect(agent.permissionRequests[1].toolCall.content).toEqual([{
      type: "content",
      content: { type: "text", text: "```sh\nnpm test\n```" }
    }])
    expect(fs.existsSync(path.join(project.dir, "one"))).toBe(false)
    expect(fs.existsSync(path.join(project.dir, "keep.txt"))).toBe(true)
    const updates = agent.updates.map((n) => n.update) as Array<any>
    expect(updates.find((u) => u.toolCallId === "c3" && u.sessionUpdate === "tool_call")).toMatchObject({
      status: "in_progress"
    })
    expect(updates.find((u) => u.toolCallId === "c4" && u.sessionUpdate === "tool_call")).toMatchObject({
      status: "pending"
    })
    expect(updates.find((u) => u.toolCallId === "c3" && u.status === "completed").rawOutput).toMatch(/tested/)
    expect(agent.invalid()).toEqual([])
  })

  it("an overwrite and an edit are asked with the file's real old text, and finish with the same diff", async () => {
    const { project, agent, ask } = await open({
      yaml: configYaml({ url: harness.fake().url, permissions: "ask" }),
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow-once" } })
    })
    const notes = path.join(project.dir, "notes.txt")
    fs.writeFileSync(notes, "first\nsecond\n")
    harness.fake().push(
      { toolCalls: [{ id: "w", name: "write_file", arguments: { path: "notes.txt", content: "first\nSECOND\n" } }] },
      { toolCalls: [{ id: "e", name: "edit_file", arguments: { path: "notes.txt", old: "first", new: "FIRST" } }] },
      { text: "done" }
    )
    await ask("change the notes")
    const overwrite = { type: "diff", path: notes, oldText: "first\nsecond\n", newText: "first\nSECOND\n" }
    const edit = { type: "diff", path: notes, oldText: "first\nSECOND\n", newText: "FIRST\nSECOND\n" }
    expect(agent.permissionRequests.map((r) => r.toolCall.content)).toEqual([[overwrite], [edit]])
    const completed = agent.updates.map((n) => n.update as any).filter((u) => u.status === "completed")
    expect(completed.map((u) => [u.toolCallId, u.content[0]])).toEqual([
      ["w", overwrite],
      ["e", edit]
    ])
    expect(fs.readFileSync(notes, "utf8")).toBe("FIRST\nSECOND\n")
    expect(agent.invalid()).toEqual([])
  })

  it("a cancel while the editor is asked ends the prompt", async () => {
    let asked: (() => void) | undefined
    const { agent, sessionId, file, ask } = await open({
      yaml: configYaml({ url: harness.fake().url, permissions: "ask" }),
      onPermission: () =>
        new Promise((resolve) => {
          asked = () => resolve({ outcome: { outcome: "cancelled" } })
        })
    })
    harness.fake().push({ toolCalls: [{ id: "c1", name: "bash", arguments: { command: "true" } }] })
    const answer = ask("go")
    await agent.waitFor(() => agent.permissionRequests.length === 1)
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId })
    expect((await answer).stopReason).toBe("cancelled")
    asked?.()
    expect(readSession(file).errors).toEqual([])
    expect(agent.invalid()).toEqual([])
  })
})

describe("mm acp: ids, listing and bad input", () => {
  it("answers unknown and malformed ids with errors and keeps going", async () => {
    const { project, agent, sessionId } = await open()
    const unknown = "20200101-000000-0badc0de"
    const load = (id: string) =>
      agent.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd: project.dir, mcpServers: [] })
    expect((await errorOf(load("../../etc/passwd"))).code).toBe(-32602)
    expect((await errorOf(load(unknown))).code).toBe(-32002)
    expect(
      (await errorOf(agent.agent.request(acp.methods.agent.session.resume, { sessionId: unknown, cwd: project.dir })))
        .code
    ).toBe(-32002)
    expect(
      (await errorOf(agent.agent.request(acp.methods.agent.session.resume, { sessionId: "nope", cwd: project.dir })))
        .code
    ).toBe(-32602)
    expect(
      (await errorOf(agent.agent.request(acp.methods.agent.session.prompt, { sessionId: unknown, prompt: [] }))).code
    ).toBe(-32002)
    expect((await errorOf(agent.agent.request(acp.methods.agent.session.prompt, { sessionId: "x", prompt: [] }))).code)
      .toBe(-32602)
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId: unknown })
    expect((await errorOf(agent.agent.request(acp.methods.agent.session.list, { cursor: "not-a-cursor" }))).code).toBe(
      -32602
    )
    const relative = await errorOf(
      agent.agent.request(acp.methods.agent.session.new, { cwd: "relative/dir", mcpServers: [] })
    )
    expect(relative.code).toBe(-32602)
    expect(relative.message).toContain("cwd must be an absolute path")
    const missing = path.join(project.dir, "no", "such", "dir")
    const absent = await errorOf(agent.agent.request(acp.methods.agent.session.new, { cwd: missing, mcpServers: [] }))
    expect(absent.code).toBe(-32602)
    expect(absent.message).toContain("cwd is not an existing directory")
    expect(fs.existsSync(path.join(project.dir, "no"))).toBe(false)
    expect(
      (await errorOf(agent.agent.request(acp.methods.agent.session.load, { sessionId, cwd: "x", mcpServers: [] }))).code
    ).toBe(-32602)

    agent.writeRaw("this is not JSON")
    agent.writeRaw("{\"jsonrpc\":\"2.0\",\"id\":\"x1\",\"method\":\"session/load\",\"params\":{\"sessionId\":42}}")
    const outs = () => agent.traffic.filter((t) => t.direction === "out").map((t) => t.message)
    await until(() => outs().some((m) => m?.id === "x1"), "the answer to x1")
    expect(outs().some((m) => m?.id === null && m?.error?.code === -32700)).toBe(true)
    expect(outs().some((m) => m?.id === "x1" && m?.error?.code === -32602)).toBe(true)

    harness.fake().push({ text: "still alive" })
    const answer = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "you ok?" }]
    })
    expect(answer.stopReason).toBe("end_turn")
    expect(agent.child.exitCode).toBeNull()
    expect(agent.invalid()).toEqual([])
  })

  it("lists the project's sessions newest first, in pages, skipping unreadable files", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const dir = path.join(project.dir, ".mm", "sessions")
    fs.mkdirSync(dir, { recursive: true })
    for (let i = 0; i < 60; i++) {
      const id = `20260101-0${String(i).padStart(5, "0")}-${i.toString(16).padStart(8, "0")}`
      const updatedAt = new Date(Date.UTC(2026, 0, 1, 0, 0, 0) + ((i * 7) % 60) * 60_000).toISOString()
      fs.writeFileSync(
        path.join(dir, `${id}.json`),
        JSON.stringify({
          version: 1,
          id,
          cwd: project.dir,
          createdAt: updatedAt,
          updatedAt,
          title: `session ${i}`,
          turns: 1,
          messages: [],
          errors: []
        })
      )
    }
    fs.writeFileSync(path.join(dir, "20260101-999999-ffffffff.json"), "{ torn")
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const first = await agent.agent.request(acp.methods.agent.session.list, { cwd: project.dir })
    expect(first.sessions).toHaveLength(50)
    expect(first.nextCursor).toEqual(expect.any(String))
    const second = await agent.agent.request(acp.methods.agent.session.list, {
      cwd: project.dir,
      cursor: first.nextCursor
    })
    expect(second.sessions).toHaveLength(10)
    expect(second.nextCursor ?? undefined).toBeUndefined()
    const all = [...first.sessions, ...second.sessions]
    const times = all.map((s) => s.updatedAt!)
    expect(times).toEqual([...times].sort().reverse())
    expect(new Set(all.map((s) => s.sessionId)).size).toBe(60)
    expect(all[0]).toMatchObject({ cwd: project.dir, title: expect.stringMatching(/^session \d+$/) })
    // without cwd: the agent's own directory
    expect((await agent.agent.request(acp.methods.agent.session.list, {})).sessions).toHaveLength(50)
    expect(agent.invalid()).toEqual([])
  })

  it("ends when the editor closes its stdin, saving what a running turn had shown", async () => {
    const { agent, file, ask } = await open()
    harness.fake().push({ text: Array.from({ length: 100 }, (_, i) => `w${i} `), chunkDelayMs: 50 })
    void ask("talk until I leave").catch(() => undefined)
    await agent.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "agent_message_chunk"))
    expect(await agent.close()).toBe(0)
    const stored = readSession(file)
    expect(stored.messages.slice(1).map((m: any) => m.role)).toEqual(["user", "assistant"])
    expect(stored.errors).toEqual([])
  })
})
