import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"
import { MmProcess } from "../../support/MmProcess"

// Breaking pass of issue 45: a file written before cancelled turns counted (its `turns` counts
// completed turns only) is renumbered on read. The listing must give the count `mm sessions show`
// gives, whatever the file's layout: mm's own (pretty-printed, as every old file is) included.

const harness = useAgents()

const ID = "20260101-120000-0123abcd"

const run = async (dir: string, args: ReadonlyArray<string>) => {
  const mm = new MmProcess(dir, args, { AGENT_CONFIG: path.join(dir, "agent.yaml") })
  mm.child.stdin!.end()
  expect(await mm.exited).toBe(0)
  return mm.stdout
}

describe("an old session file with a cancelled turn", () => {
  it.each([["mm's own layout", 2], ["one line", undefined]] as const)(
    "is listed with the turn count show gives (%s)",
    async (_layout, indent) => {
      const fake = harness.fake()
      const { dir } = makeProject(configYaml({ url: fake.url }))
      const sessions = path.join(dir, ".mm", "sessions")
      fs.mkdirSync(sessions, { recursive: true })
      const session = {
        version: 1,
        id: ID,
        cwd: dir,
        createdAt: "2026-01-01T12:00:00.000Z",
        updatedAt: "2026-01-01T12:05:00.000Z",
        title: "cancelled question",
        turns: 1, // old numbering: the cancelled turn not counted
        errors: [],
        messages: [
          { role: "system", content: "sys" },
          { role: "user", content: "cancelled question" },
          { role: "assistant", content: "partial" },
          { role: "user", content: "second question" },
          { role: "assistant", content: "answer" }
        ]
      }
      fs.writeFileSync(path.join(sessions, `${ID}.json`), JSON.stringify(session, null, indent) + "\n", { mode: 0o600 })
      const show = await run(dir, ["sessions", "show", ID])
      expect(show).toContain("- 2 turn(s)")
      const listed = JSON.parse(await run(dir, ["sessions", "--json"]))
      expect(listed.sessions[0].turns).toBe(2)
    },
    60_000
  )
})
