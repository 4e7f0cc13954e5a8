// A sub-agent in the terminal: its question asked under its name, its answer the task's
// result, what it spent said apart on the usage line; under -p its call is refused in a line
// that names it.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { readSession, runMm, sessionFiles, stripAnsi, tempProject, withSessions } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const ALLOW = /allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /

/** Asks before bash; a generous watchdog, for a loaded machine. */
const asking = (url: string) =>
  tempProject(
    withSessions(url).map((l) =>
      l === "permissions: allow" ? "permissions: ask" : l.startsWith("watchdogTimeout") ? "watchdogTimeout: 60" : l
    )
  )

const task = {
  id: "call_task",
  name: "task",
  arguments: { description: "make a marker", prompt: "Run: touch made-by-sub" }
}

/** One SSE chunk of a chat completion. */
const sse = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** An answer held back until `gate` settles: the request is in, the answer waits. */
const heldAnswer = (text: string, gate: Promise<unknown>) => ({
  kind: "raw" as const,
  chunks: [gate, sse({ role: "assistant", content: text }), sse({}, "stop"), "data: [DONE]\n\n"]
})

/** Resolves once some session file of `project` holds `text` (a sub-agent's answer is saved when its turn ends). */
const savedSomewhere = async (project: string, text: string) => {
  for (let tries = 0; tries < 750; tries++) {
    if (sessionFiles(project).some((file) => JSON.stringify(readSession(project, file)).includes(text))) return
    await new Promise((r) => setTimeout(r, 20))
  }
  throw new Error(`no session file holds ${JSON.stringify(text)}`)
}

describe("sub-agents in the terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("asks the sub-agent's question under its name, and says what it spent apart", async () => {
    const project = asking(server.url)
    server.push(
      { toolCalls: [task], usage: { prompt_tokens: 1200, completion_tokens: 30 } },
      {
        toolCalls: [{ id: "sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }],
        usage: { prompt_tokens: 800, completion_tokens: 20 }
      },
      { text: "made-by-sub is there", usage: { prompt_tokens: 900, completion_tokens: 10 } },
      { text: "The sub-agent made it.", usage: { prompt_tokens: 1300, completion_tokens: 8 } }
    )
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    mm.type("make a marker with a sub-agent\r")
    const asked = await mm.waitForText(ALLOW)
    expect(asked).toContain("⚙ task  make a marker")
    // the question says whose call it is: the sub-agent's own lines are the task's live output
    expect(asked).toContain("⚙ general: bash  touch made-by-sub\r\n")
    mm.type("y")
    const after = await mm.waitForText(/sub-agents: [^\n]*out/)
    expect(after).toContain("The sub-agent made it.")
    expect(after).toMatch(/1\.3k in · 8 out · \d+% of [^\n]* context · sub-agents: 1\.7k in · 30 out/)
    // /context counts them apart from the window
    const mark = mm.out.length
    mm.type("/context\r")
    await mm.waitForText(
      /sub-agents: 1 run took 1\.7k in · 30 out in their own windows; only their answers are in this one/,
      mark
    )
    mm.type("\x04")
    await mm.exit()
    expect(fs.existsSync(path.join(project, "made-by-sub"))).toBe(true)
    // the parent and the sub-agent: two files
    expect(sessionFiles(project)).toHaveLength(2)
  })

  // "t" opens a follow-up line: the question is open until that line is sent too
  for (const answer of ["y", "t"] as const) {
    it(`draws what another sub-agent did only once the open question is answered (${answer})`, async () => {
      const project = asking(server.url)
      let release = () => {}
      const gate = new Promise<void>((resolve) => (release = resolve))
      // the two sub-agents ask side by side: the first request asks for bash, the second is the answer held back
      server.push(
        {
          toolCalls: [{ ...task, id: "call_a" }, {
            ...task,
            id: "call_b",
            arguments: { ...task.arguments, description: "the other" }
          }]
        },
        { toolCalls: [{ id: "sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }] },
        heldAnswer("OTHER DONE", gate),
        { text: "made-by-sub is there" },
        { text: "Both are done." }
      )
      const mm = new PtyMm(project)
      await mm.waitFor(/> /)
      mm.type("two sub-agents\r")
      await mm.waitForText(ALLOW)
      const asked = stripAnsi(mm.out).search(ALLOW)
      // the other sub-agent ends while the question waits for its key
      release()
      await savedSomewhere(project, "OTHER DONE")
      expect(stripAnsi(mm.out).slice(asked).replace(ALLOW, "")).toBe("")
      let mark = mm.out.length
      if (answer === "t") {
        mm.type("t")
        await mm.waitForText(/tell mm what to do instead: /, mark)
        // the follow-up line, and nothing under it
        expect(stripAnsi(mm.out.slice(mark)).replace(/\s+/g, " ")).toBe("t tell mm what to do instead: ")
        mark = mm.out.length
        mm.type("not now\r")
      } else mm.type("y")
      const after = await mm.waitForText(/Both are done\./, mark)
      // then its lines come, under the answer
      const answered = after.indexOf(answer === "t" ? "not now" : "y")
      expect(answered).toBeGreaterThanOrEqual(0)
      expect(after.search(/⚙ task {2}(make a marker|the other)\r\n\s*↳ OTHER DONE/)).toBeGreaterThan(answered)
      mm.type("\x04")
      await mm.exit()
      expect(fs.existsSync(path.join(project, "made-by-sub"))).toBe(answer === "y")
    })
  }

  it("Ctrl-C at a sub-agent's question, with another one's lines waiting, cancels the turn; the next is drawn", async () => {
    const project = asking(server.url)
    let release = () => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    server.push(
      {
        toolCalls: [{ ...task, id: "call_a" }, {
          ...task,
          id: "call_b",
          arguments: { ...task.arguments, description: "the other" }
        }]
      },
      { toolCalls: [{ id: "sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }] },
      heldAnswer("OTHER DONE", gate)
    )
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)
    mm.type("two sub-agents\r")
    await mm.waitForText(ALLOW)
    release()
    await savedSomewhere(project, "OTHER DONE")
    const mark = mm.out.length
    mm.type("\x03")
    await mm.waitForText(/cancelled[^]*> /, mark)
    // the question no longer holds the screen: the next turn is drawn
    server.push({ text: "still here" })
    mm.type("again\r")
    await mm.waitForText(/still here/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.existsSync(path.join(project, "made-by-sub"))).toBe(false)
  })

  it("under -p, a sub-agent's call that needs approval is refused in a line naming it", async () => {
    const project = asking(server.url)
    server.push(
      { toolCalls: [task] },
      { toolCalls: [{ id: "sub_bash", name: "bash", arguments: { command: "touch made-by-sub" } }] },
      { text: "I could not run it" },
      { text: "It was refused." }
    )
    const run = await runMm(project, [], ["-p", "make a marker with a sub-agent"])
    expect(stripAnsi(run.stderr)).toContain("general: bash  touch made-by-sub: not approved")
    expect(run.stdout).toContain("It was refused.")
    expect(fs.existsSync(path.join(project, "made-by-sub"))).toBe(false)
  })
})
