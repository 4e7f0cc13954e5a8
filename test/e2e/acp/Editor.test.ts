import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import {
  configYaml,
  type EditorSide,
  makeProject,
  readSession,
  type startAgent,
  textOf,
  useAgents
} from "../../support/acp-agent"
import { requireSandbox } from "../../support/sandbox"

const harness = useAgents({ models: ["fake-model", "other-model"] })

const open = async (
  options: {
    readonly yaml?: string
    readonly capabilities?: acp.ClientCapabilities
    readonly editor?: EditorSide
    readonly onPermission?: Parameters<typeof startAgent>[0]["onPermission"]
  } = {}
) => {
  const project = makeProject(options.yaml ?? configYaml({ url: harness.fake().url }))
  const agent = harness.start({
    cwd: project.dir,
    config: project.config,
    editor: options.editor,
    onPermission: options.onPermission
  })
  await agent.initialize(options.capabilities)
  const created = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
  const { sessionId } = created
  const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
  const ask = (text: string) =>
    agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
  const updatesOf = (kind: string) =>
    agent.updates.filter((n) => n.sessionId === sessionId && n.update.sessionUpdate === kind).map((n) =>
      n.update as any
    )
  return { project, agent, sessionId, created, file, ask, updatesOf }
}

const sent = (agent: { traffic: ReadonlyArray<{ direction: string; message: any }> }, method: string) =>
  agent.traffic.filter((t) => t.direction === "out" && t.message?.method === method).map((t) => t.message.params)

const toolMessages = (file: string) => readSession(file).messages.filter((m: any) => m.role === "tool")

describe("mm acp: the editor's files", () => {
  it("asks with the diff of the editor's buffer, unsaved changes included, and finishes with the same diff", async () => {
    const buffers = new Map<string, string>()
    const { project, agent, ask } = await open({
      yaml: configYaml({ url: harness.fake().url, permissions: "ask" }),
      capabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      editor: {
        readTextFile: ({ path: p }) => ({ content: buffers.get(p) ?? "" }),
        writeTextFile: (params) => {
          buffers.set(params.path, params.content)
          return {}
        }
      },
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow-once" } })
    })
    const notes = path.join(project.dir, "notes.txt")
    fs.writeFileSync(notes, "on disk\n")
    buffers.set(notes, "unsaved alpha beta\n")
    harness.fake().push(
      { toolCalls: [{ id: "e1", name: "edit_file", arguments: { path: "notes.txt", old: "beta", new: "gamma" } }] },
      { text: "done" }
    )
    await ask("edit the notes")
    const diff = { type: "diff", path: notes, oldText: "unsaved alpha beta\n", newText: "unsaved alpha gamma\n" }
    expect(agent.permissionRequests[0].toolCall.content).toEqual([diff])
    const completed = agent.updates.map((n) => n.update as any).find((u) =>
      u.toolCallId === "e1" && u.status === "completed"
    )
    expect(completed.content[0]).toEqual(diff)
    expect(agent.invalid()).toEqual([])
  })

  it("reads the editor's buffer, and writes and edits through the editor", async () => {
    const writes: Array<acp.WriteTextFileRequest> = []
    const buffers = new Map<string, string>()
    const { project, agent, sessionId, file, ask } = await open({
      capabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      editor: {
        readTextFile: ({ path: p }) => {
          const text = buffers.get(p)
          if (text === undefined) throw acp.RequestError.resourceNotFound(p)
          return { content: text }
        },
        writeTextFile: (params) => {
          writes.push(params)
          buffers.set(params.path, params.content)
          return {}
        }
      }
    })
    const notes = path.join(project.dir, "notes.txt")
    fs.writeFileSync(notes, "on disk\n")
    buffers.set(notes, "unsaved alpha beta\n")
    harness.fake().push(
      { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "notes.txt" } }] },
      { toolCalls: [{ id: "e1", name: "edit_file", arguments: { path: "notes.txt", old: "beta", new: "gamma" } }] },
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "sub/new.txt", content: "fresh\n" } }] },
      { toolCalls: [{ id: "r2", name: "read_file", arguments: { path: "missing.txt" } }] },
      { text: "done" }
    )
    expect((await ask("work on notes")).stopReason).toBe("end_turn")

    const results = toolMessages(file)
    expect(results[0]).toMatchObject({ tool_call_id: "r1", content: "unsaved alpha beta" })
    expect(results[1]).toMatchObject({
      tool_call_id: "e1",
      content: "edited notes.txt at line 1: 1 line replaced by 1 line"
    })
    expect(results[2]).toMatchObject({ tool_call_id: "w1", content: "created sub/new.txt: 6 bytes, 1 line" })
    expect(results[3]).toMatchObject({ tool_call_id: "r2", failed: true })
    expect(results[3].content).toContain("missing.txt: the editor could not read it")
    expect(sent(agent, "fs/read_text_file")[0]).toEqual({ sessionId, path: notes })
    expect(writes).toEqual([
      { sessionId, path: notes, content: "unsaved alpha gamma\n" },
      { sessionId, path: path.join(project.dir, "sub", "new.txt"), content: "fresh\n" }
    ])
    // the disk is the editor's business: mm wrote nothing itself
    expect(fs.readFileSync(notes, "utf8")).toBe("on disk\n")
    expect(fs.existsSync(path.join(project.dir, "sub", "new.txt"))).toBe(false)
    expect(agent.invalid()).toEqual([])
  })

  it("an editor that refuses a write makes a failed call with its message; the turn goes on", async () => {
    const { file, ask, agent } = await open({
      capabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
      editor: {
        writeTextFile: () => {
          throw acp.RequestError.internalError(undefined, "buffer is read-only")
        }
      }
    })
    harness.fake().push({ toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "a.txt", content: "x" } }] }, {
      text: "could not"
    })
    expect((await ask("write")).stopReason).toBe("end_turn")
    const [result] = toolMessages(file)
    expect(result).toMatchObject({ tool_call_id: "w1", failed: true })
    expect(result.content).toMatch(/^a\.txt: the editor could not write it \(.*buffer is read-only\)$/)
    expect(agent.invalid()).toEqual([])
  })

  it("without the fs capability, the files are mm's own", async () => {
    const { project, agent, file, ask } = await open()
    fs.writeFileSync(path.join(project.dir, "notes.txt"), "on disk\n")
    harness.fake().push({ toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "notes.txt" } }] }, {
      text: "ok"
    })
    await ask("read it")
    expect(toolMessages(file)[0]).toMatchObject({ content: "on disk" })
    expect(sent(agent, "fs/read_text_file")).toEqual([])
    expect(agent.invalid()).toEqual([])
  })
})

