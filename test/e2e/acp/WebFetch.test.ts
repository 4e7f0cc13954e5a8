// web_fetch under mm acp: the call is a `fetch` tool call titled with its URL, the permission
// request offers the host as its "always" answer, and that answer covers the next page of the
// host without another request.
import * as http from "node:http"
import type { AddressInfo } from "node:net"

import * as acp from "@agentclientprotocol/sdk"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"

const harness = useAgents()

describe("mm acp: web_fetch", () => {
  let pages: http.Server
  let pagesUrl = ""
  beforeAll(async () => {
    pages = http.createServer((request, response) => {
      response.writeHead(200, { "content-type": "text/plain" }).end(`page ${request.url}`)
    })
    await new Promise<void>((resolve) => pages.listen(0, "127.0.0.1", resolve))
    pagesUrl = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    pages.closeAllConnections()
    await new Promise((resolve) => pages.close(resolve))
  })

  it("is a fetch titled by its URL, asked once for its host", async () => {
    const project = makeProject(configYaml({
      url: harness.fake().url,
      permissions: "ask",
      extra: "webFetch:\n  enabled: true\n  allowPrivate: [127.0.0.1]"
    }))
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "allow-always" } })
    })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    harness.fake().push(
      { toolCalls: [{ id: "f1", name: "web_fetch", arguments: { url: `${pagesUrl}/a` } }] },
      { toolCalls: [{ id: "f2", name: "web_fetch", arguments: { url: `${pagesUrl}/b` } }] },
      { text: "done" }
    )
    await agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text: "go" }] })

    expect(agent.permissionRequests).toHaveLength(1)
    const [request] = agent.permissionRequests
    expect(request.toolCall).toMatchObject({ toolCallId: "f1", kind: "fetch", title: `${pagesUrl}/a` })
    expect(request.options.map((option) => [option.optionId, option.name])).toEqual([
      ["allow-once", "Allow once"],
      ["allow-always", "Always allow fetching from 127.0.0.1"],
      ["reject", "Reject"]
    ])
    const started = agent.updates.flatMap(({ update }) => (update.sessionUpdate === "tool_call" ? [update] : []))
    expect(started.map((update) => [update.toolCallId, update.kind, update.title])).toEqual([
      ["f1", "fetch", `${pagesUrl}/a`],
      ["f2", "fetch", `${pagesUrl}/b`]
    ])
    const results = harness.fake().completions().at(-1)!.body.messages.filter((m: { role: string }) =>
      m.role === "tool"
    )
    expect(results.map((m: { content: string }) => m.content)).toEqual([
      `200 OK ${pagesUrl}/a (text/plain, 7 B)\npage /a`,
      `200 OK ${pagesUrl}/b (text/plain, 7 B)\npage /b`
    ])
    expect(agent.invalid()).toEqual([])
    await agent.kill()
  })
})
