// What `mm acp` kept of a model server is a first guess (src/model/chat/ServerCache.ts): a server
// restarted on the same URL with a smaller window is measured against it from the first
// answer on. Each test has a cache directory of its own (test/support/setup.ts).
import * as acp from "@agentclientprotocol/sdk"
import { afterEach, describe, expect, it } from "vitest"

import { configYaml, makeProject, removeProjects, startAgent } from "../../support/acp-agent"
import { type FakeModelServer, type Route, startFakeModelServer } from "../../support/FakeModelServer"

afterEach(removeProjects)

/** A llama-server started with `-c window`. */
const llamaRoutes = (window: number): Record<string, Route> => ({
  "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
  "GET /props": { body: { default_generation_settings: { n_ctx: window } } }
})

/** One `mm acp`: one thread, one question; the usage updates it sent. */
const askOnce = async (project: { readonly dir: string; readonly config: string }) => {
  const agent = startAgent({ cwd: project.dir, config: project.config })
  try {
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const prompt = [{ type: "text" as const, text: "hello" }]
    await agent.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt })
    expect(agent.invalid()).toEqual([])
    return agent.updates.map((n) => n.update).filter((update) => update.sessionUpdate === "usage_update")
  } finally {
    // on its own, so that what it learnt is kept
    expect(await agent.close()).toBe(0)
  }
}

describe("mm acp and a server restarted on the same URL", () => {
  it("with a smaller window: the first usage_update after the restart has the new size", async () => {
    let server: FakeModelServer = await startFakeModelServer({ routes: llamaRoutes(32768) })
    try {
      const project = makeProject(configYaml({ url: server.url }))
      server.push({ text: "one", usage: { prompt_tokens: 3000, completion_tokens: 10 } })
      expect(await askOnce(project)).toMatchObject([{ used: 3010, size: 32768 }])

      const port = server.port
      await server.close()
      server = await startFakeModelServer({ port, routes: llamaRoutes(4096) })
      server.push({ text: "two", usage: { prompt_tokens: 3000, completion_tokens: 10 } })
      expect(await askOnce(project)).toMatchObject([{ used: 3010, size: 4096 }])
    } finally {
      await server.close()
    }
  })
})