/** A terminal of the test editor that never runs anything: it answers what the test says. */
const scriptedTerminal = (
  script: { readonly output: string; readonly exitCode: number | null; readonly hangs?: boolean }
) => {
  const log: Array<string> = []
  let release: (() => void) | undefined
  const side: EditorSide = {
    createTerminal: () => {
      log.push("create")
      return { terminalId: "term-1" }
    },
    waitForTerminalExit: async () => {
      log.push("wait")
      if (script.hangs === true) await new Promise<void>((resolve) => (release = resolve))
      return { exitCode: script.exitCode, signal: script.hangs === true ? "SIGKILL" : null }
    },
    terminalOutput: () => {
      log.push("output")
      return { output: script.output, truncated: false, exitStatus: { exitCode: script.exitCode } }
    },
    killTerminal: () => {
      log.push("kill")
      release?.()
      return {}
    },
    releaseTerminal: () => {
      log.push("release")
      release?.()
      return {}
    }
  }
  return { side, log }
}

describe("mm acp: the editor's terminal", () => {
  it("runs bash in a terminal the editor shows, and keeps what the terminal returned", async () => {
    const terminal = scriptedTerminal({ output: "built in the editor\n", exitCode: 3 })
    const { project, agent, sessionId, file, ask, updatesOf } = await open({
      yaml: configYaml({ url: harness.fake().url, extra: "maxOutput: 5000\nsandbox: off" }),
      capabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
      editor: terminal.side
    })
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "touch marker && make" } }] }, {
      text: "it failed"
    })
    expect((await ask("build")).stopReason).toBe("end_turn")

    expect(terminal.log).toEqual(["create", "wait", "output", "release"])
    expect(sent(agent, "terminal/create")).toEqual([
      { sessionId, command: "bash", args: ["-c", "touch marker && make"], cwd: project.dir, outputByteLimit: 5000 }
    ])
    const embedded = updatesOf("tool_call_update").find((u) => u.content?.[0]?.type === "terminal")
    expect(embedded).toEqual({
      sessionUpdate: "tool_call_update",
      toolCallId: "b1",
      content: [{ type: "terminal", terminalId: "term-1" }]
    })
    // the tool_call came first, so the editor knows where to show the terminal
    const order = agent.updates.map((n) => n.update.sessionUpdate)
    expect(order.indexOf("tool_call")).toBeLessThan(order.indexOf("tool_call_update"))

    expect(toolMessages(file)[0]).toMatchObject({
      tool_call_id: "b1",
      content: "exit code 3\nbuilt in the editor\n",
      failed: true
    })
    expect(fs.existsSync(path.join(project.dir, "marker"))).toBe(false)

    // a later load replays the saved output, not a terminal that is gone
    const again = harness.start({ cwd: project.dir, config: project.config })
    await again.initialize()
    await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
    const replayed = again.updates.map((n) => n.update as any).find((u) => u.sessionUpdate === "tool_call")
    expect(replayed).toMatchObject({
      toolCallId: "b1",
      status: "failed",
      rawOutput: "exit code 3\nbuilt in the editor\n"
    })
    expect(JSON.stringify(again.updates)).not.toContain("term-1")
    expect(agent.invalid()).toEqual([])
    expect(again.invalid()).toEqual([])
  })

  it("with the sandbox on, the editor's terminal is given the confined command line", async () => {
    requireSandbox()
    const terminal = scriptedTerminal({ output: "ok\n", exitCode: 0 })
    const { project, agent, ask } = await open({
      yaml: configYaml({ url: harness.fake().url, extra: "sandbox: on" }),
      capabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
      editor: terminal.side
    })
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "make" } }] }, { text: "ok" })
    expect((await ask("build")).stopReason).toBe("end_turn")
    const [created] = sent(agent, "terminal/create") as Array<{ command: string; args: Array<string>; cwd: string }>
    // started by env -i with the sandbox's whole environment: the editor's own variables stay out
    expect(created.command).toMatch(/(^|\/)env$/)
    expect(created.args[0]).toBe("-i")
    const pairs = created.args.slice(1, created.args.findIndex((arg, i) => i > 0 && !/^[A-Za-z_]\w*=/.test(arg)))
    expect(pairs.some((pair) => pair.startsWith("PATH="))).toBe(true)
    expect(pairs.some((pair) => /^(OPENAI_API_KEY|\w*_TOKEN)=/.test(pair))).toBe(false)
    // bwrap next, or (as root) the shell that puts it in its process-count group first
    expect(created.args[pairs.length + 1]).toMatch(/(^|\/)(bwrap|sh)$/)
    expect(created.args.some((arg) => /(^|\/)bwrap$/.test(arg))).toBe(true)
    // bash from PATH outside the project, still called bash ($0)
    expect(created.args.at(-5)).toBe("--")
    expect(created.args.at(-4)).toMatch(/^\/.*\/bash$/)
    expect(created.args.at(-3)).toBe("-c")
    expect(created.args.at(-1)).toBe("bash")
    expect(created.args.at(-2)).toMatch(
      /^ulimit -H -S -f \d+ 2>\/dev\/null; ulimit -H -S -u \d+ 2>\/dev\/null; .*; done; make$/
    )
    expect(created.args).toEqual(
      expect.arrayContaining(["--unshare-net", "--unshare-pid", "--new-session", "--die-with-parent"])
    )
    expect(created.args.join(" ")).toContain(`--bind ${project.dir} ${project.dir}`)
    expect(created.cwd).toBe(project.dir)
  })

  it("past its timeout the command is killed in the terminal, and the result says so", async () => {
    const terminal = scriptedTerminal({ output: "partial output\n", exitCode: null, hangs: true })
    const { file, ask, agent } = await open({
      capabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
      editor: terminal.side
    })
    harness.fake().push(
      { toolCalls: [{ id: "b1", name: "bash", arguments: { command: "sleep 100", timeout: 0.3 } }] },
      { text: "too slow" }
    )
    expect((await ask("wait")).stopReason).toBe("end_turn")
    expect(terminal.log).toEqual(["create", "wait", "kill", "output", "release"])
    expect(toolMessages(file)[0]).toMatchObject({
      content: "killed after 0.3 s (timeout)\npartial output\n",
      failed: true
    })
    expect(agent.invalid()).toEqual([])
  })

  it("a terminal the editor cannot create is a failed call the model sees", async () => {
    const { file, ask, agent } = await open({
      capabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
      editor: {
        createTerminal: () => {
          throw acp.RequestError.internalError(undefined, "no shell here")
        }
      }
    })
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "ls" } }] }, { text: "no luck" })
    expect((await ask("list")).stopReason).toBe("end_turn")
    const [result] = toolMessages(file)
    expect(result).toMatchObject({ tool_call_id: "b1", failed: true })
    expect(result.content).toMatch(/^cannot run bash in the editor's terminal: .*no shell here/)
    expect(agent.invalid()).toEqual([])
  })

  it("a cancel kills the terminal, then releases it", async () => {
    const terminal = scriptedTerminal({ output: "", exitCode: null, hangs: true })
    const { agent, sessionId, file, ask } = await open({
      capabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: true },
      editor: terminal.side
    })
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "sleep 100" } }] })
    const answer = ask("wait")
    await agent.waitFor((updates) => updates.some((n) => (n.update as any).content?.[0]?.type === "terminal"))
    await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId })
    expect((await answer).stopReason).toBe("cancelled")
    // the kill and the release are sent, not waited for: the answer to the prompt may come first
    while (terminal.log.length < 4) await new Promise((resolve) => setTimeout(resolve, 10))
    expect(terminal.log).toEqual(["create", "wait", "kill", "release"])
    expect(toolMessages(file)[0]).toMatchObject({ tool_call_id: "b1", failed: true })
    expect(agent.invalid()).toEqual([])
  })
})

