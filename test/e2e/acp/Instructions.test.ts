// The editor's threads get the same system message as the terminal: the project's
// AGENTS.md, the environment, and the search tools; the log names the files read.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"

const harness = useAgents()

describe("mm acp: project instructions and search tools", () => {
  it("names the instruction files on its log, sends them with the environment, and runs grep unasked", async () => {
    process.env.XDG_CONFIG_HOME = fs.mkdtempSync(path.join(os.tmpdir(), "mm-xdg-"))
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    fs.writeFileSync(path.join(project.dir, "AGENTS.md"), "Run the tests with `make check`.\n")
    fs.writeFileSync(path.join(project.dir, "notes.txt"), "the needle is here\n")
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "cancelled" } })
    })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
      cwd: project.dir,
      mcpServers: []
    })
    expect(agent.stderr()).toContain(`instructions: ${path.join(project.dir, "AGENTS.md")}\n`)
    harness.fake().push(
      {
        toolCalls: [
          { id: "s1", name: "grep", arguments: { pattern: "needle", glob: "*.txt" } },
          { id: "s2", name: "glob", arguments: { pattern: "*.md" } }
        ]
      },
      { text: "found" }
    )
    const response = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "find the needle" }]
    })
    expect(response.stopReason).toBe("end_turn")
    const [first, second] = harness.fake().completions()
    const system = first.body.messages[0].content as string
    expect(system).toContain("# Instructions from AGENTS.md\n\nRun the tests with `make check`.")
    expect(system).toContain(`- working directory: ${project.dir}\n`)
    expect(first.body.tools.map((t: any) => t.function.name)).toEqual(expect.arrayContaining(["grep", "glob"]))
    expect(second.body.messages.slice(-2)).toMatchObject([
      { role: "tool", content: "notes.txt:1: the needle is here" },
      { role: "tool", content: "AGENTS.md" }
    ])
    expect(agent.permissionRequests).toEqual([])
    const call = agent.updates.find((n) => n.update.sessionUpdate === "tool_call")?.update as any
    expect(call).toMatchObject({ kind: "search", title: "needle (*.txt)" })
    expect(agent.invalid()).toEqual([])
  })
})
