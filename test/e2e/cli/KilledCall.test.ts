import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, replayOf, useAgents } from "../../support/acp-agent"
import { MmProcess, onlySession, sessionFiles } from "../../support/MmProcess"
import { until } from "../../support/until"

// mm SIGKILLed while a tool call runs, or while the first answer streams: the running call is
// kept with what it printed, and `mm -p --continue` goes on with the same conversation, saying
// which question was never answered.

const harness = useAgents()

const STOPPED = "[mm stopped while this ran]"

const sessionOf = onlySession

/** `mm -p ARGS…` with stdin closed. */
const print = (dir: string, args: ReadonlyArray<string>) => {
  const mm = new MmProcess(dir, ["-p", ...args], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
  mm.child.stdin!.end()
  return mm
}

describe("a turn mm was killed during", () => {
  it(
    "keeps the running call with what it printed: in the file after the next load, and in the next request",
    async () => {
      const fake = harness.fake()
      const { dir } = makeProject(configYaml({ url: fake.url }))
      // prints a line, then waits until the test lets it go (at most 60 s if the test never does)
      const script = "echo partial-line-of-the-call; for i in $(seq 600); do [ -e let-go ] && break; sleep 0.1; done"
      fake.push({
        toolCalls: [
          { id: "call_long", name: "bash", arguments: { command: script } },
          { id: "call_next", name: "bash", arguments: { command: "echo never > never.txt" } }
        ]
      })
      const mm = print(dir, ["run the long script"])
      try {
        // the line is in the file while the call still runs: then mm is killed
        await until(
          () => sessionOf(dir)?.inProgress?.running?.output?.includes("partial-line-of-the-call") === true,
          "the running call's output in the session file",
          30_000
        )
        const running = sessionOf(dir)
        expect(running.inProgress.running.id).toBe("call_long")
        expect(running.messages.at(-1).tool_calls.map((c: any) => c.id)).toEqual(["call_long", "call_next"])
        mm.kill()
        expect(await mm.exited).toBeNull()
      } finally {
        fs.writeFileSync(path.join(dir, "let-go"), "")
      }
      const id = sessionFiles(dir)[0].slice(0, 24)

      // mm sessions show: the call as the next load will close it, the file left as it is
      const show = new MmProcess(dir, ["sessions", "show", id], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
      show.child.stdin!.end()
      expect(await show.exited).toBe(0)
      expect(show.stdout).toContain(`partial-line-of-the-call\n${STOPPED}`)
      expect(show.stdout).toContain("not run: mm stopped before this call ran")
      expect(sessionOf(dir).inProgress.running.id).toBe("call_long")

      fake.push({ text: "I see it stopped" })
      const next = print(dir, ["--resume", id, "what happened?"])
      expect(await next.exited).toBe(0)
      expect(next.stderr).toContain("the last question was interrupted: \"run the long script\"")
      // the next request: the call closed with its partial output, the one after it as never run
      const sent = fake.completions().at(-1)!.body.messages
      const results = Object.fromEntries(
        sent.filter((m: any) => m.role === "tool").map((m: any) => [m.tool_call_id, m.content])
      )
      expect(results.call_long).toBe(`partial-line-of-the-call\n${STOPPED}`)
      expect(results.call_next).toBe("not run: mm stopped before this call ran")
      expect(sent.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual([
        "run the long script",
        "what happened?"
      ])
      expect(fs.existsSync(path.join(dir, "never.txt"))).toBe(false)
      // the same conversation, its file holding the closed call
      expect(sessionFiles(dir).map((f) => f.slice(0, 24))).toEqual([id])
      const closed = sessionOf(dir)
      expect(closed.inProgress).toBeUndefined()
      expect(closed.messages.find((m: any) => m.tool_call_id === "call_long")).toEqual({
        role: "tool",
        tool_call_id: "call_long",
        content: `partial-line-of-the-call\n${STOPPED}`,
        failed: true
      })
      expect(closed.errors.at(-1)).toMatchObject({
        line: "mm stopped during this turn",
        question: "run the long script"
      })
    },
    120_000
  )

  it("killed while its first answer streams: -p --continue goes on in the same session and says so", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    fake.push({ text: ["streaming-mark ", ...Array.from({ length: 40 }, () => "more ")], chunkDelayMs: 250 })
    const first = print(dir, ["the first question\nwith a second line"])
    await first.waitFor("streaming-mark", 0, 30_000)
    first.kill()
    await first.exited
    const files = sessionFiles(dir)
    expect(files).toHaveLength(1)
    const id = files[0].slice(0, 24)

    fake.push({ text: "answered" })
    const next = print(dir, ["--continue", "--output-format", "json", "the second question"])
    expect(await next.exited).toBe(0)
    expect(next.stderr).toContain("the last question was interrupted: \"the first question\"")
    const events = next.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(events[0]).toEqual({ type: "interrupted", question: "the first question\nwith a second line" })
    expect(events.at(-1)).toMatchObject({ type: "result", status: "answered", sessionId: id })
    // no tool ran: the unanswered question left the history, as a failed one does
    const sent = fake.completions().at(-1)!.body.messages
    expect(sent.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual(["the second question"])
    expect(sessionFiles(dir)).toEqual(files)

    // answered now: the next --continue says nothing of it
    fake.push({ text: "again" })
    const third = print(dir, ["--continue", "--output-format", "json", "a third question"])
    expect(await third.exited).toBe(0)
    expect(third.stderr).not.toContain("interrupted")
    expect(third.stdout).not.toContain("\"type\":\"interrupted\"")
    expect(sessionFiles(dir)).toEqual(files)
  }, 120_000)

  it(
    "an editor's session/load replays the stopped call failed with its output; -p --continue then still names the question",
    async () => {
      const fake = harness.fake()
      const project = makeProject(configYaml({ url: fake.url }))
      const { dir } = project
      const script = "echo output-for-the-editor; for i in $(seq 600); do [ -e let-go ] && break; sleep 0.1; done"
      fake.push({ toolCalls: [{ id: "call_acp", name: "bash", arguments: { command: script } }] })
      const mm = print(dir, ["question for the editor"])
      try {
        await until(
          () => sessionOf(dir)?.inProgress?.running?.output?.includes("output-for-the-editor") === true,
          "the running call's output in the session file",
          30_000
        )
        mm.kill()
        await mm.exited
      } finally {
        fs.writeFileSync(path.join(dir, "let-go"), "")
      }
      const id = sessionFiles(dir)[0].slice(0, 24)
      const agent = harness.start({ cwd: dir, config: project.config })
      const updates = await replayOf(agent, id, dir)
      const replayed = updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_acp")
      expect(replayed).toMatchObject({ status: "failed" })
      expect(JSON.stringify(replayed.rawOutput ?? replayed.content)).toContain(`output-for-the-editor\\n${STOPPED}`)
      expect(agent.invalid()).toEqual([])
      await agent.kill()

      // the load closed the turn and nothing changed the session since: still the unanswered question
      fake.push({ text: "answered" })
      const next = print(dir, ["--continue", "--output-format", "json", "go on"])
      expect(await next.exited).toBe(0)
      expect(next.stderr).toContain("the last question was interrupted: \"question for the editor\"")
      expect(JSON.parse(next.stdout.split("\n")[0])).toEqual({
        type: "interrupted",
        question: "question for the editor"
      })
      expect(sessionFiles(dir).map((f) => f.slice(0, 24))).toEqual([id])
    },
    120_000
  )
})