describe("mm acp: modes and config options", () => {
  it("offers the modes and the models; allow asks nothing, edits asks only for commands", async () => {
    const { agent, sessionId, created, ask, updatesOf } = await open({
      yaml: configYaml({ url: harness.fake().url, permissions: "ask" }),
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow-once" } })
    })
    expect(created.modes).toMatchObject({
      currentModeId: "ask",
      availableModes: [{ id: "ask" }, { id: "edits" }, { id: "auto" }, { id: "allow" }, { id: "plan", name: "Plan" }]
    })
    expect(created.configOptions?.map((o: any) => [o.id, o.currentValue, o.options.map((c: any) => c.value)])).toEqual([
      ["mode", "ask", ["ask", "edits", "auto", "allow", "plan"]],
      ["model", "fake-model", ["fake-model", "other-model"]]
    ])

    expect(await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "allow" })).toEqual({})
    expect(updatesOf("current_mode_update")).toEqual([{ sessionUpdate: "current_mode_update", currentModeId: "allow" }])
    expect(updatesOf("config_option_update").at(-1).configOptions[0].currentValue).toBe("allow")
    harness.fake().push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "echo hi" } }] }, { text: "ok" })
    await ask("run it")
    expect(agent.permissionRequests).toEqual([])

    const edits = await agent.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId: "mode",
      value: "edits"
    })
    expect(edits.configOptions[0].currentValue).toBe("edits")
    expect(updatesOf("current_mode_update").at(-1).currentModeId).toBe("edits")
    harness.fake().push(
      { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "in.txt", content: "x" } }] },
      { toolCalls: [{ id: "b2", name: "bash", arguments: { command: "echo again" } }] },
      { text: "ok" }
    )
    await ask("write, then run")
    expect(agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["b2"])

    const bad = await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "yolo" }).catch((e) =>
      e
    )
    expect(bad.code).toBe(-32602)
    expect(agent.invalid()).toEqual([])
  })

  it("the model option changes the model of the next request; mode and model are kept in settings", async () => {
    const { agent, sessionId, file, ask } = await open()
    const set = await agent.agent.request(acp.methods.agent.session.setConfigOption, {
      sessionId,
      configId: "model",
      value: "other-model"
    })
    expect(set.configOptions[1].currentValue).toBe("other-model")
    await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "allow" })
    harness.fake().push({ text: "hi" })
    await ask("hello")
    expect(harness.fake().completions().at(-1)?.body.model).toBe("other-model")
    expect(readSession(file).settings).toEqual({ mode: "allow", model: "other-model" })
    const unknown = await agent.agent
      .request(acp.methods.agent.session.setConfigOption, { sessionId, configId: "model", value: "gpt-99" })
      .catch((e) => e)
    expect(unknown.code).toBe(-32602)
    expect(agent.invalid()).toEqual([])
  })
})

