// mm -p has nobody to ask: under permissions: ask a bash call is refused, while grep and glob
// inside the project run. A pattern that would backtrack for days is stopped in its worker
// thread, and the turn goes on with the one line that says so.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

describe("the search tools in print mode", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("under permissions: ask with no terminal, grep and glob run while bash is refused", async () => {
    const project = tempProject(
      configFor(server.url).map((line) => line.replace("permissions: allow", "permissions: ask"))
    )
    fs.mkdirSync(path.join(project, "src"))
    fs.writeFileSync(path.join(project, "src", "main.py"), "def main():\n    print('hello')\n")
    server.push(
      {
        toolCalls: [
          { id: "a", name: "grep", arguments: { pattern: "def main" } },
          { id: "b", name: "glob", arguments: { pattern: "*.py" } },
          { id: "c", name: "bash", arguments: { command: "grep -rn 'def main' ." } }
        ]
      },
      { text: "main is in src/main.py" }
    )
    const { code, stdout } = await runMm(project, [], ["-p", "where is main?"])
    expect(code).toBe(0)
    expect(stdout).toBe("main is in src/main.py\n")
    const results = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
    expect(results.map((m: { content: string }) => m.content)).toEqual([
      "src/main.py:1: def main():",
      "src/main.py",
      expect.stringMatching(/^not approved/)
    ])
  })

  it("a grep whose pattern never finishes: its one-line stop reaches the model and the turn ends", async () => {
    const project = tempProject(configFor(server.url))
    fs.writeFileSync(path.join(project, "input.txt"), `${"a".repeat(40)}b\n`)
    server.push(
      { toolCalls: [{ id: "a", name: "grep", arguments: { pattern: "^(a+)+$" } }] },
      { text: "the pattern was too slow" }
    )
    const { code, stderr, stdout } = await runMm(project, [], ["-p", "--verbose", "find the a lines"])
    expect(code).toBe(0)
    expect(stdout).toBe("the pattern was too slow\n")
    const stop = "grep stopped: the pattern ran over 1 s on input.txt without finishing " +
      "(likely catastrophic backtracking); simplify it"
    const results = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
    expect(results.map((m: { content: string }) => m.content)).toEqual([stop])
    expect(stderr).toContain(`✗ ${stop.slice(0, 60)}`)
  })
})
