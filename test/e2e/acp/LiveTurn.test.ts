import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, errorOf, makeProject, readSession, useAgents } from "../../support/acp-agent"
import { until } from "../../support/until"

// A thread whose turn another mm is answering: a second agent's session/load and
// session/resume answer an error naming that mm, write nothing, and the turn ends as usual.

const harness = useAgents()

const runningOutput = (file: string): string | undefined => {
  try {
    return readSession(file).inProgress?.running?.output
  } catch {
    return undefined
  }
}

describe("mm acp: a thread another mm is answering", () => {
  it("is refused by session/load and session/resume; its turn ends in the same file", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const script = "echo live-call; for i in $(seq 600); do [ -e let-go ] && break; sleep 0.1; done"
    harness.fake().push({ toolCalls: [{ id: "call_live", name: "bash", arguments: { command: script } }] })
    const first = harness.start({ cwd: project.dir, config: project.config })
    await first.initialize()
    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const file = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
    const answer = first.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "the running question" }]
    })
    try {
      await until(
        () => runningOutput(file)?.includes("live-call") === true,
        "the running call's output in the file",
        30_000
      )
      const before = fs.readFileSync(file, "utf8")
      const line =
        `session ${sessionId} is answering a question in another mm (pid ${first.child.pid}); wait for it to finish, or start a new conversation`

      const second = harness.start({ cwd: project.dir, config: project.config })
      await second.initialize()
      const loaded = await errorOf(
        second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project.dir, mcpServers: [] })
      )
      expect(loaded).toMatchObject({ code: -32603, message: line })
      const resumed = await errorOf(
        second.agent.request(acp.methods.agent.session.resume, { sessionId, cwd: project.dir, mcpServers: [] })
      )
      expect(resumed).toMatchObject({ code: -32603, message: line })
      // still listed, and nothing written
      const listed = await second.agent.request(acp.methods.agent.session.list, { cwd: project.dir })
      expect(listed.sessions.map((s) => s.sessionId)).toEqual([sessionId])
      expect(fs.readFileSync(file, "utf8")).toBe(before)
      expect(second.invalid()).toEqual([])
    } finally {
      fs.writeFileSync(path.join(project.dir, "let-go"), "")
      harness.fake().push({ text: "first answer" })
    }
    expect((await answer).stopReason).toBe("end_turn")
    const ended = readSession(file)
    expect(ended.inProgress).toBeUndefined()
    expect(ended.errors).toEqual([])
    expect(ended.messages.at(-1).content).toBe("first answer")
    expect(first.invalid()).toEqual([])
  }, 120_000)
})
