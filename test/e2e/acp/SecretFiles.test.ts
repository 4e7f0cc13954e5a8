// mm acp and files that look secret (issue 43): read_file .env inside the project is a
// permission request of kind read whose content says why, in the modes that let reads through;
// rejected, nothing of the file reaches the model. Under allow, no request.
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"
import { lastToolResults } from "../../support/FakeModelServer"

const harness = useAgents()

const MARKER = "acp-dotenv-marker-91c0"

describe("mm acp: files that look secret", () => {
  const session = async (permissions: "ask" | "allow") => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions }))
    fs.writeFileSync(path.join(project.dir, ".env"), `TOKEN=${MARKER}\n`)
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "reject" } })
    })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
      cwd: project.dir,
      mcpServers: []
    })
    const prompt = async (id: string) => {
      harness.fake().push({ toolCalls: [{ id, name: "read_file", arguments: { path: ".env" } }] }, { text: "done" })
      const answer = await agent.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "read the env" }]
      })
      expect(answer.stopReason).toBe("end_turn")
      return lastToolResults(harness.fake())[id]
    }
    return { agent, sessionId, prompt, project }
  }

  it("read_file .env is asked as a read saying why, in ask, edits and auto; rejected, it is not read", async () => {
    const { agent, prompt, sessionId } = await session("ask")
    for (const mode of ["ask", "edits", "auto"]) {
      expect(await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: mode })).toEqual({})
      const asked = agent.permissionRequests.length
      expect(await prompt(mode), mode).toContain("denied by the user")
      const requests = agent.permissionRequests.slice(asked)
      expect(requests.map((r) => [r.toolCall.toolCallId, r.toolCall.kind])).toEqual([[mode, "read"]])
      expect(requests[0].toolCall.content).toEqual([
        {
          type: "content",
          content: { type: "text", text: "`.env` looks like it holds secrets: its content would go to the model" }
        }
      ])
      expect(requests[0].options.map((o) => [o.kind, o.name])).toEqual([
        ["allow_once", "Allow once"],
        ["allow_always", "Always allow reading .env"],
        ["reject_once", "Reject"]
      ])
    }
    const sent = JSON.stringify(harness.fake().completions().map((request) => request.body))
    expect(sent).not.toContain(MARKER)
    expect(agent.invalid()).toEqual([])
  })

  it("permissions: allow reads it without a request", async () => {
    const { agent, prompt } = await session("allow")
    expect(await prompt("allowed")).toBe(`TOKEN=${MARKER}`)
    expect(agent.permissionRequests).toEqual([])
  })
})
