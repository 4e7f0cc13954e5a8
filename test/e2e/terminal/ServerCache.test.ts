// The terminal's banner when a run of the last minutes kept what the server said of itself
// (src/model/ServerCache.ts): it is drawn at once from what was kept, the server is asked all
// the same, and a server that says otherwise now is told above the prompt.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { type Route, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const listing: Route = { body: { data: [{ id: "fake-model", owned_by: "me" }] } }

/** A project and a cache directory of its own, the cache filled by one `mm -p`. */
const keptFrom = async (server: Awaited<ReturnType<typeof startFakeModelServer>>) => {
  const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-home-"))
  const env = { XDG_CACHE_HOME: cacheHome, MM_NO_SERVER_CACHE: undefined }
  const project = tempProject(configFor(server.url))
  server.push({ text: "kept" })
  const first = await runMm(project, [], ["-p", "hello"], env)
  expect(first.stdout).toBe("kept\n")
  expect(fs.readdirSync(path.join(cacheHome, "mm")).some((name) => name.startsWith("server-"))).toBe(true)
  return { env, project }
}

describe("the banner and what was kept of the server", () => {
  it("is drawn from what was kept, without waiting for the server's list", async () => {
    const routes: Record<string, Route> = { "GET /v1/models": listing }
    const server = await startFakeModelServer({ routes })
    try {
      const { env, project } = await keptFrom(server)
      // the list now takes longer than the banner would wait for it (1.2 s): without what was
      // kept, the banner would say the server is not answering
      routes["GET /v1/models"] = { ...listing, delayMs: 4000 }
      const { stderr, code } = await runMm(project, [], [], env)
      expect(code).toBe(0)
      expect(stderr.split("\n")[0]).toBe(`mm 0.1.0 · model fake-model at ${server.url} (answering) · 32k context`)
    } finally {
      await server.close()
    }
  })

  it("a server that no longer answers is said above the prompt once asked", async () => {
    const server = await startFakeModelServer({ routes: { "GET /v1/models": listing } })
    const { env, project } = await keptFrom(server)
    await server.close()
    const mm = new PtyMm(project, env)
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