const sse = (
  chunks: ReadonlyArray<object>
) => [...chunks.map((c) => `data: ${JSON.stringify({ choices: [c] })}\n\n`), "data: [DONE]\n\n"]

describe("mm acp: thoughts, usage and stop reasons", () => {
  it("streams reasoning as thoughts, saves it, replays it, and never sends it back", async () => {
    const { project, agent, sessionId, file, ask, updatesOf } = await open()
    harness.fake().push({
      kind: "raw",
      chunks: sse([
        { index: 0, delta: { role: "assistant", reasoning_content: "The user greets. " } },
        { index: 0, delta: { reasoning_content: "Answer briefly." } },
        { index: 0, delta: { content: "Hello!" } },
        { index: 0, delta: {}, finish_reason: "stop" }
      ])
    })
    await ask("hi")
    expect(updatesOf("agent_thought_chunk").map((u) => u.content.text).join("")).toBe(
      "The user greets. Answer briefly."
    )
    expect(textOf(agent.updates, "agent_message_chunk")).toBe("Hello!")
    const saved = readSession(file).messages.at(-1)
    expect(saved).toMatchObject({ role: "assistant", content: "Hello!", reasoning: "The user greets. Answer briefly." })

    harness.fake().push({ text: "again" })
    await ask("more")
    const body = JSON.stringify(harness.fake().completions().at(-1)?.body.messages)
    expect(body).not.toContain("Answer briefly")
    expect(body).not.toContain("reasoning")

    const again = harness.start({ cwd: project.dir, config: project.config })
    await again.initialize()
    await again.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
    const kinds = again.updates.map((n) => n.update.sessionUpdate)
    expect(kinds.slice(0, 3)).toEqual(["user_message_chunk", "agent_thought_chunk", "agent_message_chunk"])
    expect(agent.invalid()).toEqual([])
    expect(again.invalid()).toEqual([])
  })

  it("a cut answer ends with max_tokens; usage_update follows each model call", async () => {
    const { agent, ask, updatesOf } = await open()
    harness.fake().push({
      text: "and then the",
      finishReason: "length",
      usage: { prompt_tokens: 50, completion_tokens: 7 }
    })
    expect((await ask("tell a long story")).stopReason).toBe("max_tokens")
    // the configured context window (default 32768) is the size
    expect(updatesOf("usage_update")).toEqual([{ sessionUpdate: "usage_update", used: 57, size: 32768 }])
    expect(agent.invalid()).toEqual([])
  })

  it("to an editor that shows notices, a notice is a notice update, not answer text", async () => {
    const { agent, ask, updatesOf } = await open({
      capabilities: {
        fs: { readTextFile: false, writeTextFile: false },
        terminal: false,
        session: { notices: {}, compaction: {} }
      }
    })
    harness.fake().push({ text: "and then the", finishReason: "length" })
    expect((await ask("tell a long story")).stopReason).toBe("max_tokens")
    expect(textOf(agent.updates, "agent_message_chunk")).toBe("and then the")
    expect(updatesOf("notice")).toEqual([
      {
        sessionUpdate: "notice",
        severity: "info",
        title:
          "the answer was cut at the model's output limit (finish_reason: length) — set model.maxTokens higher (the server's own output limit applies now)"
      }
    ])
    // no usage reported by the server: estimated from the text
    expect(updatesOf("usage_update")).toHaveLength(1)
    expect(agent.invalid()).toEqual([])
  })

  it("to an editor that shows compactions, /compact is a compaction_update, failed or completed", async () => {
    const { ask, updatesOf, agent } = await open({
      yaml: configYaml({ url: harness.fake().url, keepTurns: 1 }),
      capabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false, session: { compaction: {} } }
    })
    harness.fake().push({ text: "one" }, { text: "two" })
    await ask("first question")
    await ask("second question")
    harness.fake().push({ kind: "status", status: 500, body: { error: { message: "no summaries today" } } })
    await ask("/compact")
    harness.fake().push({ text: "The user asked a first question." })
    await ask("/compact")
    const [failed, done] = updatesOf("compaction_update")
    expect(failed).toMatchObject({ status: "failed", error: expect.stringContaining("no summaries today") })
    expect(done).toMatchObject({
      status: "completed",
      summary: [{ type: "text", text: expect.stringMatching(/^Compacted: 2 older message\(s\)/) }]
    })
    expect(textOf(agent.updates, "agent_message_chunk")).toBe("onetwo")
    expect(agent.invalid()).toEqual([])
  })

  it("a failed generation answers the prompt with a JSON-RPC error; the line and the record stay", async () => {
    const { agent, sessionId, file, ask } = await open()
    harness.fake().push({ kind: "status", status: 500, body: { error: { message: "the GPU caught fire" } } })
    const error = await ask("hello?").catch((e) => e)
    expect(error.code).toBe(-32603)
    expect(error.message).toContain("the GPU caught fire")
    const said = textOf(agent.updates.filter((n) => n.sessionId === sessionId), "agent_message_chunk").trim()
    expect(said).toBe(error.message)
    expect(readSession(file).errors[0]).toMatchObject({ kind: "generation", line: said })
    expect(agent.invalid()).toEqual([])
  })
})

