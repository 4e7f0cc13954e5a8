// mm acp and the approval rule of issue 43: an editor's allow-always on a command that is not
// read-only covers that exact line only (or, with the session option, only for this session);
// the destructive and other forms of the same command still get a permission request,
// and a reusable answer is offered only for a read-only command.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"

const harness = useAgents()

describe("mm acp: what an allow-always covers", () => {
  it("the issue's forms are asked again after allow-always; only read-only commands get a reusable answer", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    // a repository: git counts as read-only only inside one
    execFileSync("git", ["init", "-q"], { cwd: project.dir })
    fs.mkdirSync(path.join(project.dir, "build"))
    fs.mkdirSync(path.join(project.dir, "src"))
    fs.writeFileSync(path.join(project.dir, "src/keep.ts"), "precious")
    fs.writeFileSync(path.join(project.dir, ".env"), "KEY=secret")
    // the first request of each command: allow-always (or the session one for node); later ones: reject
    const answers: Record<string, string> = {
      "rm -rf build": "allow-always",
      "git log --oneline": "allow-always",
      "node --version": "allow-always-session"
    }
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: (request) => {
        const command = (request.toolCall.rawInput as { command: string }).command
        const optionId = answers[command] ?? "reject"
        return { outcome: { outcome: "selected", optionId } }
      }
    })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const commands = [
      "rm -rf build",
      "rm -rf build",
      "rm -rf build src .git",
      "node --version",
      "node --version",
      "node -e 'require(\"fs\").rmSync(\"src\", { recursive: true })'",
      "git log --oneline",
      "git log --oneline -3",
      "git log --output=../log.txt",
      "git checkout -- .",
      "cat .env"
    ]
    harness.fake().push(
      ...commands.map((command, i) => ({ toolCalls: [{ id: `c${i}`, name: "bash", arguments: { command } }] })),
      { text: "done" }
    )
    await agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] })
    const asked = agent.permissionRequests.map((r) => r.toolCall.toolCallId)
    // the second rm -rf build, the second node --version and git log --oneline -3 ran without a request
    expect(asked).toEqual(["c0", "c2", "c3", "c5", "c6", "c8", "c9", "c10"])
    const named = (id: string) =>
      agent.permissionRequests.find((r) => r.toolCall.toolCallId === id)!.options.map((o) => [o.optionId, o.name])
    expect(named("c0")).toEqual([
      ["allow-once", "Allow once"],
      ["allow-always", "Always run exactly this command, in this project"],
      ["allow-always-session", "Allow exactly this command until this session ends"],
      ["reject", "Reject"]
    ])
    expect(named("c6")[1]).toEqual(["allow-always", "Always allow `git log` with read-only options"])
    expect(named("c8")).toHaveLength(4)
    expect(fs.readFileSync(path.join(project.dir, "src/keep.ts"), "utf8")).toBe("precious")
    expect(fs.existsSync(path.join(path.dirname(project.dir), "log.txt"))).toBe(false)
    expect(agent.invalid()).toEqual([])
    await agent.kill()
  })
})
