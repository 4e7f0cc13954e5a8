// The terminal in front of servers as they are: the window in the banner, a missing model,
// the Ollama warning, usage lines, /context, retries and Ctrl-C during a retry's wait.
//
// These are also the tests of mm without the server cache: every mm here runs with
// MM_NO_SERVER_CACHE=1 (the other tests run with it on, test/support/setup.ts), so it keeps and
// reads nothing, and each banner waits its moment for the server.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterEach, describe, expect, it } from "@effect/vitest"

import { type Route, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MmProcess, runMm, tempProject } from "../../support/MmProcess"
import { SERVER_FIXTURES } from "../../support/paths"

process.env.MM_NO_SERVER_CACHE = "1"

// nothing was kept of any server in this test's cache directory
afterEach(() => {
  const dir = path.join(process.env.XDG_CACHE_HOME!, "mm")
  expect(fs.readdirSync(dir).filter((name) => name.startsWith("server-"))).toEqual([])
})

const fixture = (server: string, file: string) =>
  JSON.parse(fs.readFileSync(path.join(SERVER_FIXTURES, server, file), "utf8"))

const withServer = async <A>(
  options: Parameters<typeof startFakeModelServer>[0],
  use: (server: Awaited<ReturnType<typeof startFakeModelServer>>) => Promise<A>
) => {
  const server = await startFakeModelServer(options)
  try {
    return await use(server)
  } finally {
    await server.close()
  }
}

const withModel = (url: string, name: string, extra: ReadonlyArray<string> = []) =>
  configFor(url, extra).map((line) => (line === "  name: fake-model" ? `  name: ${name}` : line))