describe("mm acp: one session, one project; honest capabilities", () => {
  it("refuses a session under another cwd, held or loaded from a shared store", async () => {
    const store = makeProject("").dir
    const yaml = configYaml({ url: harness.fake().url, sessionsDir: path.join(store, "sessions") })
    const a = makeProject(yaml)
    const b = makeProject(yaml)
    const agent = harness.start({ cwd: a.dir, config: a.config })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: a.dir, mcpServers: [] })
    harness.fake().push({ text: "hi" })
    await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "hello" }]
    })
    const file = path.join(store, "sessions", `${sessionId}.json`)
    const before = fs.readFileSync(file, "utf8")

    const held = await agent.agent.request(acp.methods.agent.session.load, { sessionId, cwd: b.dir, mcpServers: [] })
      .catch((e) => e)
    expect(held.message).toBe(`session ${sessionId} belongs to ${a.dir}`)
    const resumed = await agent.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: b.dir }).catch((e) =>
      e
    )
    expect(resumed.message).toBe(`session ${sessionId} belongs to ${a.dir}`)

    const fresh = harness.start({ cwd: b.dir, config: b.config })
    await fresh.initialize()
    const loaded = await fresh.agent.request(acp.methods.agent.session.load, { sessionId, cwd: b.dir, mcpServers: [] })
      .catch((e) => e)
    expect(loaded.message).toBe(`session ${sessionId} belongs to ${a.dir}`)
    expect(fs.readFileSync(file, "utf8")).toBe(before)
    expect(agent.invalid()).toEqual([])
    expect(fresh.invalid()).toEqual([])
  })

  it("negotiates version 1, refuses 0, and offers no load or list when sessions are off", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, enabled: false }))
    const agent = harness.start({ cwd: project.dir, config: project.config })
    const zero = await agent.agent.request(acp.methods.agent.initialize, { protocolVersion: 0 }).catch((e) => e)
    expect(zero.code).toBe(-32602)
    const later = await agent.agent.request(acp.methods.agent.initialize, { protocolVersion: 7 })
    expect(later.protocolVersion).toBe(1)
    expect(later.agentCapabilities?.loadSession).toBe(false)
    expect(later.agentCapabilities?.sessionCapabilities).toEqual({})
    expect(agent.invalid()).toEqual([])
  })
})
