// The user's own slash commands in the terminal: Markdown files of the project's .mm/commands/
// and the user's ~/.config/mm/commands/, listed by /help and sent, filled in, as the question.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterEach, beforeEach, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const REVIEW = [
  "---",
  "description: review the changes under a path",
  "argument-hint: \"[path]\"",
  "allowed-tools: Bash(git diff:*)",
  "---",
  "Review what changed under $ARGUMENTS and list the problems you find.",
  ""
].join("\n")

let server: FakeModelServer
let xdg: string

beforeEach(async () => {
  server = await startFakeModelServer()
  xdg = fs.mkdtempSync(path.join(os.tmpdir(), "mm-xdg-"))
})

afterEach(async () => {
  await server.close()
  fs.rmSync(xdg, { recursive: true, force: true })
})

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

/** The last user message of each request the fake server received. */
const asked = () =>
  server.completions().map((request) => {
    const users = request.body.messages.filter((message: any) => message.role === "user")
    return users[users.length - 1].content as string
  })

describe("the user's own commands in the terminal", () => {
  it("lists them in /help and sends their filled text, with $ARGUMENTS and $1", async () => {
    const project = tempProject(configFor(server.url))
    write(path.join(project, ".mm", "commands", "review.md"), REVIEW)
    write(path.join(project, ".mm", "commands", "git", "commit.md"), "Commit with the message $1, then $2.\n")
    write(path.join(xdg, "mm", "commands", "hello.md"), "# Say hello\nSay hello to $ARGUMENTS.\n")
    // the project's wins over the user's of the same name
    write(path.join(xdg, "mm", "commands", "review.md"), "the user's review\n")
    server.push({ text: "reviewed" }, { text: "committed" }, { text: "hello" })
    const { stdout, stderr, code } = await runMm(
      project,
      ["/help", "/review src", "/git:commit \"fix the bug\" push", "/hello world"],
      [],
      { XDG_CONFIG_HOME: xdg }
    )
    expect(code).toBe(0)
    expect(stdout).toContain("Your commands (Markdown files in .mm/commands/ and ~/.config/mm/commands/):")
    expect(stdout).toMatch(/\/review \[path\] +review the changes under a path\n/)
    expect(stdout).toMatch(/\/git:commit +Commit with the message \$1, then \$2\.\n/)
    expect(stdout).toMatch(/\/hello +Say hello\n/)
    expect(stderr + stdout).toContain("/review — sent the prompt of .mm/commands/review.md")
    expect(asked()).toEqual([
      "Review what changed under src and list the problems you find.",
      "Commit with the message fix the bug, then push.",
      "# Say hello\nSay hello to world."
    ])
  })

  it("skips a bad name and a built-in's name with one line each, and reads .claude/commands only when asked", async () => {
    const project = tempProject(configFor(server.url))
    write(path.join(project, ".mm", "commands", "bad name.md"), "never\n")
    write(path.join(project, ".mm", "commands", "help.md"), "never\n")
    write(path.join(project, ".claude", "commands", "claude-only.md"), "From Claude's folder: $ARGUMENTS\n")
    server.push({ text: "ok" })
    const without = await runMm(project, ["/claude-only x"], [], { XDG_CONFIG_HOME: xdg })
    expect(without.stderr).toContain(
      "commands: .mm/commands/bad name.md skipped — a name has letters, digits, - and _ only"
    )
    expect(without.stderr).toContain("commands: .mm/commands/help.md skipped — /help is a built-in command")
    expect(without.stdout + without.stderr).toContain("unknown command /claude-only")
    expect(server.completions()).toHaveLength(0)
    fs.appendFileSync(path.join(project, "agent.yaml"), "commands:\n  claude: true\n")
    const withClaude = await runMm(project, ["/claude-only x"], [], { XDG_CONFIG_HOME: xdg })
    expect(withClaude.code).toBe(0)
    expect(asked()).toEqual(["From Claude's folder: x"])
  })

  it("does not offer an untrusted project's commands, and says so in one line", async () => {
    const project = tempProject(["model:", `  url: ${server.url}`, "  name: fake-model", "permissions: ask"])
    write(path.join(project, ".mm", "commands", "review.md"), REVIEW)
    write(path.join(xdg, "mm", "commands", "mine.md"), "mine\n")
    const { stdout, stderr } = await runMm(project, ["/help", "/review src"], [], {
      XDG_CONFIG_HOME: xdg,
      MM_TRUST_PROJECT: undefined
    })
    expect(stderr).toContain("commands: .mm/commands skipped — this project is not trusted")
    expect(stdout).toContain("  /mine")
    expect(stdout).not.toContain("/review [path]")
    expect(stdout + stderr).toContain("unknown command /review")
    expect(server.completions()).toHaveLength(0)
  })

  it("Tab completes a command's name, and a model id after /model, on a terminal", async () => {
    await server.close()
    server = await startFakeModelServer({ models: ["fake-model", "qwen-big", "qwen-small"] })
    const project = tempProject(configFor(server.url))
    write(path.join(project, ".mm", "commands", "git", "commit.md"), "Commit as $1.\n")
    server.push({ text: "committed" })
    const mm = new PtyMm(project, { XDG_CONFIG_HOME: xdg })
    await mm.waitFor(/> /)
    let mark = mm.out.length
    mm.type("/git:c\t")
    await mm.waitFor(/\/git:commit \r/, mark)
    mm.type("fix\r")
    await mm.waitForText(/committed[\s\S]*> /, mark)
    mark = mm.out.length
    mm.type("/model qwen-b\t")
    await mm.waitFor(/\/model qwen-big \r/, mark)
    mm.type("\r")
    await mm.waitForText(/model: qwen-big from now on/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(asked()).toEqual(["Commit as fix."])
  })
})
