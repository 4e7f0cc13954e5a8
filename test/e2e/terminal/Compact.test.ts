import { describe, expect, it } from "@effect/vitest"

import { SUMMARY_HEADER } from "../../../src/agent/Compactor"
import { startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

describe("/compact in the terminal", () => {
  it("compacts, then a resumed session starts from the summary", async () => {
    const server = await startFakeModelServer()
    const project = tempProject(
      configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"])
    )
    server.push({ text: "a1" }, { text: "a2" }, { text: "a3" }, { text: "the summary" })
    const run = await runMm(project, ["q1", "q2", "q3", "/compact"])
    expect(run.stdout).toMatch(/compacted: 4 older message\(s\) replaced by a summary/)
    const nothing = await runMm(project, ["/resume", "/compact"])
    expect(nothing.stdout).toContain("nothing to compact yet")
    server.push({ text: "a4" }, { text: "" })
    const resumed = await runMm(project, ["/resume", "q4", "/compact"])
    expect(resumed.stdout).toContain("↩️ resumed")
    expect(resumed.stderr).toMatch(/compaction failed: .*empty summary/)
    const request = server.completions().find((r) => r.body.messages.some((m: any) => m.content === "q4"))!.body
    expect(request.messages.map((m: any) => m.content)).toEqual([
      request.messages[0].content,
      `${SUMMARY_HEADER}\n\nthe summary`,
      "q3",
      "a3",
      "q4"
    ])
    await server.close()
  })
})
