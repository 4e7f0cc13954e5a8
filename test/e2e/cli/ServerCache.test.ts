// `mm -p` sends its request before asking the server anything about itself, and what the
// server said is kept under the user's cache directory for the next run (src/model/chat/ServerCache.ts).
// What was kept is a first guess: every run asks again, beside its request, and the server's
// answer replaces it at once. Each test has a cache directory of its own (test/support/setup.ts).
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, type Route, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

const paths = (server: FakeModelServer, from = 0) => server.requests.slice(from).map((r) => `${r.method} ${r.path}`)

/** This test's cache directory (test/support/setup.ts gives each test its own). */
const cacheDir = (): string => path.join(process.env.XDG_CACHE_HOME!, "mm")

/** A llama-server with `-c window`, its template taking tools or not. */
const llamaRoutes = (window: number, tools = true): Record<string, Route> => ({
  "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
  "GET /props": {
    body: { default_generation_settings: { n_ctx: window }, chat_template_caps: { supports_tools: tools } }
  }
})

/** A llama-server whose template cannot take tools: what mm learns shows in the next run's request. */
const startLlama = () => startFakeModelServer({ routes: llamaRoutes(8192, false) })

const cacheFiles = (): Array<string> =>
  fs.existsSync(cacheDir()) ? fs.readdirSync(cacheDir()).filter((name) => name.startsWith("server-")) : []

/** The one file kept, read. */
const kept = (): any => {
  const files = cacheFiles()
  expect(files).toHaveLength(1)
  return JSON.parse(fs.readFileSync(path.join(cacheDir(), files[0]), "utf8"))
}

/** The JSON objects `mm -p --output-format json` printed, of one type. */
const eventsOf = (stdout: string, type: string): Array<any> =>
  stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line)).filter((event) =>
    event.type === type
  )

/** The same server "restarted": the old one closed, a new one listening on its port, so at the same URL. */
const restart = async (server: FakeModelServer, routes: Record<string, Route>): Promise<FakeModelServer> => {
  await server.close()
  const again = await startFakeModelServer({ port: server.port, routes })
  expect(again.url).toBe(server.url)
  return again
}

describe("mm -p and what the server said of itself", () => {
  it("the request goes out first; what the server said is kept, and the next run starts from it and asks again after its request", async () => {
    const server = await startLlama()
    try {
      const project = tempProject(configFor(server.url))
      server.push({ text: "first" }, { text: "second" })

      const first = await runMm(project, [], ["-p", "hello"])
      expect(first.stdout).toBe("first\n")
      expect(first.code).toBe(0)
      const asked = paths(server)
      // nothing was asked of the server before the question
      expect(asked[0]).toBe("POST /v1/chat/completions")
      expect(asked).toContain("GET /v1/models")
      expect(asked).toContain("GET /props")
      // nothing known of the template yet: the tools went as they are
      expect(server.completions()[0].body.tools.length).toBeGreaterThan(0)

      const [file] = cacheFiles()
      expect(file).toMatch(/^server-[0-9a-f]{32}\.json$/)
      expect(fs.statSync(cacheDir()).mode & 0o777).toBe(0o700)
      expect(fs.statSync(path.join(cacheDir(), file)).mode & 0o777).toBe(0o600)
      const savedAt = kept().savedAt

      const before = server.requests.length
      const second = await runMm(project, [], ["-p", "hello"])
      expect(second.stdout).toBe("second\n")
      // the question first, with the tools as text, as the cache said; then the server is asked again
      expect(paths(server, before)).toEqual(["POST /v1/chat/completions", "GET /v1/models", "GET /props"])
      expect(server.completions()[1].body.tools).toBeUndefined()
      expect(server.completions()[1].body.messages[0].content).toContain("<tool_call>")
      // and its answer kept afresh
      expect(kept().savedAt).toBeGreaterThan(savedAt)
    } finally {
      await server.close()
    }
  })

  it("what was kept longer ago than its lifetime is asked again", async () => {
    const server = await startLlama()
    try {
      const project = tempProject(configFor(server.url))
      server.push({ text: "first" }, { text: "second" })
      await runMm(project, [], ["-p", "hello"])
      const file = path.join(cacheDir(), cacheFiles()[0])
      fs.writeFileSync(file, JSON.stringify({ ...kept(), savedAt: Date.now() - 11 * 60 * 1000 }))

      const before = server.requests.length
      const again = await runMm(project, [], ["-p", "hello"])
      expect(again.stdout).toBe("second\n")
      expect(paths(server, before)[0]).toBe("POST /v1/chat/completions")
      expect(paths(server, before)).toContain("GET /props")
      // nothing known of the template: the tools went as they are
      expect(server.completions()[1].body.tools.length).toBeGreaterThan(0)
      // and kept afresh
      expect(kept().savedAt).toBeGreaterThan(Date.now() - 60 * 1000)
    } finally {
      await server.close()
    }
  })

  it("MM_NO_SERVER_CACHE keeps nothing", async () => {
    const server = await startLlama()
    try {
      const project = tempProject(configFor(server.url))
      server.push({ text: "first" })
      const run = await runMm(project, [], ["-p", "hello"], { MM_NO_SERVER_CACHE: "1" })
      expect(run.stdout).toBe("first\n")
      expect(cacheFiles()).toEqual([])
    } finally {
      await server.close()
    }
  })
})

