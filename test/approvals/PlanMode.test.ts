import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { beforeAll, describe, expect, it } from "vitest"

import { type CommandReader, loadCommandReader } from "../../src/approvals/CommandReader"
import { PLAN_MODE_PROMPT, refusedInPlan } from "../../src/approvals/PlanMode"
import { approvalNeeded, secretsAsked } from "../../src/approvals/SessionSettings"
import type { ToolRecord } from "../../src/tools/ToolRecord"
import { toolNamed } from "../support/tools"

let reader: CommandReader
beforeAll(async () => {
  reader = await loadCommandReader()
})

describe("plan mode's rule", () => {
  // a real repository: the read-only list resolves each path in it, and git reads only inside one
  const cwd = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-plan-rule-")))
  execFileSync("git", ["init", "-q"], { cwd })
  fs.writeFileSync(path.join(cwd, "a.txt"), "a\n")
  const refused = (tool: ToolRecord, input: Record<string, unknown>) =>
    refusedInPlan(tool, input, cwd, (command) => reader.read(command))
  const bash = (command: string) => refused(toolNamed("bash"), { command })

  it("lets reading tools and read-only commands through, and nothing else", () => {
    expect(refused(toolNamed("read_file"), { path: "a.txt" })).toBeUndefined()
    expect(refused(toolNamed("grep"), { pattern: "a" })).toBeUndefined()
    expect(refused(toolNamed("glob"), { pattern: "*.txt" })).toBeUndefined()
    // what works inside mm alone: the plan, and a sub-agent (whose own calls meet this rule)
    expect(refused(toolNamed("todo"), { todos: [] })).toBeUndefined()
    expect(refused(toolNamed("task"), { description: "look", prompt: "look around" })).toBeUndefined()
    expect(bash("ls -la")).toBeUndefined()
    expect(bash("git status")).toBeUndefined()
    expect(bash("cat a.txt")).toBeUndefined()

    expect(refused(toolNamed("write_file"), { path: "b.txt", content: "b" })).toMatch(
      /^refused in plan mode: write_file changes files\. While planning only reading tools and read-only commands run;/
    )
    expect(refused(toolNamed("edit_file"), { path: "a.txt", old: "a", new: "b" })).toContain("edit_file changes files")
    expect(bash("rm a.txt")).toContain("this command is not one mm knows to only read (rm is not a read-only command)")
    // read-only programs, but one writes a file and one reads outside the project
    expect(bash("ls > listing.txt")).toMatch(/^refused in plan mode: /)
    expect(bash("cat /etc/passwd")).toMatch(/^refused in plan mode: /)
    expect(bash("git commit -m x")).toMatch(/^refused in plan mode: /)
    const mcp: ToolRecord = { ...toolNamed("grep"), name: "mcp__db__query", access: "outside" }
    expect(refused(mcp, {})).toContain("mcp__db__query is run by another program, which mm cannot check")
  })

  it("lets a fetch through, to be asked per domain as in ask: a GET only reads", () => {
    const fetch: ToolRecord = { ...toolNamed("grep"), name: "web_fetch", access: "network" }
    expect(refused(fetch, { url: "https://example.com/" })).toBeUndefined()
    expect(approvalNeeded("ask", "plan", fetch, { url: "https://example.com/" }, cwd, true)).toBe(true)
    expect(approvalNeeded("allow", "ask", fetch, { url: "https://example.com/" }, cwd, true)).toBe(false)
    expect(approvalNeeded("ask", "auto", fetch, { url: "https://example.com/" }, cwd, true)).toBe(true)
    expect(approvalNeeded("ask", "edits", fetch, { url: "https://example.com/" }, cwd, true)).toBe(true)
  })

  it("what it lets through is asked as in any mode: a read outside the project, a secret file", () => {
    const read = (p: string) => approvalNeeded("ask", "plan", toolNamed("read_file"), { path: p }, cwd, true)
    expect(read("a.txt")).toBe(false)
    expect(read("/etc/passwd")).toBe(true)
    // the rule's own choice, whatever permissions says
    expect(approvalNeeded("allow", "plan", toolNamed("read_file"), { path: "/etc/passwd" }, cwd, true)).toBe(true)
    expect(approvalNeeded("ask", "plan", toolNamed("bash"), { command: "ls" }, cwd, false)).toBe(false)
    expect(secretsAsked("allow", "plan")).toBe(true)
  })

  it("tells the model it plans, naming no tool (the registry is the one list of their names)", () => {
    expect(PLAN_MODE_PROMPT).toMatch(/^# Plan mode\n/)
    expect(PLAN_MODE_PROMPT).not.toMatch(/todo|read_file|bash/)
  })
})
