import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { type AgentProcess, configYaml, makeProject, readSession, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

const updatesOf = (agent: AgentProcess, sessionId: string) => agent.updates.filter((n) => n.sessionId === sessionId)

/** `session/fork` is not in the SDK's stable method table: sent by name. */
const fork = (agent: AgentProcess, params: { sessionId: string; cwd: string; mcpServers?: [] }) =>
  (agent.agent as unknown as { request: (method: string, params: unknown) => Promise<{ sessionId: string }> })
    .request("session/fork", params)

describe("mm acp: session/fork", () => {
  it("is advertised, answers a new id whose session/load replays the first turns; the original is untouched", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    harness.fake().push({ text: "first answer" }, { text: "second answer" })
    const agent = harness.start({ cwd: project.dir, config: project.config })
    const init = await agent.initialize()
    expect(init.agentCapabilities?.sessionCapabilities).toMatchObject({ fork: {} })

    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    for (const text of ["first question", "second question"]) {
      await agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    }
    const originalFile = path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)
    const before = fs.readFileSync(originalFile)

    const forked = await fork(agent, { sessionId, cwd: project.dir, mcpServers: [] })
    expect(forked.sessionId).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/)
    expect(forked.sessionId).not.toBe(sessionId)
    const saved = readSession(path.join(project.dir, ".mm", "sessions", `${forked.sessionId}.json`))
    expect(saved.forkedFrom).toEqual({ id: sessionId, turn: 2 })
    expect(saved.turns).toBe(2)
    expect(fs.readFileSync(originalFile)).toEqual(before)

    // a fresh agent loads the fork: the first turns are replayed
    const second = harness.start({ cwd: project.dir, config: project.config })
    await second.initialize()
    await second.agent.request(acp.methods.agent.session.load, {
      sessionId: forked.sessionId,
      cwd: project.dir,
      mcpServers: []
    })
    const replayed = updatesOf(second, forked.sessionId)
    expect(textOf(replayed, "user_message_chunk")).toBe("first questionsecond question")
    expect(textOf(replayed, "agent_message_chunk")).toBe("first answersecond answer")

    // the fork goes on by itself; the original's file stays as it was
    harness.fake().push({ text: "in the fork" })
    await second.agent.request(acp.methods.agent.session.prompt, {
      sessionId: forked.sessionId,
      prompt: [{ type: "text", text: "third, in the fork" }]
    })
    const sent = harness.fake().completions().at(-1)!.body.messages.filter((m: any) => m.role === "user")
    expect(sent.map((m: any) => m.content)).toEqual(["first question", "second question", "third, in the fork"])
    expect(fs.readFileSync(originalFile)).toEqual(before)

    await expect(fork(agent, { sessionId: "nope", cwd: project.dir })).rejects.toMatchObject({ code: -32602 })
    expect(agent.invalid()).toEqual([])
    expect(second.invalid()).toEqual([])
  })
})
