// The window a local server serves, as mm shows it after the server loaded its model
// (`503 Loading model`) or was restarted with another `-c` between two turns
// (src/model/chat/ServerWatch.ts). Each test has a cache directory of its own (test/support/setup.ts).
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, type Route, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"
import { until } from "../../support/until"

/** A llama-server started with `-c window`. */
const llamaRoutes = (window: number): Record<string, Route> => ({
  "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
  "GET /props": { body: { default_generation_settings: { n_ctx: window } } }
})

/** The JSON objects `mm -p --output-format json` printed, of one type. */
const eventsOf = (stdout: string, type: string): Array<any> =>
  stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line)).filter((event) =>
    event.type === type
  )

/** What this test's cache kept of the server (the one file). */
const kept = (): any => {
  const dir = path.join(process.env.XDG_CACHE_HOME!, "mm")
  const files = fs.readdirSync(dir).filter((name) => name.startsWith("server-"))
  expect(files).toHaveLength(1)
  return JSON.parse(fs.readFileSync(path.join(dir, files[0]), "utf8"))
}

describe("mm -p against a server loading its model", () => {
  it("a short load: the usage is of the window the server serves once loaded, and that is kept", async () => {
    const server = await startFakeModelServer({ loading: true, routes: llamaRoutes(4096) })
    try {
      // the server asks to be tried again shortly (mm's own wait for the model list is longer)
      server.setLoading(true, { "retry-after": "0.2" })
      const project = tempProject(configFor(server.url))
      server.push({ text: "loaded", usage: { prompt_tokens: 1000, completion_tokens: 10 } })
      const running = runMm(project, [], ["-p", "--output-format", "json", "hello"])
      // the request and the question about the server both land inside the load
      await until(
        () =>
          server.refusedLoading.includes("POST /v1/chat/completions") &&
          server.refusedLoading.includes("GET /v1/models"),
        "the request and the model list refused while loading"
      )
      server.setLoading(false)
      const run = await running
      expect(run.code).toBe(0)
      expect(eventsOf(run.stdout, "usage")).toMatchObject([{ contextWindow: 4096 }])
      expect(kept().served.tokens).toBe(4096)
    } finally {
      await server.close()
    }
  })
})

describe("the terminal, a server restarted between turns with a smaller -c", () => {
  it("the answer after the restart, /context and what is kept are of the new window", async () => {
    let server: FakeModelServer = await startFakeModelServer({ routes: llamaRoutes(8192) })
    const project = tempProject(configFor(server.url))
    const mm = new PtyMm(project)
    try {
      await mm.waitForText(/model fake-model at/)
      server.push({ text: "first answer", usage: { prompt_tokens: 1000, completion_tokens: 10 } })
      mm.type("one\r")
      await mm.waitForText(/1k in · 10 out · 12% of 8k context/)
      // stopped: the next question finds nobody
      const port = server.port
      await server.close()
      mm.type("two\r")
      await mm.waitForText(/cannot reach/)
      // and started again with -c 4096
      server = await startFakeModelServer({ port, routes: llamaRoutes(4096) })
      server.push({ text: "third answer", usage: { prompt_tokens: 1000, completion_tokens: 10 } })
      const from = mm.out.length
      mm.type("three\r")
      await mm.waitForText(/1k in · 10 out · 25% of 4k context/, from)
      mm.type("/context\r")
      await mm.waitForText(/context: about [\d.k]+ of 4k tokens/, from)
      expect(server.answered.filter((route) => route === "GET /props")).toHaveLength(1)
      expect(kept().served.tokens).toBe(4096)
      mm.type("\u0004")
      expect(await mm.exit()).toBe(0)
    } finally {
      mm.child.kill("SIGKILL")
      await server.close()
    }
  })
})
