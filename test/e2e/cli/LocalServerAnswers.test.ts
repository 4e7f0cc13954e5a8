// What `mm -p` makes of answers a local server gives as it really behaves (issue 48): a long
// prompt llama-server reads for longer than the watchdog allows, a tool call written as text
// that cannot be read, and parallel calls the last of which the length limit cut.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterEach, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, type Route, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, onlySession, runMm, tempProject } from "../../support/MmProcess"

/** llama-server as it says so: `owned_by: llamacpp`, and `/props` with its window. */
const llamaRoutes: Record<string, Route> = {
  "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
  "GET /props": { body: { default_generation_settings: { n_ctx: 8192 } } }
}

let server: FakeModelServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

/** A project with a.txt, mm's config pointing at the server, sessions on. */
const project = (url: string, extra: ReadonlyArray<string> = []) => {
  const dir = tempProject([...configFor(url, ["sessions:", "  enabled: true", ...extra])], "mm-local-")
  fs.writeFileSync(path.join(dir, "a.txt"), "alpha\n")
  return dir
}

describe("mm -p against a local server", () => {
  it("a prompt llama-server reads for longer than watchdogTimeout is kept alive by its progress", async () => {
    server = await startFakeModelServer({ routes: llamaRoutes })
    // the first answer is a call, so that mm has heard the server before the long prompt goes out
    server.push(
      { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "a.txt" } }] },
      // 7 steps 300 ms apart: 2.1 s of reading, against a watchdog of 1 s
      { text: "read it all", promptProgress: { total: 4858, chunks: 7, everyMs: 300 } }
    )
    const dir = project(server.url)
    const config = path.join(dir, "agent.yaml")
    fs.writeFileSync(config, fs.readFileSync(config, "utf8").replace("watchdogTimeout: 5", "watchdogTimeout: 1"))
    const run = await runMm(dir, [], ["-p", "read a.txt"])
    expect(run.stderr).not.toContain("watchdogTimeout")
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("read it all\n")
    const [, long] = server.completions()
    expect(long.body.return_progress).toBe(true)
  }, 60_000)

  it("a tool call written as text that cannot be read is one line, recorded, and asked again", async () => {
    server = await startFakeModelServer()
    server.push({ text: "<tool_call>{bash</tool_call>" }, { text: "done" })
    const dir = project(server.url)
    const run = await runMm(dir, [], ["-p", "list the files"])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("done\n")
    const line = run.stderr.split("\n").filter((l) => l.startsWith("the model wrote a tool call that cannot be read"))
    expect(line).toEqual([
      expect.stringMatching(/: <tool_call>\{bash<\/tool_call> — it is asked to write it again$/)
    ])
    const asked = server.completions()
    expect(asked).toHaveLength(2)
    expect(asked[1].body.messages.at(-1).content).toMatch(/^\[mm\] your tool call could not be read, so it did not run/)
    const session = onlySession(dir)
    expect(session.errors).toEqual([expect.objectContaining({ kind: "generation", line: line[0] })])
    expect(JSON.stringify(session.messages)).not.toContain("\"content\":\"<tool_call>")
  }, 60_000)

  it("two complete calls run and a third the length limit cut is said, and told to the model", async () => {
    server = await startFakeModelServer()
    server.push({
      toolCalls: [
        { id: "r1", name: "read_file", arguments: { path: "a.txt" } },
        { id: "g1", name: "glob", arguments: { pattern: "*.txt" } },
        { id: "w1", name: "write_file", arguments: "{\"path\": \"b.txt\", \"content\": \"the start of a lo" }
      ],
      finishReason: "length"
    }, { text: "done" })
    const dir = project(server.url)
    const run = await runMm(dir, [], ["-p", "read, list and write"])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("done\n")
    expect(run.stderr).toContain(
      "the model's output limit cut tool call \"write_file\" before its arguments were complete (finish_reason: length)"
    )
    expect(fs.existsSync(path.join(dir, "b.txt"))).toBe(false)
    const sent = server.completions()[1].body.messages.slice(-4)
    expect(sent.map((m: { role: string; tool_call_id?: string }) => [m.role, m.tool_call_id])).toEqual([
      ["assistant", undefined],
      ["tool", "r1"],
      ["tool", "g1"],
      ["user", undefined]
    ])
    expect(sent[1].content).toContain("alpha")
    expect(sent[3].content).toMatch(/^\[mm\] your tool call "write_file" was cut by the output limit/)
    const session = onlySession(dir)
    expect(session.messages.at(-1)).toEqual({ role: "assistant", content: "done" })
  }, 60_000)
})
