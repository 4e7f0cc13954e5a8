import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, stripAnsi, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

describe("progress on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a slow first token shows a status line with the seconds counting; it is erased when text arrives", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    server.push({ text: ["", "late text"], chunkDelayMs: 1300 })
    const mark = mm.out.length
    mm.type("take your time\r")
    await mm.waitFor(/waiting for fake-model · 0 s · Esc to cancel/, mark)
    await mm.waitFor(/waiting for fake-model · 2 s · Esc to cancel/, mark)
    await mm.waitFor(/late text/, mark)
    const screen = mm.out.slice(mark)
    const text = screen.indexOf("late text")
    const lastStatus = screen.lastIndexOf("waiting for")
    expect(lastStatus).toBeLessThan(text)
    // erased (back to the line start, cleared to the end of the screen) before the text is written
    expect(screen.slice(lastStatus, text)).toContain("\u001b[K\u001b[C\u001b[J")
    await mm.waitFor(/late text[^]*> /, mark)
    expect(screen.slice(text)).not.toContain("waiting for")
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("a long bash shows its latest lines live, replaced by the result line; /last prints its whole output", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    server.push(
      {
        toolCalls: [{
          name: "bash",
          arguments: { command: "for i in 1 2 3 4 5 6 7; do echo step-$i; sleep 0.3; done" }
        }]
      },
      { text: "all steps ran" }
    )
    const mark = mm.out.length
    mm.type("run the steps\r")
    await mm.waitFor(/step-2/, mark)
    expect(mm.out.slice(mark)).not.toContain("exit code 0")
    expect(mm.out.slice(mark)).toMatch(/running bash · \d s · Esc to cancel/)
    await mm.waitFor(/all steps ran/, mark)
    const screen = mm.out.slice(mark)
    // the live block is erased before the result line
    const result = screen.indexOf("↳ exit code 0 · step-1")
    expect(result).toBeGreaterThan(screen.lastIndexOf("step-7"))
    expect(screen.slice(screen.lastIndexOf("running bash"), result)).toContain("\r\u001b[")
    const after = mm.out.length
    mm.type("/last\r")
    await mm.waitFor(/step-7/, after)
    expect(stripAnsi(mm.out.slice(after))).toMatch(
      /⚙ bash {2}for i in[^\n]*\r?\nexit code 0\r?\nstep-1\r?\nstep-2[^]*step-7/
    )
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("nothing of it goes to a pipe", async () => {
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "echo piped-out; sleep 0.5" } }], chunkDelayMs: 1100 },
      { text: "done" }
    )
    const run = await runMm(tempProject(configFor(server.url)), ["go"])
    expect(run.stdout + run.stderr).not.toMatch(/waiting for|running bash|Esc to cancel|\u001b\[J/)
    expect(run.stdout).toContain("done")
  })
})

describe("llama-server reading a long prompt, on a terminal", () => {
  it("the status line says how far it has read, and the answer follows it", async () => {
    const server = await startFakeModelServer({
      routes: {
        "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
        "GET /props": { body: { default_generation_settings: { n_ctx: 8192 } } }
      }
    })
    try {
      const mm = new PtyMm(tempProject(configFor(server.url)))
      // the banner has heard the server: it is llama-server
      await mm.waitFor(/8k context[^]*> /)
      server.push({ text: "read it all", promptProgress: { total: 4858, chunks: 7, everyMs: 300 } })
      const mark = mm.out.length
      mm.type("a long question\r")
      await mm.waitFor(/waiting for fake-model · reading the prompt [\d,]+\/4,858 · \d s · Esc to cancel/, mark)
      await mm.waitFor(/read it all/, mark)
      const screen = mm.out.slice(mark)
      expect(screen.lastIndexOf("reading the prompt")).toBeLessThan(screen.indexOf("read it all"))
      expect(server.completions().at(-1)?.body.return_progress).toBe(true)
      mm.type("\x04")
      expect(await mm.exit()).toBe(0)
    } finally {
      await server.close()
    }
  })
})