describe("the terminal and the model server", () => {
  it("vLLM's max_model_len is the banner's window; a dim usage line follows each answer; /context lists the parts", () =>
    withServer({ routes: { "GET /v1/models": { body: fixture("vllm", "models.json") } } }, async (server) => {
      const project = tempProject(withModel(server.url, "Qwen/Qwen2.5-Coder-7B-Instruct"))
      server.push({ text: "hello there", usage: { prompt_tokens: 1200, completion_tokens: 340 } }, { text: "again" })
      const { stdout, stderr, code } = await runMm(project, ["hi", "and again", "/context"])
      // piped, answers are on stdout and the banner and usage lines on stderr: each is read on its own
      // (the two pipes' data interleave in any order)
      const lines = stdout.split("\n")
      expect(stderr.split("\n")[0]).toBe(
        `mm 0.1.0 · model Qwen/Qwen2.5-Coder-7B-Instruct at ${server.url} (answering) · 16k context`
      )
      expect(stdout).toContain("hello there\n")
      expect(stderr).toMatch(/^1\.2k in · 340 out · 9% of 16k context$/m)
      // no usage from the server: estimated, and marked so
      expect(stdout).toContain("again\n")
      expect(stderr).toMatch(/^~\d+ in · ~\d+ out · ~\d+% of 16k context$/m)
      const context = lines.slice(lines.findIndex((l) => l.startsWith("context: about")))
      expect(context[0]).toMatch(/^context: about [\d.]+k? of 16k tokens \(\d+%\), estimated at 4 characters a token$/)
      // each part's tokens, then its share of the whole
      expect(context.slice(1, 8).map((l) => l.trim().replace(/\s+\S+\s+\d+%$/, ""))).toEqual([
        "system prompt",
        "instructions (0 files)",
        "skills (0)",
        "environment",
        "tool definitions",
        "messages (4)",
        "tool results (0)"
      ])
      expect(context[2]).toMatch(/ 0 +0%$/)
      expect(context[4]).toMatch(/ \d+ +\d+%$/)
      expect(context[8]).toBe("  the server counted 1.5k for the last answer (question, history and answer)")
      expect(code).toBe(0)
    }))

  it("a model the server does not list: the banner names the ones it has, and so does the first red line", () =>
    withServer(
      {
        models: ["a", "b", "c"],
        steps: [{ kind: "status", status: 404, body: { error: { message: "model 'fake-model' not found" } } }]
      },
      async (server) => {
        const { all: stdout } = await runMm(tempProject(configFor(server.url)), ["hello?"])
        const lines = stdout.split("\n")
        expect(lines[0]).toBe(
          `mm 0.1.0 · model fake-model at ${server.url} (answering, but has no model fake-model — available: a, b, c) · 32k context`
        )
        expect(stdout).toContain(
          `model "fake-model" is not available on ${server.url} — available: a, b, c — check model.name\n`
        )
      }
    ))

  it("an Ollama serving 4096 tokens: one yellow line with the fix, and usage measured against 4096", () =>
    withServer(
      {
        ollama: true,
        routes: {
          "POST /api/show": { body: fixture("ollama", "api-show.json") },
          "GET /api/ps": { body: { models: [] } }
        } satisfies Record<string, Route>
      },
      async (server) => {
        server.push({ text: "one", usage: { prompt_tokens: 1000, completion_tokens: 24 } }, {
          text: "two",
          usage: { prompt_tokens: 1100, completion_tokens: 24 }
        })
        const { all: stdout, stderr } = await runMm(tempProject(configFor(server.url)), ["first", "second"])
        const warning =
          "ollama serves fake-model with 4096 tokens of context — set OLLAMA_CONTEXT_LENGTH=32768 and restart ollama"
        // piped, notices and usage lines are on stderr
        expect(stderr.split("\n").filter((line) => line === warning)).toHaveLength(1)
        expect(stdout).toContain("1k in · 24 out · 25% of 4k context")
        expect(stdout).toContain("1.1k in · 24 out · 27% of 4k context")
      }
    ))

  it("a busy server: a notice per wait, then the answer", () =>
    withServer({}, async (server) => {
      const busy = {
        kind: "status" as const,
        status: 429,
        body: { error: { message: "slow down" } },
        headers: { "retry-after": "1" }
      }
      server.push(busy, busy, { text: "finally" })
      const { stdout, stderr, code } = await runMm(tempProject(configFor(server.url)), ["hello?"])
      const all = stdout + stderr
      expect(all.split("\n").filter((line) => line === "server busy (429) — retrying in 1 s")).toHaveLength(2)
      expect(stdout).toContain("finally")
      expect(code).toBe(0)
      expect(server.completions()).toHaveLength(3)
    }))

  it("Ctrl-C during a retry's wait cancels the turn at once; the next question is asked", () =>
    withServer({}, async (server) => {
      server.push({
        kind: "status",
        status: 503,
        body: { error: { message: "overloaded" } },
        headers: { "retry-after": "30" }
      }, { text: "next answer" })
      const mm = new MmProcess(tempProject(configFor(server.url)))
      mm.send("hello?")
      await mm.waitFor(/retrying in 30 s/, 0, undefined, "all")
      mm.child.kill("SIGINT")
      await mm.waitFor(/cancelled/, 0, undefined, "all")
      mm.send("and now?")
      await mm.waitFor(/next answer/, 0, undefined, "all")
      expect(await mm.end()).toBe(0)
      expect(server.completions()).toHaveLength(2)
      expect(mm.all).not.toContain("overloaded")
    }))

  it("a server slow to answer /props: the banner does not wait for it", () =>
    withServer(
      {
        routes: {
          "GET /v1/models": { body: fixture("llama.cpp", "models.json") },
          "GET /props": { body: fixture("llama.cpp", "props.json"), delayMs: 2000 }
        }
      },
      async (server) => {
        const mm = new MmProcess(tempProject(configFor(server.url)))
        await mm.waitFor(/^sessions: /m, 0, undefined, "all")
        expect(server.answered).not.toContain("GET /props")
        expect(mm.stderr.split("\n")[0]).toBe(`mm 0.1.0 · model fake-model at ${server.url} (answering) · 32k context`)
        expect(await mm.end()).toBe(0)
      }
    ))

  it("llama-server's /props is waited for: the banner says the 512 it serves, not 32k", () =>
    withServer(
      {
        routes: {
          "GET /v1/models": { body: fixture("llama.cpp", "models.json") },
          "GET /props": { body: fixture("llama.cpp", "props.json") }
        }
      },
      async (server) => {
        const { stderr } = await runMm(tempProject(configFor(server.url)), [])
        expect(stderr.split("\n")[0]).toBe(`mm 0.1.0 · model fake-model at ${server.url} (answering) · 512 context`)
      }
    ))

  it("a server still loading its model: the banner says so and guesses no window", () =>
    withServer(
      { routes: { "GET /v1/models": { status: 503, body: fixture("llama.cpp", "loading.json").body } } },
      async (server) => {
        const { stderr } = await runMm(tempProject(configFor(server.url)), [])
        expect(stderr.split("\n")[0]).toBe(`mm 0.1.0 · model fake-model at ${server.url} (loading its model)`)
      }
    ))

  it("a web page at model.url: never `answering`, and the line says what it is", () =>
    withServer(
      {
        routes: {
          "GET /v1/models": {
            body: "<!doctype html><html><body>Welcome</body></html>",
            headers: { "content-type": "text/html" }
          }
        },
        steps: [{
          kind: "status",
          status: 404,
          body: "<html><body>Not Found</body></html>",
          headers: { "content-type": "text/html" }
        }]
      },
      async (server) => {
        const { stderr, code } = await runMm(tempProject(configFor(server.url)), ["hello"])
        const line = `${server.url} does not look like an OpenAI-compatible server (got text/html)`
        expect(stderr.split("\n")[0]).toBe(
          `mm 0.1.0 · model fake-model at ${server.url} (not an OpenAI-compatible server) · 32k context`
        )
        // said once after the banner, and once as the failed question's red line
        expect(stderr.split("\n").filter((l) => l.startsWith(line))).toHaveLength(2)
        expect(stderr).not.toContain("Not Found")
        expect(stderr).not.toContain("(answering)")
        expect(code).toBe(1)
      }
    ))

  describe("a llama-server that cannot take tools: one line with the fix, and the tools as text", () => {
    const call = "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>"
    const answeredThroughText = async (
      server: Awaited<ReturnType<typeof startFakeModelServer>>,
      hint: RegExp
    ) => {
      const project = tempProject(configFor(server.url))
      fs.writeFileSync(path.join(project, "a.txt"), "the secret word is plum\n")
      const { stdout, stderr, code } = await runMm(project, ["what is in a.txt?"])
      expect(stderr.split("\n").filter((line) => hint.test(line))).toHaveLength(1)
      expect(stdout).toContain("The word is plum.")
      expect(code).toBe(0)
      const asked = server.completions().filter((r) => r.body.tools === undefined)
      // the tool's result went back as text, in the Hermes form the model was told
      const last = asked.at(-1)?.body.messages.at(-1)
      expect(last).toMatchObject({ role: "user" })
      expect(last.content).toContain("<tool_response>")
      expect(last.content).toContain("the secret word is plum")
      expect(asked[0].body.messages[0].content).toContain("- read_file: ")
    }

    it("/props says chat_template_caps.supports_tools: false", () =>
      withServer(
        {
          routes: {
            "GET /v1/models": { body: fixture("llama.cpp", "models.json") },
            "GET /props": { body: fixture("llama.cpp", "props-no-tools.json") }
          },
          steps: [{ text: call }, { text: "The word is plum." }]
        },
        async (server) => {
          await answeredThroughText(
            server,
            /^the server's chat template cannot take tools .* start llama-server with --jinja/
          )
          expect(server.completions()).toHaveLength(2)
        }
      ))

    it("the server answers `500 tools param requires --jinja flag`", () =>
      withServer(
        {
          routes: { "GET /v1/models": { body: fixture("llama.cpp", "models.json") } },
          steps: [
            { kind: "status", status: 500, body: fixture("llama.cpp", "no-jinja.json").body },
            { text: call },
            { text: "The word is plum." }
          ]
        },
        async (server) => {
          await answeredThroughText(
            server,
            /^the model server refuses the tools parameter .* start llama-server with --jinja/
          )
          expect(server.completions()).toHaveLength(3)
          expect(server.completions()[0].body.tools).toBeDefined()
        }
      ))
  })
})
