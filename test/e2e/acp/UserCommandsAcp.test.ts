// The user's own commands in an editor: offered in available_commands_update with their
// descriptions and argument hints, a prompt starting with one sent as its filled text; /init
// asks for AGENTS.md; a cut instruction file is said on the log.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { INIT_PROMPT } from "../../../src/commands/ModelChoice"
import { configYaml, makeProject, useAgents } from "../../support/acp-agent"

const harness = useAgents()

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** The last user message of each request the fake server received. */
const asked = () =>
  harness.fake().completions().map((request) => {
    const users = request.body.messages.filter((message: any) => message.role === "user")
    return users[users.length - 1].content as string
  })

describe("mm acp: the user's own commands and /init", () => {
  it("offers .mm/commands/review.md with its hint, sends /review src filled in, and /init's prompt", async () => {
    const xdg = fs.mkdtempSync(path.join(os.tmpdir(), "mm-xdg-"))
    const project = makeProject(configYaml({ url: harness.fake().url }))
    write(
      path.join(project.dir, ".mm", "commands", "review.md"),
      "---\ndescription: review the changes under a path\nargument-hint: \"[path]\"\n---\nReview $ARGUMENTS, then $1 again.\n"
    )
    write(path.join(project.dir, ".mm", "commands", "new.md"), "never\n")
    write(path.join(project.dir, "AGENTS.md"), "a rule\n".repeat(6000))
    const agent = harness.start({ cwd: project.dir, config: project.config, env: { XDG_CONFIG_HOME: xdg } })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
      cwd: project.dir,
      mcpServers: []
    })
    await agent.waitFor((updates) => updates.some((n) => n.update.sessionUpdate === "available_commands_update"))
    const update = agent.updates.find((n) => n.update.sessionUpdate === "available_commands_update")!.update as any
    const names = update.availableCommands.map((command: any) => command.name)
    expect(names).toEqual(expect.arrayContaining(["new", "compact", "init", "review"]))
    expect(names.filter((name: string) => name === "new")).toHaveLength(1)
    expect(update.availableCommands.find((command: any) => command.name === "review")).toEqual({
      name: "review",
      description: "review the changes under a path",
      input: { hint: "[path]" }
    })
    expect(agent.stderr()).toContain("commands: .mm/commands/new.md skipped — /new is a built-in command")
    expect(agent.stderr()).toContain(
      `instructions: ${path.join(project.dir, "AGENTS.md")} (cut: 41 KiB, first 32 KiB read)\n`
    )

    harness.fake().push({ text: "reviewed" }, { text: "initialised" })
    const review = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "/review src" }]
    })
    expect(review.stopReason).toBe("end_turn")
    const init = await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "/init" }]
    })
    expect(init.stopReason).toBe("end_turn")
    expect(asked()).toEqual(["Review src, then src again.", INIT_PROMPT])
    expect(agent.invalid()).toEqual([])
  })
})
