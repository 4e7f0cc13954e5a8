// The terminal's banner when a run of the last minutes kept what the server said of itself
// (src/model/chat/ServerCache.ts): it is drawn at once from what was kept, the server is asked all
// the same, a server that says otherwise now is told above the prompt, and the window it serves
// now is the one in force. Each test has a cache directory of its own (test/support/setup.ts).
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, type Route, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const listing: Route = { body: { data: [{ id: "fake-model", owned_by: "me" }] } }

/** A llama-server started with `-c window`. */
const llamaRoutes = (window: number): Record<string, Route> => ({
  "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
  "GET /props": { body: { default_generation_settings: { n_ctx: window } } }
})

/** A project, and this test's cache filled by one `mm -p`. */
const keptFrom = async (server: FakeModelServer, extra: ReadonlyArray<string> = []) => {
  const project = tempProject(configFor(server.url, extra))
  server.push({ text: "kept" })
  const first = await runMm(project, [], ["-p", "hello"])
  expect(first.stdout).toBe("kept\n")
  const dir = path.join(process.env.XDG_CACHE_HOME!, "mm")
  expect(fs.readdirSync(dir).some((name) => name.startsWith("server-"))).toBe(true)
  return project
}

/** The same server "restarted": the old one closed, a new one listening on its port, so at the same URL. */
const restart = async (server: FakeModelServer, routes: Record<string, Route>): Promise<FakeModelServer> => {
  await server.close()
  const again = await startFakeModelServer({ port: server.port, routes })
  expect(again.url).toBe(server.url)
  return again
}

describe("the banner and what was kept of the server", () => {
  it("is drawn from what was kept, without waiting for the server's list", async () => {
    const routes: Record<string, Route> = { "GET /v1/models": listing }
    const server = await startFakeModelServer({ routes })
    try {
      const project = await keptFrom(server)
      // the list now takes longer than the banner would wait for it (1.2 s): without what was
      // kept, the banner would say the server is not answering
      routes["GET /v1/models"] = { ...listing, delayMs: 4000 }
      const { code, stderr } = await runMm(project, [], [])
      expect(code).toBe(0)
      expect(stderr.split("\n")[0]).toBe(`mm 0.1.0 · model fake-model at ${server.url} (answering) · 32k context`)
    } finally {
      await server.close()
    }
  })

  it("a server that no longer answers is said above the prompt once asked", async () => {
    const server = await startFakeModelServer({ routes: { "GET /v1/models": listing } })
    const project = await keptFrom(server)
    await server.close()
    const mm = new PtyMm(project)
    try {
      await mm.waitForText(/\(answering\)/)
      const screen = await mm.waitForText(new RegExp(`model fake-model at ${server.url} \\(not answering\\)`))
      // said once, after the banner, with the prompt drawn again under it
      expect(screen.match(/\(not answering\)/g)).toHaveLength(1)
      expect(screen.indexOf("(answering)")).toBeLessThan(screen.indexOf("(not answering)"))
      mm.type("\u0004")
      expect(await mm.exit()).toBe(0)
    } finally {
      mm.child.kill("SIGKILL")
    }
  })
})

describe("a server restarted on the same URL with a smaller window", () => {
  it("the first usage line, /context and automatic compaction are of the new window", async () => {
    let server = await startFakeModelServer({ routes: llamaRoutes(32768) })
    try {
      const project = await keptFrom(server, ["compaction:", "  keepTurns: 0"])
      server = await restart(server, llamaRoutes(4096))
      server.push(
        { text: "a1", usage: { prompt_tokens: 3300, completion_tokens: 100 } },
        { text: "the summary" },
        { text: "a2" }
      )
      const run = await runMm(project, ["q1", "/context", "q2"])
      expect(run.code).toBe(0)
      // the banner is drawn at once from what was kept (the server is asked after it)
      expect(run.stderr.split("\n")[0]).toMatch(/\(answering\) · 32k context$/)
      expect(run.all).toContain("3.3k in · 100 out · 83% of 4k context")
      expect(run.all).toMatch(/context: about [\d.k]+ of 4k tokens/)
      // 3,400 tokens and the question are over 0.8 of 4,096 (not of 32,768)
      expect(run.all).toContain(
        "history compacted: 2 older message(s) replaced by a summary (about 3401 tokens, over 3276)"
      )
      // the question, the summary, the next question on the summary
      const asked = server.completions()
      expect(asked).toHaveLength(3)
      expect(asked[2].body.messages.map((message: any) => message.content)).not.toContain("q1")
    } finally {
      await server.close()
    }
  })

  it("at the prompt, the new window is said under the banner that showed the old one", async () => {
    let server = await startFakeModelServer({ routes: llamaRoutes(32768) })
    try {
      const project = await keptFrom(server)
      server = await restart(server, llamaRoutes(4096))
      const mm = new PtyMm(project)
      try {
        await mm.waitForText(/\(answering\) · 32k context/)
        await mm.waitForText(
          new RegExp(`model fake-model at ${server.url} serves 4k context now \\(32k was kept from a run before\\)`)
        )
        mm.type("\u0004")
        expect(await mm.exit()).toBe(0)
      } finally {
        mm.child.kill("SIGKILL")
      }
    } finally {
      await server.close()
    }
  })
})
