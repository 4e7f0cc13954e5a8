import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type FakeModelServer, startFakeModelServer } from "./support/FakeModelServer"
import { configFor, runMm, tempProject } from "./support/MmProcess"

/** End-to-end checks of docs/explanation/guarantees.md, one per breaking case of issue 17. */
describe("hardening", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("escape sequences from a tool, the model and a session title never reach the terminal", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push(
      { toolCalls: [{ name: "bash", arguments: { command: "printf '\\033]0;PWNED\\007'; printf 'moved\\033[2J\\033[H\\n'" } }] },
      { text: ["done \u001b]0;", "TITLE\u0007 and \u001b[31mred\u001b[0m"] }
    )
    const run = await runMm(project, ["title \u001b]0;EVIL\u0007 here", "/sessions"])
    expect(run.stdout).toContain("done TITLE and red")
    expect(run.stdout).toContain("  ↳ exit code 0 · moved")
    expect(run.stdout).toMatch(/1 turn\(s\)  title  here\n/)
    expect(run.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/)
    expect(run.stdout).not.toContain("PWNED\u0007")
  })
})
