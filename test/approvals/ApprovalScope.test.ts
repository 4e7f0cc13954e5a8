import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { beforeAll, describe, expect, it } from "@effect/vitest"

import {
  alwaysChoices as alwaysChoicesWith,
  type CallToApprove,
  commandScope,
  isAllowed as isAllowedWith,
  prefixOf,
  type Scope
} from "../../src/approvals/ApprovalScope"
import { type CommandReader, loadCommandReader } from "../../src/approvals/CommandReader"
import { previewLines } from "../../src/approvals/PreviewLines"
import { approvalNeeded } from "../../src/approvals/SessionSettings"
import { needsApproval } from "../../src/tools/ProjectPaths"
import { callOf, previewNow, toolNamed } from "../support/tools"

let reader: CommandReader
beforeAll(async () => {
  reader = await loadCommandReader()
})
const read = (command: string) => reader.read(command)
const isAllowed = (scopes: ReadonlyArray<Scope>, call: CallToApprove) => isAllowedWith(scopes, call, read)
const alwaysChoices = (call: CallToApprove) => alwaysChoicesWith(call, read)

const bash = (command: string, cwd = "/p") => callOf("bash", { command }, cwd)
const always = (command: string): Scope => commandScope(read, command)
const allows = (given: string, later: string) => isAllowed([always(given)], bash(later))

describe("prefixOf: the words up to the first that is not an option", () => {
  const cases: Array<[Array<string>, Array<string>]> = [
    [["ls"], ["ls"]],
    [["ls", "-la"], ["ls"]],
    [["ls", "-la", "src"], ["ls", "-la", "src"]],
    [["npm", "test", "--", "-u"], ["npm", "test"]],
    [["npm", "--silent", "test"], ["npm", "--silent", "test"]],
    [["git", "status", "--short"], ["git", "status"]]
  ]
  for (const [words, prefix] of cases) {
    it(`${words.join(" ")} → ${prefix.join(" ")}`, () => expect(prefixOf(words)).toEqual(prefix))
  }
})

describe("isAllowed for bash", () => {
  it("always on ls does not cover rm", () => {
    expect(allows("ls", "rm -f x")).toBe(false)
    expect(allows("ls", "ls -la")).toBe(true)
    expect(allows("ls", "ls src")).toBe(true)
  })

  it("always on npm test -- -u covers npm test …, nothing else, never a compound command", () => {
    expect(always("npm test -- -u")).toEqual({ _tag: "CommandPrefix", words: ["npm", "test"] })
    expect(allows("npm test -- -u", "npm test")).toBe(true)
    expect(allows("npm test -- -u", "npm test src/a.test.ts")).toBe(true)
    expect(allows("npm test -- -u", "npm install")).toBe(false)
    expect(allows("npm test -- -u", "npm testx")).toBe(false)
    expect(allows("npm test -- -u", "npm test; rm -rf x")).toBe(false)
    expect(allows("npm test -- -u", "npm test && curl x | sh")).toBe(false)
    expect(allows("npm test -- -u", "npm test > log")).toBe(false)
  })

  it("a compound command's always covers that exact line only", () => {
    expect(always("npm test; rm -rf x")).toEqual({ _tag: "ExactCommand", command: "npm test; rm -rf x" })
    expect(allows("npm test; rm -rf x", "  npm test; rm -rf x ")).toBe(true)
    expect(allows("npm test; rm -rf x", "npm test; rm -rf y")).toBe(false)
    expect(allows("npm test; rm -rf x", "npm test")).toBe(false)
  })

  it("commands that run other commands get the exact line, never a prefix", () => {
    expect(always("timeout 5 npm test")).toEqual({ _tag: "ExactCommand", command: "timeout 5 npm test" })
    expect(allows("timeout 5 npm test", "timeout 5 rm -rf x")).toBe(false)
    expect(allows("sudo ls", "sudo rm -rf /")).toBe(false)
    expect(allows("bash -c 'ls'", "bash -c 'rm x'")).toBe(false)
    expect(allows("xargs echo", "xargs rm")).toBe(false)
    expect(allows("env", "env rm x")).toBe(false)
    expect(always("python3 -c 'print(1)'")).toEqual({ _tag: "ExactCommand", command: "python3 -c 'print(1)'" })
    expect(allows("node -e 'console.log(1)'", "node -e 'require(\"fs\").rmSync(\"x\")'")).toBe(false)
    expect(always("python3 -m pytest")).toEqual({ _tag: "CommandPrefix", words: ["python3", "-m", "pytest"] })
  })

  it("a git subcommand does not cover another one", () => {
    expect(allows("git status", "git status -s")).toBe(true)
    expect(allows("git status", "git push --force")).toBe(false)
    expect(allows("git status", "git -c core.pager=sh status")).toBe(false)
  })

  it("a Tool scope covers every call of that tool and nothing else", () => {
    const scopes: Array<Scope> = [{ _tag: "Tool", name: "mcp__github__list_issues" }]
    expect(isAllowed(scopes, callOf("mcp__github__list_issues", {}, "/p"))).toBe(true)
    expect(isAllowed(scopes, bash("ls"))).toBe(false)
  })
})

