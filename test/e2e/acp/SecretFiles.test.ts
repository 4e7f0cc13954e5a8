// mm acp and files that look secret (issue 43): read_file .env inside the project is a
// permission request of kind read whose content says why, in the modes that let reads through;
// rejected, nothing of the file reaches the model. A selection of it in the prompt is read only
// after a permission request of its own is allowed. Under allow, no request, and the selection is read.
import * as fs from "node:fs"
import * as path from "node:path"
import { pathToFileURL } from "node:url"

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
    // the model's calls are rejected; a selection's own request is answered with `selection.answer`
    const selection = { answer: "skip-selection" }
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: (params) => ({
        outcome: {
          outcome: "selected",
          optionId: params.toolCall.toolCallId.startsWith("mm-selection-") ? selection.answer : "reject"
        }
      })
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
    /** A prompt mentioning the first line of .env, as an editor links a selection. */
    const mention = async () => {
      harness.fake().push({ text: "seen" })
      const link = `${pathToFileURL(path.join(project.dir, ".env")).href}#L1-1`
      const answer = await agent.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: "what is this" }, { type: "resource_link", uri: link, name: ".env" }]
      })
      expect(answer.stopReason).toBe("end_turn")
      return JSON.stringify(harness.fake().completions().at(-1)?.body)
    }
    return { agent, sessionId, prompt, mention, project, selection }
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

  it("a selection of .env in the prompt is asked as a read of its own: left out, the model and the editor are told why", async () => {
    const { agent, mention, selection } = await session("ask")
    const sent = await mention()
    const line = "`.env` looks like it holds secrets: its lines were not read"
    expect(sent).not.toContain(MARKER)
    expect(sent).toContain(JSON.stringify(line).slice(1, -1))
    expect(
      agent.updates.some((n) =>
        n.update.sessionUpdate === "agent_message_chunk" && n.update.content.type === "text" &&
        n.update.content.text.includes(line)
      )
    ).toBe(true)
    expect(agent.permissionRequests).toHaveLength(1)
    const [request] = agent.permissionRequests
    expect([request.toolCall.title, request.toolCall.kind]).toEqual(["Read .env:1 (your selection)", "read"])
    expect(request.options.map((o) => [o.kind, o.name])).toEqual([
      ["allow_once", "Read the selected lines"],
      ["reject_once", "Leave them out"]
    ])
    // allowed, the lines are read, for that selection only: the next one is asked again
    selection.answer = "read-selection"
    expect(await mention()).toContain(MARKER)
    expect(agent.permissionRequests).toHaveLength(2)
    expect(agent.invalid()).toEqual([])
  })

  it("permissions: allow reads it without a request, and a selection of it too", async () => {
    const { agent, mention, prompt } = await session("allow")
    expect(await prompt("allowed")).toBe(`TOKEN=${MARKER}`)
    expect(await mention()).toContain(MARKER)
    expect(agent.permissionRequests).toEqual([])
  })
})