describe("a server restarted on the same URL", () => {
  it("with a smaller window: the first usage after the restart is of the new window, and the cache is rewritten", async () => {
    let server = await startFakeModelServer({ routes: llamaRoutes(32768) })
    try {
      const project = tempProject(configFor(server.url))
      const json = ["-p", "--output-format", "json", "hello"]
      server.push({ text: "first", usage: { prompt_tokens: 3000, completion_tokens: 10 } })
      const first = await runMm(project, [], json)
      expect(eventsOf(first.stdout, "usage")).toMatchObject([{ contextWindow: 32768 }])
      expect(kept().served.tokens).toBe(32768)

      server = await restart(server, llamaRoutes(4096))
      server.push({ text: "second", usage: { prompt_tokens: 3000, completion_tokens: 10 } })
      const second = await runMm(project, [], json)
      expect(second.code).toBe(0)
      expect(eventsOf(second.stdout, "usage")).toMatchObject([{ contextWindow: 4096 }])
      // the request went first all the same
      expect(paths(server)[0]).toBe("POST /v1/chat/completions")
      expect(kept().served.tokens).toBe(4096)

      // and the run after that starts from the new window
      server.push({ text: "third", usage: { prompt_tokens: 3000, completion_tokens: 10 } })
      const third = await runMm(project, [], json)
      expect(eventsOf(third.stdout, "usage")).toMatchObject([{ contextWindow: 4096 }])
    } finally {
      await server.close()
    }
  })

  // what the server is asked, the route that fails last
  const failures: ReadonlyArray<readonly [string, Record<string, Route>, string]> = [
    ["a 503 while it loads its model", {
      "GET /v1/models": { status: 503, body: { error: { code: 503, message: "Loading model" } } },
      "GET /props": { status: 503, body: { error: { code: 503, message: "Loading model" } } }
    }, "GET /v1/models"],
    ["a 401 before its key is set", {
      "GET /v1/models": { status: 401, body: { error: { message: "Invalid API Key" } } },
      "GET /props": { status: 401, body: { error: { message: "Invalid API Key" } } }
    }, "GET /v1/models"],
    ["a proxy's 502 on /props", {
      "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
      "GET /props": {
        status: 502,
        body: "<html><body>Bad Gateway</body></html>",
        headers: { "content-type": "text/html" }
      }
    }, "GET /props"]
  ]
  for (const [what, routes, failed] of failures) {
    it(`answering the side request with ${what}: not kept as "no window", what was kept stays`, async () => {
      let server = await startFakeModelServer({ routes: llamaRoutes(8192) })
      try {
        const project = tempProject(configFor(server.url))
        const json = ["-p", "--output-format", "json", "hello"]
        server.push({ text: "first", usage: { prompt_tokens: 100, completion_tokens: 10 } })
        await runMm(project, [], json)
        const before = kept()
        expect(before.served.tokens).toBe(8192)

        server = await restart(server, routes)
        server.push({ text: "second", usage: { prompt_tokens: 100, completion_tokens: 10 } })
        const second = await runMm(project, [], json)
        expect(second.code).toBe(0)
        // the side request was answered (with its failure) before mm ended
        expect(server.answered).toContain(failed)
        expect(eventsOf(second.stdout, "usage")).toMatchObject([{ contextWindow: 8192 }])
        expect(kept()).toEqual(before)
      } finally {
        await server.close()
      }
    })
  }
})