describe("isAllowed for files", () => {
  const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-")))
  const edit = (file: string) => callOf("edit_file", { path: file, old: "a", new: "b" }, project)
  const write = (file: string) => callOf("write_file", { path: file, content: "x" }, project)

  it("always for src/a.ts does not cover src/b.ts", () => {
    const [file] = alwaysChoices(edit("src/a.ts"))
    expect(file.scope).toEqual({ _tag: "File", path: path.join(project, "src/a.ts") })
    expect(file.label).toBe("src/a.ts")
    expect(isAllowed([file.scope], edit("src/a.ts"))).toBe(true)
    expect(isAllowed([file.scope], write("./src/a.ts"))).toBe(true)
    expect(isAllowed([file.scope], edit("src/b.ts"))).toBe(false)
    expect(isAllowed([file.scope], bash("rm src/a.ts", project))).toBe(false)
  })

  it("project covers every edit and write inside it, none outside, not even through a symbolic link", () => {
    const [, whole] = alwaysChoices(write("a.txt"))
    expect(whole.scope).toEqual({ _tag: "Project", dir: project })
    expect(isAllowed([whole.scope], write("deep/new/dir/x.txt"))).toBe(true)
    expect(isAllowed([whole.scope], edit("src/a.ts"))).toBe(true)
    expect(isAllowed([whole.scope], write("../elsewhere.txt"))).toBe(false)
    expect(isAllowed([whole.scope], write("/etc/hosts"))).toBe(false)
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "mm-outside-"))
    fs.symlinkSync(outside, path.join(project, "link"))
    expect(isAllowed([whole.scope], write("link/x.txt"))).toBe(false)
    expect(isAllowed([whole.scope], bash("ls", project))).toBe(false)
  })

  it("a read outside the project offers that file; it covers re-reading it, never writing it", () => {
    const read = (file: string) => callOf("read_file", { path: file }, project)
    const [choice] = alwaysChoices(read("/etc/hosts"))
    expect(choice.scope).toEqual({ _tag: "File", path: "/etc/hosts" })
    expect(isAllowed([choice.scope], read("/etc/hosts"))).toBe(true)
    expect(isAllowed([choice.scope], read("/etc/passwd"))).toBe(false)
    expect(isAllowed([choice.scope], write("/etc/hosts"))).toBe(false)
  })

  it("a grep or glob outside the project offers that path, not every call of the tool", () => {
    for (const tool of ["grep", "glob"]) {
      const search = (where: string) => callOf(tool, { pattern: "x", path: where }, project)
      const choices = alwaysChoices(search("/etc"))
      expect(choices.map((choice) => choice.scope)).toEqual([{ _tag: "File", path: "/etc" }])
      expect(isAllowed([choices[0].scope], search("/etc"))).toBe(true)
      expect(isAllowed([choices[0].scope], search("/usr"))).toBe(false)
    }
  })

  it("a file outside the project offers no always at all", () => {
    expect(alwaysChoices(write("/etc/hosts"))).toEqual([])
    expect(alwaysChoices(edit("../x.txt"))).toEqual([])
  })

  it("a [p]roject or file always never covers a dangling link that leads out, absolute or relative", () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-outside-")))
    fs.symlinkSync(path.join(outside, "p1.txt"), path.join(project, "dangling.txt"))
    const relative = path.relative(project, path.join(outside, "p2.txt"))
    expect(relative.startsWith("../")).toBe(true)
    fs.symlinkSync(relative, path.join(project, "dangling2.txt"))
    const scopes: Array<Scope> = [
      { _tag: "Project", dir: project },
      { _tag: "File", path: path.join(project, "dangling.txt") },
      { _tag: "File", path: path.join(project, "dangling2.txt") }
    ]
    expect(isAllowed(scopes, write("dangling.txt"))).toBe(false)
    expect(isAllowed(scopes, write("dangling2.txt"))).toBe(false)
    expect(isAllowed(scopes, edit("dangling2.txt"))).toBe(false)
    expect(alwaysChoices(write("dangling.txt"))).toEqual([])
    // the edits mode lets writes inside the project through, not this one
    expect(
      approvalNeeded("allow", "edits", toolNamed("write_file"), { path: "dangling.txt", content: "x" }, project, false)
    ).toBe(
      true
    )
    expect(
      approvalNeeded("allow", "edits", toolNamed("write_file"), { path: "inside.txt", content: "x" }, project, false)
    ).toBe(
      false
    )
    // the preview names where the write would really go
    const lines = previewLines(previewNow("write_file", { path: "dangling.txt", content: "x" }, project))
    expect(lines[0]).toEqual({ kind: "warning", text: `outside the project: ${path.join(outside, "p1.txt")}` })
    const lines2 = previewLines(previewNow("write_file", { path: "dangling2.txt", content: "x" }, project))
    expect(lines2[0].text).toBe(`outside the project: ${path.join(outside, "p2.txt")}`)
  })

  it("a file with another hard link counts as outside: writes, edits and reads are asked, never covered", () => {
    const outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-outside-")))
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n")
    fs.linkSync(path.join(outside, "secret.txt"), path.join(project, "hard.txt"))
    const whole: Scope = { _tag: "Project", dir: project }
    const file: Scope = { _tag: "File", path: path.join(project, "hard.txt") }
    expect(isAllowed([whole, file], write("hard.txt"))).toBe(false)
    expect(isAllowed([whole, file], edit("hard.txt"))).toBe(false)
    expect(needsApproval("read", { path: "hard.txt" }, project)).toBe(true)
    expect(needsApproval("read", { path: "package.json" }, project)).toBe(false)
    const lines = previewLines(
      previewNow("edit_file", { path: "hard.txt", old: "secret", new: "x" }, project)
    )
    expect(lines.map((l) => l.text)).toContain(`outside the project: ${path.join(project, "hard.txt")}`)
    expect(lines.map((l) => l.text).join("\n")).toMatch(/2 hard links/)
  })
})

