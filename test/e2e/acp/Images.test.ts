// Images from an editor: advertised when the model can see, sent as `image_url` parts, told
// again on session/load; a model that cannot see gets a note, and the editor's thread a line.
import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, textOf, useAgents } from "../../support/acp-agent"

const harness = useAgents()

const PNG_DATA = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const project = (vision: boolean | undefined) =>
  makeProject(
    configYaml({ url: harness.fake().url }).replace(
      "  name: fake-model\n",
      vision === undefined ? "  name: fake-model\n" : `  name: fake-model\n  vision: ${vision}\n`
    )
  )

const image: acp.ContentBlock = { type: "image", data: PNG_DATA, mimeType: "image/png", uri: "file:///tmp/shot.png" }

describe("mm acp: images", () => {
  it("a model that can see: image offered, sent as image_url, and told again on load", async () => {
    const { dir, config } = project(true)
    harness.fake().push({ text: "One pixel." })
    const first = harness.start({ cwd: dir, config })
    const init = await first.initialize()
    expect(init.agentCapabilities?.promptCapabilities).toEqual({ embeddedContext: true, image: true })
    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] })
    const answer = await first.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "what is this?" }, image]
    })
    expect(answer.stopReason).toBe("end_turn")
    expect(harness.fake().completions()[0].body.messages.at(-1).content).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_DATA}` } }
    ])
    await first.kill()

    const second = harness.start({ cwd: dir, config })
    await second.initialize()
    await second.agent.request(acp.methods.agent.session.load, { sessionId, cwd: dir, mcpServers: [] })
    const told = second.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update)
    expect(told).toContainEqual({
      sessionUpdate: "user_message_chunk",
      content: { type: "image", data: PNG_DATA, mimeType: "image/png" }
    })
    expect(second.invalid()).toEqual([])
  })

  it("a model that cannot see: not offered; the thread is told in a line, the model reads a note", async () => {
    const { dir, config } = project(undefined)
    harness.fake().push({ text: "I cannot see images." })
    const agent = harness.start({ cwd: dir, config })
    const init = await agent.initialize()
    expect(init.agentCapabilities?.promptCapabilities).toEqual({ embeddedContext: true, image: false })
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: dir, mcpServers: [] })
    await agent.agent.request(acp.methods.agent.session.prompt, {
      sessionId,
      prompt: [{ type: "text", text: "what is this?" }, image]
    })
    expect(textOf(agent.updates.filter((n) => n.sessionId === sessionId), "agent_message_chunk")).toContain(
      "/tmp/shot.png: not sent — fake-model cannot see images (set model.vision: true in agent.yaml if it can)"
    )
    expect(harness.fake().completions()[0].body.messages.at(-1).content).toBe(
      "what is this?\n\n[an image (/tmp/shot.png) attached by the user could not be shown to you: this model cannot see images]"
    )
    expect(agent.invalid()).toEqual([])
  })
})
