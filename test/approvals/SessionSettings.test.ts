import { describe, expect, it } from "vitest"

import { configOptions, modelChoices, modeState } from "../../src/acp/SessionOptions"
import { approvalNeeded, autoFallsBack, defaultSettings } from "../../src/approvals/SessionSettings"
import { validateAgainst } from "../support/acp-schema"
import { toolNamed } from "../support/tools"

describe("approval modes", () => {
  const cwd = "/work/project"
  it("ask follows permissions; edits lets edits inside the project through; allow asks nothing", () => {
    const write = (p: string) => [toolNamed("write_file"), { path: p, content: "x" }, cwd, true] as const
    expect(approvalNeeded("ask", "ask", ...write("a.txt"))).toBe(true)
    expect(approvalNeeded("allow", "ask", ...write("a.txt"))).toBe(false)
    expect(approvalNeeded("ask", "edits", ...write("src/a.txt"))).toBe(false)
    expect(approvalNeeded("allow", "edits", ...write("../elsewhere/a.txt"))).toBe(true)
    expect(approvalNeeded("allow", "edits", ...write("/etc/passwd"))).toBe(true)
    expect(approvalNeeded("allow", "edits", toolNamed("bash"), { command: "ls" }, cwd, true)).toBe(true)
    expect(approvalNeeded("ask", "allow", toolNamed("bash"), { command: "rm -rf x" }, cwd, true)).toBe(false)
    // read_file asks only outside the project (issue 17)
    expect(approvalNeeded("ask", "ask", toolNamed("read_file"), { path: "src/a.ts" }, cwd, true)).toBe(false)
    expect(approvalNeeded("ask", "ask", toolNamed("read_file"), { path: "/etc/passwd" }, cwd, true)).toBe(true)
    expect(approvalNeeded("ask", "edits", toolNamed("read_file"), { path: "/etc/passwd" }, cwd, true)).toBe(true)
    expect(approvalNeeded("ask", "allow", toolNamed("read_file"), { path: "/etc/passwd" }, cwd, true)).toBe(false)
  })

  it("auto: sandboxed commands and edits inside go ahead, the rest asks; without a sandbox it is ask", () => {
    const bash = [toolNamed("bash"), { command: "rm -rf build" }, cwd] as const
    const inside = [toolNamed("edit_file"), { path: "src/a.ts", old_string: "a", new_string: "b" }, cwd] as const
    const outside = [toolNamed("write_file"), { path: "/etc/x", content: "x" }, cwd] as const
    const readOutside = [toolNamed("read_file"), { path: "/etc/passwd" }, cwd] as const
    for (const [permissions, mode] of [["auto", "ask"], ["ask", "auto"], ["allow", "auto"]] as const) {
      expect(approvalNeeded(permissions, mode, ...bash, true)).toBe(false)
      expect(approvalNeeded(permissions, mode, ...inside, true)).toBe(false)
      expect(approvalNeeded(permissions, mode, ...outside, true)).toBe(true)
      expect(approvalNeeded(permissions, mode, ...readOutside, true)).toBe(true)
      // no working sandbox: everything that changes things is asked, as under ask
      expect(approvalNeeded(permissions, mode, ...bash, false)).toBe(true)
      expect(approvalNeeded(permissions, mode, ...inside, false)).toBe(true)
      expect(autoFallsBack(permissions, mode, false)).toBe(true)
      expect(autoFallsBack(permissions, mode, true)).toBe(false)
    }
    expect(autoFallsBack("ask", "ask", false)).toBe(false)
    expect(autoFallsBack("auto", "edits", false)).toBe(false)
  })

  it("the modes and options an editor is given validate against the ACP schema", () => {
    expect(validateAgainst("SessionModeState", modeState(defaultSettings))).toEqual([])
    const options = configOptions({ mode: "edits", model: "b" }, modelChoices("a", ["b", "a", "c"]))
    for (const option of options) expect(validateAgainst("SessionConfigOption", option)).toEqual([])
    expect(options.map((o: any) => [o.currentValue, o.options.map((c: any) => c.value)])).toEqual([
      ["edits", ["ask", "edits", "auto", "allow"]],
      ["b", ["a", "b", "c"]]
    ])
  })
})
