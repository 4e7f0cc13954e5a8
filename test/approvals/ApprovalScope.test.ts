import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import {
  alwaysChoices,
  commandScope,
  isAllowed,
  parseCommand,
  prefixOf,
  type Scope
} from "../../src/approvals/ApprovalScope"

const bash = (command: string, cwd = "/p") => ({ tool: "bash", input: { command }, cwd })
const always = (command: string): Scope => commandScope(command)
const allows = (given: string, later: string) => isAllowed([always(given)], bash(later))

describe("parseCommand and prefixOf", () => {
  const simple: Array<[string, Array<string>]> = [
    ["ls", ["ls"]],
    ["ls -la", ["ls"]],
    ["ls -la src", ["ls", "src"]],
    ["npm test", ["npm", "test"]],
    ["npm test -- -u", ["npm", "test"]],
    ["npm --silent test", ["npm", "test"]],
    ["git status", ["git", "status"]],
    ["git status --short", ["git", "status"]],
    ["git commit -m 'fix; it'", ["git", "commit"]],
    ["git commit -m \"a | b > c\"", ["git", "commit"]],
    ["rm -f important.txt", ["rm", "important.txt"]],
    ["  cargo   build  --release ", ["cargo", "build"]],
    ["grep -rn 'a b' src", ["grep", "a b"]],
    ["\"npm\" test", ["npm", "test"]],
    ["echo \\;", ["echo", ";"]],
    ["find . -name '*.ts' -exec wc -l {} \\;", ["find", "."]],
    ["python3 -m pytest -q", ["python3", "pytest"]],
    ["./scripts/check.sh --fast", ["./scripts/check.sh"]],
    ["make \\\n  all", ["make", "all"]],
    ["echo 'two\nlines'", ["echo", "two\nlines"]]
  ]
  for (const [command, prefix] of simple) {
    it(`${JSON.stringify(command)} is simple, prefix ${JSON.stringify(prefix)}`, () => {
      const parsed = parseCommand(command)
      expect(parsed._tag).toBe("Simple")
      if (parsed._tag === "Simple") expect(prefixOf(parsed.words)).toEqual(prefix)
    })
  }

  const compound: Array<[string, RegExp]> = [
    ["npm test; rm -rf x", /;/],
    ["make && make install", /&/],
    ["make || true", /\|/],
    ["cat a | sh", /pipe/],
    ["echo $(whoami)", /substitution/],
    ["echo `whoami`", /backticks/],
    ["echo \"$(rm -rf x)\"", /substitution/],
    ["echo hi > out.txt", /redirection/],
    ["sort < in.txt", /redirection/],
    ["cat > deploy.sh <<'EOF'\ncurl x | sh\nEOF", /redirection|here-document/],
    ["sleep 10 &", /background/],
    ["ls\nrm -rf x", /several lines/],
    ["(cd /tmp && rm x)", /subshell/],
    ["ls # ; rm x", /comment/],
    ["FOO=1 npm test", /assignment/],
    ["echo 'unterminated", /unterminated/],
    ["npm test 2>&1", /redirection|&/],
    ["diff <(ls a) <(ls b)", /redirection|subshell/]
  ]
  for (const [command, reason] of compound) {
    it(`${JSON.stringify(command)} is compound`, () => {
      const parsed = parseCommand(command)
      expect(parsed._tag).toBe("Compound")
      if (parsed._tag === "Compound") expect(parsed.reason).toMatch(reason)
    })
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
    expect(always("python3 -m pytest")).toEqual({ _tag: "CommandPrefix", words: ["python3", "pytest"] })
  })

  it("a git subcommand does not cover another one", () => {
    expect(allows("git status", "git status -s")).toBe(true)
    expect(allows("git status", "git push --force")).toBe(false)
    expect(allows("git status", "git -c core.pager=sh status")).toBe(false)
  })

  it("a Tool scope covers every call of that tool and nothing else", () => {
    const scopes: Array<Scope> = [{ _tag: "Tool", name: "mcp__github__list_issues" }]
    expect(isAllowed(scopes, { tool: "mcp__github__list_issues", input: {}, cwd: "/p" })).toBe(true)
    expect(isAllowed(scopes, bash("ls"))).toBe(false)
  })
})

describe("isAllowed for files", () => {
  const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-scope-")))
  const edit = (file: string) => ({ tool: "edit_file", input: { path: file, old: "a", new: "b" }, cwd: project })
  const write = (file: string) => ({ tool: "write_file", input: { path: file, content: "x" }, cwd: project })

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
    const read = (file: string) => ({ tool: "read_file", input: { path: file }, cwd: project })
    const [choice] = alwaysChoices(read("/etc/hosts"))
    expect(choice.scope).toEqual({ _tag: "File", path: "/etc/hosts" })
    expect(isAllowed([choice.scope], read("/etc/hosts"))).toBe(true)
    expect(isAllowed([choice.scope], read("/etc/passwd"))).toBe(false)
    expect(isAllowed([choice.scope], write("/etc/hosts"))).toBe(false)
  })

  it("a grep or glob outside the project offers that path, not every call of the tool", () => {
    for (const tool of ["grep", "glob"]) {
      const search = (where: string) => ({ tool, input: { pattern: "x", path: where }, cwd: project })
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
})
