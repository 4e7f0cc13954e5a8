import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, useAgents } from "../../support/acp-agent"
import { MmProcess, onlySession, runMm, sessionFiles } from "../../support/MmProcess"
import { until } from "../../support/until"

// Breaking pass of issue 45: a turn that another mm is still running is not an interrupted
// turn. Opening the session elsewhere (`mm -p --continue`, `--resume`) refuses it in one line
// and writes nothing; the first mm's turn ends in the same file, with no error recorded.

const harness = useAgents()

const sessionOf = onlySession

const mmIn = (dir: string, args: ReadonlyArray<string>) => {
  const mm = new MmProcess(dir, args, { AGENT_CONFIG: path.join(dir, "agent.yaml") })
  mm.child.stdin!.end()
  return mm
}

const print = (dir: string, args: ReadonlyArray<string>) => mmIn(dir, ["-p", ...args])

describe("a turn another mm is still running", () => {
  it("is refused, not closed, by a second mm that opens the session; the first one's turn ends as usual", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    const script = "echo live-call; for i in $(seq 600); do [ -e let-go ] && break; sleep 0.1; done"
    fake.push({ toolCalls: [{ id: "call_live", name: "bash", arguments: { command: script } }] })
    const first = print(dir, ["the running question"])
    let id = ""
    try {
      await until(
        () => sessionOf(dir)?.inProgress?.running?.output?.includes("live-call") === true,
        "the running call's output in the session file",
        30_000
      )
      const running = sessionOf(dir)
      id = running.id
      expect(running.inProgress.by).toMatchObject({ pid: first.child.pid })
      const file = path.join(dir, ".mm", "sessions", `${id}.json`)
      const before = fs.readFileSync(file, "utf8")
      const requests = fake.completions().length
      const refusal =
        `mm: session ${id} is answering a question in another mm (pid ${first.child.pid}); wait for it to finish, or start a new conversation`

      const second = print(dir, ["--continue", "another question"])
      expect(await second.exited).toBe(1)
      expect(second.stderr.trim().split("\n")).toEqual([refusal])
      const byId = print(dir, ["--resume", id.slice(-8), "another question"])
      expect(await byId.exited).toBe(1)
      expect(byId.stderr.trim().split("\n")).toEqual([refusal])

      // the terminal: --continue with no question (then Ctrl-D) is refused as well; a /resume
      // is a red line, and the conversation goes on in a session of its own
      const env = { AGENT_CONFIG: path.join(dir, "agent.yaml") }
      const bare = await runMm(dir, [], ["--continue"], env)
      expect(bare.code).toBe(1)
      expect(bare.stderr).toContain(`\n${refusal.slice("mm: ".length)}\n`)
      fake.push({ text: "terminal answer" })
      const terminal = await runMm(dir, ["/resume", "a question of its own"], [], env)
      expect(terminal.code).toBe(0)
      expect(terminal.stderr).toContain(`\n${refusal.slice("mm: ".length)}\n`)
      expect(terminal.stdout).toContain("terminal answer")
      expect(sessionFiles(dir)).toHaveLength(2)
      const sent = fake.completions().at(-1)!.body.messages
      expect(JSON.stringify(sent)).not.toContain("the running question")

      // mm sessions rm leaves it to the mm answering in it
      const rm = mmIn(dir, ["sessions", "rm", "--yes", id])
      expect(await rm.exited).toBe(1)
      expect(rm.stderr.trim()).toBe(
        `mm: session ${id} is answering a question in another mm (pid ${first.child.pid}); nothing deleted — wait for it to finish`
      )
      expect(fs.existsSync(file)).toBe(true)

      // mm sessions show: the turn as it stands, not closed
      const show = mmIn(dir, ["sessions", "show", id])
      expect(await show.exited).toBe(0)
      expect(show.stdout).toContain("**Tool call `bash`** (running)")
      expect(show.stdout).toContain(`*(this turn is still being answered by mm pid ${first.child.pid})*`)
      expect(show.stdout).not.toContain("mm stopped")

      // nothing was asked of the model for it, and the file is as the first mm wrote it
      expect(fake.completions().length).toBe(requests + 1)
      expect(fs.readFileSync(file, "utf8")).toBe(before)
    } finally {
      fs.writeFileSync(path.join(dir, "let-go"), "")
      fake.push({ text: "first answer" })
    }
    expect(await first.exited).toBe(0)
    expect(first.stdout).toContain("first answer")
    // the first mm's turn ended in its own file: no error, no marker, the call's whole result
    expect(sessionFiles(dir)).toHaveLength(2)
    const ended = readSession(path.join(dir, ".mm", "sessions", `${id}.json`))
    expect(ended.id).toBe(id)
    expect(ended.inProgress).toBeUndefined()
    expect(ended.errors).toEqual([])
    const result = ended.messages.find((m: any) => m.role === "tool" && m.tool_call_id === "call_live")
    expect(result.content).toContain("live-call")
    expect(result.content).not.toContain("mm stopped")
    expect(ended.messages.at(-1).content).toBe("first answer")
  }, 120_000)
})
