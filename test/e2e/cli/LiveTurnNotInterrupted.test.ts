import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, useAgents } from "../../support/acp-agent"
import { MmProcess, sessionFiles } from "../../support/MmProcess"
import { until } from "../../support/until"

// Breaking pass of issue 45: a turn that another mm is still running is not an interrupted
// turn. Loading the session elsewhere (`mm -p --continue`) must not close it as "mm stopped",
// record an error, or tell the model the running call stopped.

const harness = useAgents()

const sessionOf = (dir: string): any => {
  const files = sessionFiles(dir)
  if (files.length !== 1) return undefined
  try {
    return readSession(path.join(dir, ".mm", "sessions", files[0]))
  } catch {
    return undefined
  }
}

const print = (dir: string, args: ReadonlyArray<string>) => {
  const mm = new MmProcess(dir, ["-p", ...args], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
  mm.child.stdin!.end()
  return mm
}

describe("a turn another mm is still running", () => {
  it("is not closed as interrupted by a second mm that continues the session", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    const script = "echo live-call; for i in $(seq 600); do [ -e let-go ] && break; sleep 0.1; done"
    fake.push({ toolCalls: [{ id: "call_live", name: "bash", arguments: { command: script } }] })
    const first = print(dir, ["the running question"])
    try {
      await until(
        () => sessionOf(dir)?.inProgress?.running?.output?.includes("live-call") === true,
        "the running call's output in the session file",
        30_000
      )
      fake.push({ text: "second answer" })
      const second = print(dir, ["--continue", "another question"])
      expect(await second.exited).toBe(0)
      // the first mm is alive and its call still runs: nothing was interrupted
      expect(second.stderr).not.toContain("the last question was interrupted")
      const sent = fake.completions().at(-1)!.body.messages
      expect(JSON.stringify(sent)).not.toContain("[mm stopped while this ran]")
    } finally {
      fs.writeFileSync(path.join(dir, "let-go"), "")
      fake.push({ text: "first answer" })
      await first.exited
    }
  }, 120_000)
})
