import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { afterEach, beforeEach, describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, textOf, useAgents } from "../../support/acp-agent"
import { MCP_TEST_SERVER } from "../../support/paths"
import { isAlive } from "../../support/processes"

const SERVER = MCP_TEST_SERVER
const harness = useAgents()

let scratch: string
beforeEach(() => {
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mm-mcp-acp-"))
})
afterEach(() => fs.rmSync(scratch, { recursive: true, force: true }))

/** Whether the process runs (a zombie waiting to be reaped does not). */
const calls = (file: string): Array<any> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []

const pidsIn = (
  file: string
): Array<number> => (fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").map(Number) : [])

const waitUntil = async (check: () => boolean, what: string, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("MCP servers given by the editor", () => {
  it(
    "are started for the session with their env, their tools reach the model, calls are replayed on load without the server",
    async () => {
      const log = path.join(scratch, "calls.log")
      const pids = path.join(scratch, "pids")
      const server = (name: string): acp.McpServer => ({
        name,
        command: process.execPath,
        args: [SERVER],
        env: [
          { name: "MM_EDITOR_VAR", value: "from-the-editor" },
          { name: "MCP_TEST_LOG", value: log },
          { name: "MCP_TEST_PIDFILE", value: pids }
        ]
      })
      const project = makeProject(configYaml({ url: harness.fake().url }))
      harness.fake().push(
        { toolCalls: [{ name: "mcp__editor__env", arguments: { name: "MM_EDITOR_VAR" }, id: "call_env" }] },
        { text: "It says from-the-editor." },
        { toolCalls: [{ name: "mcp__editor__look", arguments: { what: "the sky" }, id: "call_look" }] },
        { text: "Looked." }
      )
      const agent = harness.start({ cwd: project.dir, config: project.config })
      const init = await agent.initialize()
      expect(init.agentCapabilities?.mcpCapabilities).toEqual({ http: true })
      const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
        cwd: project.dir,
        mcpServers: [server("editor"), { name: "nowhere", command: "mm-no-such-mcp-server", args: [], env: [] }]
      })
      const ask = (text: string) =>
        agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
      expect(await ask("what does the variable say?")).toEqual({ stopReason: "end_turn" })
      expect(calls(log)).toEqual([{ tool: "env", name: "MM_EDITOR_VAR" }])
      const request = harness.fake().completions()[0].body
      expect(request.tools.map((t: any) => t.function.name)).toContain("mcp__editor__env")
      expect(harness.fake().completions()[1].body.messages.at(-1)).toMatchObject({
        role: "tool",
        content: "MM_EDITOR_VAR=from-the-editor"
      })
      const said = textOf(agent.updates, "agent_message_chunk")
      expect(said).toContain("mcp server \"nowhere\" did not start: spawn mm-no-such-mcp-server ENOENT")
      expect(said.split("mcp server \"nowhere\"")).toHaveLength(2)
      expect(agent.stderr()).toContain("[acp] mcp server \"nowhere\" did not start: spawn mm-no-such-mcp-server ENOENT")
      const started = agent.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call") as any
      expect(started).toMatchObject({
        toolCallId: "call_env",
        kind: "other",
        title: "mcp__editor__env: MM_EDITOR_VAR",
        rawInput: { name: "MM_EDITOR_VAR" }
      })
      const finished = agent.updates.map((n) => n.update).find((u) =>
        u.sessionUpdate === "tool_call_update" && u.status === "completed"
      ) as any
      expect(finished).toMatchObject({ toolCallId: "call_env", rawOutput: "MM_EDITOR_VAR=from-the-editor" })

      expect(await ask("look at the sky")).toEqual({ stopReason: "end_turn" })
      const look = agent.updates.map((n) => n.update).find((u) =>
        u.sessionUpdate === "tool_call" && u.toolCallId === "call_look"
      ) as any
      expect(look.kind).toBe("read")
      expect(agent.invalid()).toEqual([])
      const [pid] = pidsIn(pids)
      expect(isAlive(pid)).toBe(true)
      expect(await agent.close()).toBe(0)
      expect(isAlive(pid)).toBe(false)

      const file = path.join(project.dir, ".mm/sessions", `${sessionId}.json`)
      expect(readSession(file).messages).toContainEqual({
        role: "tool",
        tool_call_id: "call_env",
        content: "MM_EDITOR_VAR=from-the-editor"
      })

      const before = calls(log).length
      const again = harness.start({ cwd: project.dir, config: project.config })
      await again.initialize()
      await again.agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: project.dir,
        mcpServers: [server("editor")]
      })
      const replayed = again.updates.map((n) => n.update).filter((u) => u.sessionUpdate === "tool_call") as Array<any>
      expect(replayed.map((u) => [u.toolCallId, u.status, u.rawOutput])).toEqual([
        ["call_env", "completed", "MM_EDITOR_VAR=from-the-editor"],
        ["call_look", "completed", "looked at the sky\n[image: image/png, 16 bytes]"]
      ])
      expect(replayed[0].rawInput).toEqual({ name: "MM_EDITOR_VAR" })
      await waitUntil(() => pidsIn(pids).length === 2, "the server started for the loaded session")
      expect(calls(log)).toHaveLength(before)
      expect(again.invalid()).toEqual([])
      expect(await again.close()).toBe(0)
      for (const each of pidsIn(pids)) expect(isAlive(each)).toBe(false)
    },
    60_000
  )

  it(
    "a call cancelled mid-way leaves the prompt cancelled, and no server process once the session is closed",
    async () => {
      const pids = path.join(scratch, "pids")
      const project = makeProject(configYaml({ url: harness.fake().url }))
      harness.fake().push({ toolCalls: [{ name: "mcp__slow__sleep", arguments: { seconds: 30 } }] }, { text: "after" })
      const agent = harness.start({ cwd: project.dir, config: project.config })
      const init = await agent.initialize()
      expect(init.agentCapabilities?.sessionCapabilities?.close).toEqual({})
      const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
        cwd: project.dir,
        mcpServers: [{
          name: "slow",
          command: process.execPath,
          args: [SERVER],
          env: [{ name: "MCP_TEST_PIDFILE", value: pids }]
        }]
      })
      const answer = agent.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "wait" }]
      })
      await agent.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "tool_call"))
      await agent.agent.notify(acp.methods.agent.session.cancel, { sessionId })
      expect(await answer).toEqual({ stopReason: "cancelled" })
      const [pid] = pidsIn(pids)
      expect(isAlive(pid)).toBe(true)
      await agent.agent.request(acp.methods.agent.session.close, { sessionId })
      expect(isAlive(pid)).toBe(false)
      expect(agent.invalid()).toEqual([])
    },
    30_000
  )

  it(
    "an editor's server asks before each call: the call is pending, then asked through session/request_permission",
    async () => {
      const log = path.join(scratch, "calls.log")
      const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
      harness.fake().push(
        { toolCalls: [{ name: "mcp__editor__echo", arguments: { text: "may I?" }, id: "call_ask" }] },
        { text: "Allowed." }
      )
      const agent = harness.start({
        cwd: project.dir,
        config: project.config,
        onPermission: (request) => ({ outcome: { outcome: "selected", optionId: request.options[0].optionId } })
      })
      await agent.initialize()
      const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
        cwd: project.dir,
        mcpServers: [{
          name: "editor",
          command: process.execPath,
          args: [SERVER],
          env: [{ name: "MCP_TEST_LOG", value: log }]
        }]
      })
      expect(
        await agent.agent.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: "echo" }]
        })
      ).toEqual({
        stopReason: "end_turn"
      })
      const started = agent.updates.map((n) => n.update).find((u) => u.sessionUpdate === "tool_call") as any
      expect(started).toMatchObject({ toolCallId: "call_ask", status: "pending", title: "mcp__editor__echo: may I?" })
      expect(agent.permissionRequests.map((r) => [r.toolCall.toolCallId, r.toolCall.rawInput])).toEqual([["call_ask", {
        text: "may I?"
      }]])
      expect(calls(log)).toEqual([{ tool: "echo", text: "may I?" }])
      expect(agent.invalid()).toEqual([])
    },
    30_000
  )
})
