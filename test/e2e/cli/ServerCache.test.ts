// `mm -p` sends its request before asking the server anything about itself, and what the
// server said is kept under the user's cache directory for the next run (src/model/ServerCache.ts).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

const paths = (server: FakeModelServer, from = 0) => server.requests.slice(from).map((r) => `${r.method} ${r.path}`)

/** A llama-server whose template cannot take tools: what mm learns shows in the next run's request. */
const startLlama = () =>
  startFakeModelServer({
    routes: {
      "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
      "GET /props": {
        body: { default_generation_settings: { n_ctx: 8192 }, chat_template_caps: { supports_tools: false } }
      }
    }
  })

const cacheFiles = (cacheHome: string): Array<string> => {
  const dir = path.join(cacheHome, "mm")
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((name) => name.startsWith("server-")) : []
}

describe("mm -p and what the server said of itself", () => {
  it("the request goes out first; what the server said is kept, and the next run asks nothing before its request", async () => {
    const server = await startLlama()
    try {
      const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-home-"))
      const env = { XDG_CACHE_HOME: cacheHome, MM_NO_SERVER_CACHE: undefined }
      const project = tempProject(configFor(server.url))
      server.push({ text: "first" }, { text: "second" })

      const first = await runMm(project, [], ["-p", "hello"], env)
      expect(first.stdout).toBe("first\n")
      expect(first.code).toBe(0)
      const asked = paths(server)
      // nothing was asked of the server before the question
      expect(asked[0]).toBe("POST /v1/chat/completions")
      expect(asked).toContain("GET /v1/models")
      expect(asked).toContain("GET /props")
      // nothing known of the template yet: the tools went as they are
      expect(server.completions()[0].body.tools.length).toBeGreaterThan(0)

      const [file] = cacheFiles(cacheHome)
      expect(file).toMatch(/^server-[0-9a-f]{32}\.json$/)
      expect(fs.statSync(path.join(cacheHome, "mm")).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(cacheHome, "mm", file)).mode & 0o777).toBe(0o600)

      const before = server.requests.length
      const second = await runMm(project, [], ["-p", "hello"], env)
      expect(second.stdout).toBe("second\n")
      // one request in all: the question, with the tools as text, as the cache said
      expect(paths(server, before)).toEqual(["POST /v1/chat/completions"])
      expect(server.completions()[1].body.tools).toBeUndefined()
      expect(server.completions()[1].body.messages[0].content).toContain("<tool_call>")
    } finally {
      await server.close()
    }
  })

  it("what was kept longer ago than its lifetime is asked again", async () => {
    const server = await startLlama()
    try {
      const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-home-"))
      const env = { XDG_CACHE_HOME: cacheHome, MM_NO_SERVER_CACHE: undefined }
      const project = tempProject(configFor(server.url))
      server.push({ text: "first" }, { text: "second" })
      await runMm(project, [], ["-p", "hello"], env)
      const file = path.join(cacheHome, "mm", cacheFiles(cacheHome)[0])
      const kept = JSON.parse(fs.readFileSync(file, "utf8"))
      fs.writeFileSync(file, JSON.stringify({ ...kept, savedAt: Date.now() - 11 * 60 * 1000 }))

      const before = server.requests.length
      const again = await runMm(project, [], ["-p", "hello"], env)
      expect(again.stdout).toBe("second\n")
      expect(paths(server, before)[0]).toBe("POST /v1/chat/completions")
      expect(paths(server, before)).toContain("GET /props")
      // and kept afresh
      expect(JSON.parse(fs.readFileSync(file, "utf8")).savedAt).toBeGreaterThan(Date.now() - 60 * 1000)
    } finally {
      await server.close()
    }
  })

  it("MM_NO_SERVER_CACHE keeps nothing", async () => {
    const server = await startLlama()
    try {
      const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-home-"))
      const project = tempProject(configFor(server.url))
      server.push({ text: "first" })
      const run = await runMm(project, [], ["-p", "hello"], { XDG_CACHE_HOME: cacheHome, MM_NO_SERVER_CACHE: "1" })
      expect(run.stdout).toBe("first\n")
      expect(cacheFiles(cacheHome)).toEqual([])
    } finally {
      await server.close()
    }
  })
})
