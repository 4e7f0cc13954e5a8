import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { beforeAll, describe, expect, it } from "vitest"

import { SANDBOX_BLOCKED } from "../../../src/tools/Sandbox"
import { configYaml, makeProject, MM, type PermissionAnswer, readSession, useAgents } from "../../support/acp-agent"
import { outsideDir, requireSandbox } from "../../support/sandbox"

const BLOCKED = SANDBOX_BLOCKED

const harness = useAgents()

/** `mm acp` in a new project with `yaml`'s extra lines, one session open; the editor offers nothing of its own. */
const open = async (extra: string, permissions: "ask" | "allow" | "auto", onPermission?: PermissionAnswer) => {
  const project = makeProject(
    configYaml({ url: harness.fake().url, extra, permissions })
  )
  const agent = harness.start({ cwd: project.dir, config: project.config, onPermission })
  await agent.initialize()
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
  const ask = (text: string) =>
    agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
  const toolResults = (): Record<string, string> =>
    Object.fromEntries(
      readSession(path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)).messages
        .filter((m: { role: string }) => m.role === "tool")
        .map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content])
    )
  return { project, agent, sessionId, ask, toolResults }
}

const bash = (id: string, command: string) => ({ id, name: "bash", arguments: { command } })

describe("mm acp: the sandbox", () => {
  beforeAll(() => requireSandbox())

  it("confines the model's commands; a blocked one is asked about with the reason, and refused it says so", async () => {
    const outside = outsideDir()
    const { project, agent, ask, toolResults } = await open(
      "sandbox: on",
      "allow",
      () => ({ outcome: { outcome: "selected", optionId: "reject" } })
    )
    harness.fake().push(
      {
        toolCalls: [
          bash("out", `touch ${outside}/x`),
          bash("in", "echo inside > inside.txt"),
          bash("net", `exec 3<>/dev/tcp/127.0.0.1/${harness.fake().port} && echo reached`)
        ]
      },
      { text: "done" }
    )
    expect((await ask("try")).stopReason).toBe("end_turn")
    expect(fs.existsSync(path.join(outside, "x"))).toBe(false)
    expect(fs.readFileSync(path.join(project.dir, "inside.txt"), "utf8")).toBe("inside\n")
    const results = toolResults()
    expect(results.out).toContain("Read-only file system")
    expect(results.out.trimEnd().split("\n").at(-1)).toBe(BLOCKED)
    expect(results.net).toContain("Connection refused")
    expect(results.net.trimEnd().split("\n").at(-1)).toBe(BLOCKED)
    expect(results.in).not.toContain(BLOCKED)

    // asked twice (the write, the connection), never for the command that worked
    expect(agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["out", "net"])
    const [first] = agent.permissionRequests
    expect(first.toolCall.title).toContain("Run outside the sandbox")
    expect(JSON.stringify(first.toolCall.content)).toContain("x is read-only in the sandbox: it is outside the project")
    expect(first.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"])
    expect(agent.stderr()).toContain("[acp] sandbox: on")
    expect(agent.invalid()).toEqual([])
  })

  it("run outside the sandbox when the editor says so", async () => {
    const outside = outsideDir()
    const { agent, ask, toolResults } = await open(
      "sandbox: on",
      "allow",
      () => ({ outcome: { outcome: "selected", optionId: "allow-once" } })
    )
    harness.fake().push({ toolCalls: [bash("out", `touch ${outside}/x && echo touched`)] }, { text: "done" })
    expect((await ask("try")).stopReason).toBe("end_turn")
    expect(agent.permissionRequests).toHaveLength(1)
    expect(fs.existsSync(path.join(outside, "x"))).toBe(true)
    expect(toolResults().out).toMatch(/^exit code 0\ntouched/)
  })

  it("permissions: auto — a command runs without a question, a write outside the project is asked", async () => {
    const outside = outsideDir()
    const { project, agent, ask, toolResults } = await open(
      "",
      "auto",
      () => ({ outcome: { outcome: "selected", optionId: "reject" } })
    )
    harness.fake().push(
      {
        toolCalls: [
          bash("cmd", "echo ran > ran.txt"),
          { id: "far", name: "write_file", arguments: { path: `${outside}/far.txt`, content: "x" } }
        ]
      },
      { text: "done" }
    )
    expect((await ask("go")).stopReason).toBe("end_turn")
    expect(fs.readFileSync(path.join(project.dir, "ran.txt"), "utf8")).toBe("ran\n")
    expect(agent.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["far"])
    expect(fs.existsSync(path.join(outside, "far.txt"))).toBe(false)
    expect(toolResults().far).toContain("denied by the user")
  })

  it("sandbox: on where bubblewrap cannot start: mm acp ends at once, one line on stderr, exit code 2", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, extra: "sandbox: on" }))
    const child = spawn(process.execPath, [MM, "acp"], {
      cwd: project.dir,
      env: { ...process.env, AGENT_CONFIG: project.config, MM_BWRAP: "/nonexistent/bwrap" },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))
    expect(code).toBe(2)
    expect(stdout).toBe("")
    expect(stderr.trimEnd().split("\n")).toEqual([
      `mm: sandbox: on in ${project.config}, but bubblewrap not found — apt-get install bubblewrap`
    ])
  })

  it("mode auto chosen by the editor behaves the same", async () => {
    const { project, agent, sessionId, ask } = await open("", "ask", () => ({ outcome: { outcome: "cancelled" } }))
    await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: "auto" })
    harness.fake().push({ toolCalls: [bash("cmd", "echo ran > ran.txt")] }, { text: "done" })
    expect((await ask("go")).stopReason).toBe("end_turn")
    expect(agent.permissionRequests).toEqual([])
    expect(fs.readFileSync(path.join(project.dir, "ran.txt"), "utf8")).toBe("ran\n")
  })
})