describe("a write to .git/, .mm/ or agent.yaml counts as outside the project", () => {
  const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-protected-")))
  fs.mkdirSync(path.join(project, ".git"))
  fs.writeFileSync(path.join(project, ".git", "config"), "[core]\n")
  fs.mkdirSync(path.join(project, ".mm"))
  fs.writeFileSync(path.join(project, ".mm", "permissions.json"), "{}")
  fs.writeFileSync(path.join(project, "agent.yaml"), "permissions: ask\n")
  fs.symlinkSync(".git/config", path.join(project, "cfg"))
  const write = (file: string) => callOf("write_file", { path: file, content: "x" }, project)
  const edit = (file: string) => callOf("edit_file", { path: file, old: "a", new: "b" }, project)
  const protectedCalls = [
    write(".git/config"),
    write(".git/hooks/pre-commit"),
    edit(".mm/permissions.json"),
    edit("agent.yaml"),
    write("cfg"),
    write("sub/../.git/config")
  ]

  it("no always covers it: not [p]roject, not the file itself, not one remembered from permissions.json", () => {
    const scopes: Array<Scope> = [
      { _tag: "Project", dir: project },
      { _tag: "File", path: path.join(project, ".git", "config") },
      { _tag: "File", path: path.join(project, ".mm", "permissions.json") },
      { _tag: "File", path: path.join(project, "agent.yaml") },
      { _tag: "Tool", name: "write_file" },
      { _tag: "Tool", name: "edit_file" }
    ]
    for (const call of protectedCalls) expect(isAllowed(scopes, call), JSON.stringify(call.input)).toBe(false)
    // the same scopes cover the project's other files (the control)
    expect(isAllowed(scopes, write("src/a.txt"))).toBe(true)
    expect(isAllowed(scopes, write(".gitignore"))).toBe(true)
    expect(isAllowed(scopes, write(".github/workflows/ci.yml"))).toBe(true)
  })

  it("offers no always, and says it covers none of them", () => {
    for (const call of protectedCalls) expect(alwaysChoices(call), JSON.stringify(call.input)).toEqual([])
    const [, whole] = alwaysChoices(write("src/a.txt"))
    expect(whole.covers).toBe(
      `every edit and write inside ${project}, never a file outside it, a link that leads out, or .git/, .mm/ and agent.yaml`
    )
  })

  it("reading them is not asked, in any mode: reading is not the danger", () => {
    for (
      const [tool, input] of [
        ["read_file", { path: ".git/config" }],
        ["read_file", { path: ".mm/permissions.json" }],
        ["read_file", { path: "cfg" }],
        ["grep", { pattern: "core", path: ".git" }],
        ["glob", { pattern: "**", path: ".mm" }]
      ] as const
    ) {
      expect(needsApproval(toolNamed(tool).access, input, project), `${tool} ${input.path}`).toBe(false)
    }
  })
})
