// mm acp in a project whose agent.yaml holds settings not trusted yet, or whose own slash
// commands are not: they are left out at start, and the editor is asked at the first prompt,
// through session/request_permission.
// MM_TRUST_PROJECT (set for every other test by setup.ts) is taken out of the agent's environment.
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { trustFileOf } from "../../../src/config/TrustStore"
import { configYaml, makeProject, type PermissionAnswer, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

const MCP_SERVER = path.resolve(__dirname, "../../support/mcp-test-server.mjs")

const projectWithServer = () => {
  const project = makeProject("")
  const marker = path.join(project.dir, "mcp-started")
  fs.writeFileSync(
    project.config,
    configYaml({
      url: harness.fake().url,
      permissions: "allow",
      extra: [
        "mcpServers:",
        "  ghost:",
        "    command: sh",
        `    args: ["-c", "touch ${marker}; exec node ${MCP_SERVER}"]`
      ].join("\n")
    })
  )
  return { ...project, marker }
}

const startIn = async (dir: string, config: string, onPermission: PermissionAnswer) => {
  const agent = harness.start({ cwd: dir, config, onPermission, env: { MM_TRUST_PROJECT: undefined } })
  await agent.initialize()
  const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] })
  const said = async (text: string) => {
    const before = agent.updates.length
    await agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    return textOf(agent.updates.slice(before), "agent_message_chunk")
  }
  return { agent, said }
}

const IGNORED = "mm: ignored from ./agent.yaml until you trust it: an MCP server (ghost: sh), permissions: allow"

describe("mm acp and a project's configuration not trusted yet", () => {
  it("asks the editor once at the first prompt; a yes is remembered and applies from the next start", async () => {
    const { config, dir, marker } = projectWithServer()
    const trust: PermissionAnswer = () => ({ outcome: { outcome: "selected", optionId: "trust-project-config" } })
    const first = await startIn(dir, config, trust)
    expect(first.agent.stderr()).toContain(IGNORED)
    harness.fake().push({ text: "one" }, { text: "two" })
    const answer = await first.said("hello")
    const [question] = first.agent.permissionRequests
    expect(question.toolCall.title).toBe("Trust this project's configuration?")
    expect(question.options.map((option) => [option.kind, option.name])).toEqual([
      ["allow_always", "Trust this project's configuration"],
      ["reject_once", "Not now"]
    ])
    const shown = JSON.stringify(question.toolCall.content)
    expect(shown).toContain(`start the MCP server ghost: sh -c \\"touch ${marker}; exec node ${MCP_SERVER}\\"`)
    expect(shown).toContain("permissions: allow — every tool call runs without asking")
    expect(answer).toContain(`(./agent.yaml trusted, remembered in ${trustFileOf(dir)}.`)
    expect(answer).toContain("Its settings apply from the next start of mm acp")
    expect(answer).toContain("one")
    // asked once: the next prompt goes straight to the model
    expect(await first.said("again")).toBe("two")
    expect(first.agent.permissionRequests).toHaveLength(1)
    expect(fs.existsSync(marker)).toBe(false)
    expect(first.agent.invalid()).toEqual([])
    await first.agent.kill()

    // the next start: trusted, nothing asked, the server started
    const second = await startIn(dir, config, trust)
    harness.fake().push({ text: "three" })
    expect(await second.said("hello")).toBe("three")
    expect(second.agent.permissionRequests).toEqual([])
    expect(second.agent.stderr()).not.toContain("ignored from")
    expect(fs.existsSync(marker)).toBe(true)
  })

  it("a no runs without them, records nothing, and the next start asks again", async () => {
    const { config, dir, marker } = projectWithServer()
    const reject: PermissionAnswer = () => ({ outcome: { outcome: "selected", optionId: "not-now" } })
    const first = await startIn(dir, config, reject)
    harness.fake().push({ text: "one" })
    const answer = await first.said("hello")
    expect(answer).toContain("stay off for this run of mm acp")
    expect(fs.existsSync(trustFileOf(dir))).toBe(false)
    await first.agent.kill()
    const second = await startIn(dir, config, reject)
    harness.fake().push({ text: "two" })
    await second.said("hello")
    expect(second.agent.permissionRequests).toHaveLength(1)
    expect(fs.existsSync(marker)).toBe(false)
  })

  it("asks about the project's own commands alone, and a yes offers them at once and is remembered", async () => {
    const { config, dir } = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    const commands = path.join(dir, ".mm", "commands")
    fs.mkdirSync(commands, { recursive: true })
    fs.writeFileSync(path.join(commands, "review.md"), "Review $ARGUMENTS carefully.\n")
    const trust: PermissionAnswer = () => ({ outcome: { outcome: "selected", optionId: "trust-project-config" } })
    const offered = (updates: ReadonlyArray<acp.SessionNotification>) =>
      updates.flatMap((note) =>
        note.update.sessionUpdate === "available_commands_update"
          ? [note.update.availableCommands.some((command) => command.name === "review")]
          : []
      )
    const first = await startIn(dir, config, trust)
    expect(first.agent.stderr()).toContain("commands: .mm/commands skipped — this project is not trusted")
    // the list sent when the thread opened leaves /review out
    await first.agent.waitFor((updates) => offered(updates).length === 1)
    expect(offered(first.agent.updates)).toEqual([false])
    harness.fake().push({ text: "reviewed" })
    const answer = await first.said("/review src")
    const [question] = first.agent.permissionRequests
    expect(question.toolCall.title).toBe("Trust this project's commands?")
    expect(question.options.map((option) => option.name)).toEqual(["Trust this project's commands", "Not now"])
    expect(JSON.stringify(question.toolCall.content)).toContain(
      "its own slash commands /review (prompts from .mm/commands, sent when you type them)"
    )
    expect(answer).toContain(
      `(this project's commands trusted, remembered in ${trustFileOf(dir)}: /review can be used now.)`
    )
    expect(answer).toContain("reviewed")
    await first.agent.waitFor((updates) => offered(updates).length === 2)
    expect(offered(first.agent.updates)).toEqual([false, true])
    expect(first.agent.invalid()).toEqual([])
    await first.agent.kill()

    const second = await startIn(dir, config, trust)
    harness.fake().push({ text: "again" })
    expect(await second.said("/review lib")).toBe("again")
    expect(second.agent.permissionRequests).toEqual([])
    const users = harness.fake().completions().map((request) => {
      const messages = request.body.messages.filter((message: { role: string }) => message.role === "user")
      return messages[messages.length - 1].content as string
    })
    expect(users.slice(-2)).toEqual(["Review src carefully.", "Review lib carefully."])
  })
})
