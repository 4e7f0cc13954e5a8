import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

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
    const inside = [toolNamed("edit_file"), { path: "src/a.ts", old: "a", new: "b" }, cwd] as const
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

  it("a write to .git/, .mm/ or agent.yaml is asked under ask, edits and auto, as one outside; allow asks nothing", () => {
    const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-modes-protected-")))
    fs.mkdirSync(path.join(project, ".git"))
    fs.writeFileSync(path.join(project, ".git", "config"), "[core]\n")
    fs.symlinkSync(".git/config", path.join(project, "cfg"))
    const calls = [
      [toolNamed("write_file"), { path: ".git/config", content: "x" }],
      [toolNamed("write_file"), { path: "cfg", content: "x" }],
      [toolNamed("write_file"), { path: "sub/../.git/hooks/pre-commit", content: "x" }],
      [toolNamed("edit_file"), { path: ".mm/permissions.json", old: "a", new: "b" }],
      [toolNamed("edit_file"), { path: "agent.yaml", old: "ask", new: "allow" }]
    ] as const
    for (const [tool, input] of calls) {
      const said = `${tool.name} ${input.path}`
      for (const [permissions, mode] of [["ask", "ask"], ["ask", "edits"], ["auto", "ask"], ["ask", "auto"]] as const) {
        expect(approvalNeeded(permissions, mode, tool, input, project, true), `${said} in ${mode}`).toBe(true)
      }
      expect(approvalNeeded("allow", "ask", tool, input, project, true), said).toBe(false)
      expect(approvalNeeded("ask", "allow", tool, input, project, true), said).toBe(false)
    }
    // the same modes let a write elsewhere in the project through (the control), and reads are never asked
    const inside = [toolNamed("write_file"), { path: ".gitignore", content: "x" }, project] as const
    expect(approvalNeeded("ask", "edits", ...inside, true)).toBe(false)
    expect(approvalNeeded("ask", "auto", ...inside, true)).toBe(false)
    expect(approvalNeeded("ask", "ask", toolNamed("read_file"), { path: ".git/config" }, project, true)).toBe(false)
  })

  it("the modes and options an editor is given validate against the ACP schema", () => {
    expect(validateAgainst("SessionModeState", modeState(defaultSettings))).toEqual([])
    const options = configOptions({ mode: "edits", model: "b" }, modelChoices("a", ["b", "a", "c"]))
    for (const option of options) expect(validateAgainst("SessionConfigOption", option)).toEqual([])
    expect(options.map((o: any) => [o.currentValue, o.options.map((c: any) => c.value)])).toEqual([
      ["edits", ["ask", "edits", "auto", "allow", "plan"]],
      ["b", ["a", "b", "c"]]
    ])
  })
})
