import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { beforeAll, describe, expect, it } from "@effect/vitest"

import {
  alwaysChoices as alwaysChoicesWith,
  type CallToApprove,
  commandScope,
  grantsNothing,
  isAllowed as isAllowedWith,
  type Scope,
  scopeCovers
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

describe("isAllowed for bash", () => {
  // a real project: the read-only check resolves every path a command names in it
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-bash-")))
  fs.mkdirSync(path.join(dir, "src"))
  // a repository: git counts as read-only only inside one
  execFileSync("git", ["init", "-q"], { cwd: dir })
  const always = (command: string): Scope => commandScope(read, command, dir)
  const allows = (given: string, later: string) => isAllowed([always(given)], bash(later, dir))

  it("always on ls is the reusable ls, covering read-only ls commands and not rm", () => {
    expect(always("ls -la")).toEqual({ _tag: "CommandPrefix", words: ["ls"] })
    expect(allows("ls", "rm -f x")).toBe(false)
    expect(allows("ls", "ls -la")).toBe(true)
    expect(allows("ls", "ls src")).toBe(true)
    expect(allows("ls", "ls ..")).toBe(false)
    expect(allows("ls", "ls -la; rm -rf x")).toBe(false)
  })

  it("a command that is not read-only gets its exact line, which covers only that line", () => {
    expect(always("npm test -- -u")).toEqual({ _tag: "ExactCommand", command: "npm test -- -u" })
    expect(allows("npm test -- -u", "  npm test -- -u ")).toBe(true)
    expect(allows("npm test -- -u", "npm test")).toBe(false)
    expect(allows("npm test -- -u", "npm test; rm -rf x")).toBe(false)
    expect(always("npm test; rm -rf x")).toEqual({ _tag: "ExactCommand", command: "npm test; rm -rf x" })
    expect(allows("npm test; rm -rf x", "npm test; rm -rf y")).toBe(false)
  })

  it("commands that run other commands get the exact line, never a prefix", () => {
    expect(always("timeout 5 npm test")).toEqual({ _tag: "ExactCommand", command: "timeout 5 npm test" })
    expect(allows("timeout 5 npm test", "timeout 5 rm -rf x")).toBe(false)
    expect(allows("sudo ls", "sudo rm -rf /")).toBe(false)
    expect(allows("python3 -m pytest", "python3 -m pytest --basetemp=/tmp")).toBe(false)
  })

  it("a git subcommand does not cover another one; global options that change nothing are skipped", () => {
    expect(always("git status -s")).toEqual({ _tag: "CommandPrefix", words: ["git", "status"] })
    expect(allows("git status", "git status -s")).toBe(true)
    expect(allows("git status", "git --no-pager status")).toBe(true)
    expect(allows("git status", "git log")).toBe(false)
    expect(allows("git status", "git push --force")).toBe(false)
    expect(allows("git status", "git -c core.pager=sh status")).toBe(false)
  })

  it("offers the exact line twice, remembered and for this conversation, and says why", () => {
    const choices = alwaysChoicesWith(bash("rm -rf build", dir), read)
    expect(choices.map((c) => [c.keep, c.label, c.covers])).toEqual([
      [
        "project",
        "run exactly this command",
        "exactly this command line, in this project from now on (rm is not a read-only command)"
      ],
      ["session", "session only", "exactly this command line, until this conversation ends"]
    ])
    expect(alwaysChoicesWith(bash("git log --oneline", dir), read).map((c) => [c.keep, c.label, c.covers])).toEqual([
      [
        "project",
        "allow `git log` with read-only options",
        "`git log` with read-only options, on paths inside the project"
      ]
    ])
  })

  it("an older remembered prefix of a program not on the list covers nothing, and says so", () => {
    const rm: Scope = { _tag: "CommandPrefix", words: ["rm"] }
    expect(isAllowed([rm], bash("rm -rf build src .git", dir))).toBe(false)
    expect(scopeCovers(rm, dir)).toBe("`rm` …, which covers nothing now: rm is not a read-only command")
    expect(scopeCovers({ _tag: "CommandPrefix", words: ["ls", "-la"] }, dir)).toBe(
      "`ls -la` …, which covers nothing now: a reusable answer names only a read-only program, and git's subcommand"
    )
  })

  it("git only reads when the repository's own configuration names no program for it to run", () => {
    const repo = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-repo-")))
    fs.mkdirSync(path.join(repo, ".git"))
    const config = (text: string) =>
      fs.writeFileSync(path.join(repo, ".git/config"), `[core]\n\trepositoryformatversion = 0\n${text}`)
    const status: Scope = { _tag: "CommandPrefix", words: ["git", "status"] }
    const covered = () => isAllowed([status], bash("git status", repo))
    config(`[remote "origin"]\n\turl = https://example.com/x.git\n[alias]\n\tst = status\n`)
    expect(commandScope(read, "git status", repo)).toEqual(status)
    expect(covered()).toBe(true)
    for (
      const [text, key] of [
        ["\tfsmonitor = ./watch.sh\n", "fsmonitor"],
        [`[diff "bin"]\n\ttextconv = ./conv.sh\n`, "textconv"],
        ["[diff]\n\texternal = ./diff.sh\n", "external"],
        [`[filter "lfs"]\n\tclean = ./clean.sh\n`, "clean"],
        ["[log]\n\tshowSignature = true\n", "showSignature"],
        ["[include]\n\tpath = ../other.cfg\n", "an include"],
        [`[includeIf "gitdir:~/"]\n\tpath = x\n`, "an include"]
      ]
    ) {
      config(text)
      expect(alwaysChoicesWith(bash("git status", repo), read)[0].covers, text).toContain(
        `names a program git may run (${key})`
      )
      expect(covered(), text).toBe(false)
    }
    // a worktree: its .git file leads to the git directory, and that to the common one
    const common = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-common-")))
    fs.mkdirSync(path.join(common, "worktrees/w"), { recursive: true })
    fs.writeFileSync(path.join(common, "worktrees/w/commondir"), "../..\n")
    fs.writeFileSync(path.join(common, "config"), `[filter "x"]\n\tprocess = ./p.sh\n`)
    const tree = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-tree-")))
    fs.writeFileSync(path.join(tree, ".git"), `gitdir: ${path.join(common, "worktrees/w")}\n`)
    fs.mkdirSync(path.join(tree, "src"))
    expect(isAllowed([status], bash("git status", path.join(tree, "src")))).toBe(false)
    fs.writeFileSync(path.join(common, "config"), "[core]\n\tbare = false\n")
    expect(isAllowed([status], bash("git status", path.join(tree, "src")))).toBe(true)
  })

  it("a Tool scope covers every call of that tool and nothing else", () => {
    const scopes: Array<Scope> = [{ _tag: "Tool", name: "mcp__github__list_issues" }]
    expect(isAllowed(scopes, callOf("mcp__github__list_issues", {}, "/p"))).toBe(true)
    expect(isAllowed(scopes, bash("ls"))).toBe(false)
  })

  it("a Tool scope naming bash or a file tool grants nothing: mm never offers one, so it was written by someone else", () => {
    const scopes: Array<Scope> = ["bash", "read_file", "write_file", "edit_file"].map((name) => ({
      _tag: "Tool",
      name
    }))
    expect(isAllowed(scopes, bash("rm -rf src", dir))).toBe(false)
    expect(isAllowed(scopes, callOf("write_file", { path: "a.txt", content: "x" }, dir))).toBe(false)
    expect(isAllowed(scopes, callOf("edit_file", { path: "a.txt", old: "a", new: "b" }, dir))).toBe(false)
    // and /permissions says so
    expect(grantsNothing({ _tag: "Tool", name: "bash" })).toBe(
      "covers nothing: bash is built in, its calls are asked one by one"
    )
    expect(grantsNothing({ _tag: "Tool", name: "mcp__docs__search" })).toBeUndefined()
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
