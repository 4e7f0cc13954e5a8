import { describe, expect, it } from "vitest"

import { configOptions, modelChoices, modeState } from "../../src/acp/SessionOptions"
import { approvalNeeded, defaultSettings } from "../../src/approvals/SessionSettings"
import { validateAgainst } from "../support/acp-schema"

describe("approval modes", () => {
  const cwd = "/work/project"
  it("ask follows permissions; edits lets edits inside the project through; allow asks nothing", () => {
    const write = (p: string) => ["write_file", { path: p, content: "x" }, cwd] as const
    expect(approvalNeeded("ask", "ask", ...write("a.txt"))).toBe(true)
    expect(approvalNeeded("allow", "ask", ...write("a.txt"))).toBe(false)
    expect(approvalNeeded("ask", "edits", ...write("src/a.txt"))).toBe(false)
    expect(approvalNeeded("allow", "edits", ...write("../elsewhere/a.txt"))).toBe(true)
    expect(approvalNeeded("allow", "edits", ...write("/etc/passwd"))).toBe(true)
    expect(approvalNeeded("allow", "edits", "bash", { command: "ls" }, cwd)).toBe(true)
    expect(approvalNeeded("ask", "allow", "bash", { command: "rm -rf x" }, cwd)).toBe(false)
    // read_file asks only outside the project (issue 17)
    expect(approvalNeeded("ask", "ask", "read_file", { path: "src/a.ts" }, cwd)).toBe(false)
    expect(approvalNeeded("ask", "ask", "read_file", { path: "/etc/passwd" }, cwd)).toBe(true)
    expect(approvalNeeded("ask", "edits", "read_file", { path: "/etc/passwd" }, cwd)).toBe(true)
    expect(approvalNeeded("ask", "allow", "read_file", { path: "/etc/passwd" }, cwd)).toBe(false)
  })

  it("the modes and options an editor is given validate against the ACP schema", () => {
    expect(validateAgainst("SessionModeState", modeState(defaultSettings))).toEqual([])
    const options = configOptions({ mode: "edits", model: "b" }, modelChoices("a", ["b", "a", "c"]))
    for (const option of options) expect(validateAgainst("SessionConfigOption", option)).toEqual([])
    expect(options.map((o: any) => [o.currentValue, o.options.map((c: any) => c.value)])).toEqual([
      ["edits", ["ask", "edits", "allow"]],
      ["b", ["a", "b", "c"]]
    ])
  })
})
