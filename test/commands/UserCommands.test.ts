// The user's own commands as files: where they are read, which wins, what a file may say,
// and how a command's arguments fill its text.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import {
  argumentWords,
  type CommandPlaces,
  commandsQuestionLine,
  commandsWaiting,
  fillCommand,
  findUserCommand,
  loadUserCommands,
  projectCommands,
  projectTrusted
} from "../../src/commands/UserCommands"
import type { LoadedConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { recordCommandsTrust, recordTrust, trustedHash, trustFileOf, trustsCommands } from "../../src/config/TrustStore"

const temp = (prefix: string) => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
}

const places = (over: Partial<CommandPlaces> = {}): CommandPlaces => {
  const home = temp("mm-home-")
  return { cwd: temp("mm-cwd-"), home, env: {}, claude: false, trusted: () => true, ...over }
}

const command = (body: string) => ({ name: "x", description: "", hint: "", body, shown: "x.md" })

describe("the user's own commands", () => {
  it.effect("a project's command wins over the user's, mm's folders over Claude's, and subfolders give folder:name", () =>
    Effect.gen(function*() {
      const at = places({ claude: true })
      const user = path.join(at.home, ".config", "mm", "commands")
      write(path.join(at.cwd, ".mm", "commands", "review.md"), "project review\n")
      write(path.join(user, "review.md"), "user review\n")
      write(path.join(user, "git", "commit.md"), "commit\n")
      write(path.join(at.cwd, ".claude", "commands", "review.md"), "claude review\n")
      write(path.join(at.cwd, ".claude", "commands", "only.md"), "claude only\n")
      write(path.join(at.home, ".claude", "commands", "git", "commit.md"), "claude commit\n")
      const { commands, notes } = yield* loadUserCommands(at)
      expect(notes).toEqual([])
      expect(commands.map((c) => [c.name, c.body, c.shown])).toEqual([
        ["git:commit", "commit", "~/.config/mm/commands/git/commit.md"],
        ["only", "claude only", ".claude/commands/only.md"],
        ["review", "project review", ".mm/commands/review.md"]
      ])
    }))

  it.effect("follows no link in a project's folder (it could make a command of any file), and the user's links", () =>
    Effect.gen(function*() {
      const at = places()
      const secret = path.join(at.home, "credentials")
      write(secret, "aws_secret_access_key = x\n")
      write(path.join(at.cwd, ".mm", "commands", "plain.md"), "plain\n")
      fs.symlinkSync(secret, path.join(at.cwd, ".mm", "commands", "leak.md"))
      fs.symlinkSync(path.dirname(secret), path.join(at.cwd, ".mm", "commands", "home"))
      const user = path.join(at.home, ".config", "mm", "commands")
      write(path.join(at.home, "dotfiles", "mine.md"), "mine\n")
      fs.mkdirSync(user, { recursive: true })
      fs.symlinkSync(path.join(at.home, "dotfiles", "mine.md"), path.join(user, "mine.md"))
      const { commands } = yield* loadUserCommands(at)
      expect(commands.map((c) => [c.name, c.body])).toEqual([["mine", "mine"], ["plain", "plain"]])
      expect(projectCommands(at)?.names).toEqual(["plain"])
    }))

  it.effect("reads description and argument-hint as Claude Code's files write them, and skips a bad file in one line", () =>
    Effect.gen(function*() {
      const at = places()
      const dir = path.join(at.cwd, ".mm", "commands")
      write(
        path.join(dir, "fix.md"),
        "---\ndescription: fix an issue\nargument-hint: <issue>\nmodel: big\nallowed-tools: Bash(git:*)\n---\nFix issue $1.\n"
      )
      // a YAML list, and what YAML cannot read at all: both taken as their lines write them
      write(path.join(dir, "commit.md"), "---\nargument-hint: [message]\ndescription: 'commit it'\n---\nCommit.\n")
      write(
        path.join(dir, "pr.md"),
        "---\nargument-hint: [pr-number] [priority]\ndescription: [unclosed\n---\nPR $1.\n"
      )
      write(path.join(dir, "open.md"), "---\ndescription: never closed\nbody\n")
      write(path.join(dir, "big.md"), "x".repeat(70 * 1024))
      fs.mkdirSync(path.join(dir, "pipe.md"))
      const { commands, notes } = yield* loadUserCommands(at)
      expect(commands).toEqual([
        {
          name: "commit",
          description: "commit it",
          hint: "[message]",
          body: "Commit.",
          shown: ".mm/commands/commit.md"
        },
        {
          name: "fix",
          description: "fix an issue",
          hint: "<issue>",
          body: "Fix issue $1.",
          shown: ".mm/commands/fix.md"
        },
        {
          name: "pr",
          description: "[unclosed",
          hint: "[pr-number] [priority]",
          body: "PR $1.",
          shown: ".mm/commands/pr.md"
        }
      ])
      expect(notes).toEqual([
        "commands: .mm/commands/big.md skipped — larger than 64 KiB",
        "commands: .mm/commands/open.md skipped — its front matter has no closing --- line"
      ])
    }))

  it.effect("leaves an untrusted project's folder unread, with one line, and asks for trust only when it has files", () =>
    Effect.gen(function*() {
      let asked = 0
      const trusted = () => (asked++, false)
      const empty = places({ trusted })
      write(path.join(empty.home, ".config", "mm", "commands", "mine.md"), "mine\n")
      expect((yield* loadUserCommands(empty)).commands.map((c) => c.name)).toEqual(["mine"])
      expect(asked).toBe(0)
      const at = places({ trusted })
      write(path.join(at.cwd, ".mm", "commands", "review.md"), "review\n")
      const { commands, notes } = yield* loadUserCommands(at)
      expect(commands).toEqual([])
      expect(notes).toEqual([
        "commands: .mm/commands skipped — this project is not trusted (docs/how-to/custom-commands.md)"
      ])
      expect(asked).toBe(1)
    }))

  it("trusts a project's commands as their files stand: recorded, or with --trust; a change asks again", () => {
    const cwd = temp("mm-cwd-")
    const env = { XDG_STATE_HOME: temp("mm-state-") }
    const loaded: LoadedConfig = { config: defaultConfig(), file: undefined }
    const at = { cwd, home: temp("mm-home-"), env, claude: false }
    // no folder: nothing to trust, nothing waits
    expect(projectCommands(at)).toBeUndefined()
    expect(commandsWaiting(loaded, cwd, env)).toBeUndefined()
    write(path.join(cwd, ".mm", "commands", "review.md"), "review\n")
    write(path.join(cwd, ".mm", "commands", "help.md"), "a built-in name\n")
    const waiting = commandsWaiting(loaded, cwd, env)!
    expect(waiting).toMatchObject({ names: ["review"], shown: [".mm/commands"] })
    expect(commandsQuestionLine(waiting)).toBe(
      "  - its own slash commands /review (prompts from .mm/commands, sent when you type them)"
    )
    expect(projectTrusted(loaded, cwd, env)()).toBe(false)
    expect(projectTrusted({ ...loaded, trustAll: true }, cwd, env)()).toBe(true)
    // a trusted configuration is not trusted commands
    recordTrust(cwd, path.join(cwd, "agent.yaml"), "hash", env)
    expect(projectTrusted(loaded, cwd, env)()).toBe(false)
    const file = recordCommandsTrust(cwd, waiting.folder, waiting.hash, env)
    expect(projectTrusted(loaded, cwd, env)()).toBe(true)
    const store = JSON.parse(fs.readFileSync(file, "utf8"))
    expect(Object.keys(store.files)).toEqual([path.join(cwd, "agent.yaml")])
    expect(store.commands[path.join(cwd, ".mm", "commands")].hash).toBe(waiting.hash)
    // a changed file, an added one: asked again
    write(path.join(cwd, ".mm", "commands", "review.md"), "review it all\n")
    expect(commandsWaiting(loaded, cwd, env)?.hash).not.toBe(waiting.hash)
    expect(projectTrusted(loaded, cwd, env)()).toBe(false)
  })

  it("reads a trust store written before it kept commands", () => {
    const cwd = temp("mm-cwd-")
    const env = { XDG_STATE_HOME: temp("mm-state-") }
    const config = path.join(cwd, "agent.yaml")
    const file = trustFileOf(cwd, env)
    write(file, JSON.stringify({ version: 1, files: { [config]: { hash: "old", at: "then" } } }))
    fs.chmodSync(file, 0o600)
    expect(trustedHash(cwd, config, env)).toBe("old")
    expect(trustsCommands(cwd, path.join(cwd, ".mm", "commands"), "x", env)).toBe(false)
    recordCommandsTrust(cwd, path.join(cwd, ".mm", "commands"), "x", env)
    expect(trustedHash(cwd, config, env)).toBe("old")
  })

  it("fills $ARGUMENTS with the whole text and $1…$9 with its words, quoted words kept together", () => {
    expect(argumentWords(`"fix the bug" 'and this' plain`)).toEqual(["fix the bug", "and this", "plain"])
    expect(fillCommand(command("Do $ARGUMENTS: $1 / $2 / $3."), `"a b" c`)).toBe(`Do "a b" c: a b / c / .`)
    expect(fillCommand(command("No placeholder."), "extra words")).toBe("No placeholder.\n\nextra words")
    expect(fillCommand(command("No placeholder."), "")).toBe("No placeholder.")
    expect(fillCommand(command("Cost: $5 or $ARGUMENTS"), "$1")).toBe("Cost:  or $1")
  })

  it("finds the command a line starts with; a path or another word is none", () => {
    const review = { ...command("r"), name: "review" }
    const commit = { ...command("c"), name: "git:commit" }
    expect(findUserCommand("/review src lib", [review, commit])).toEqual({ command: review, arg: "src lib" })
    expect(findUserCommand("  /git:commit  ", [review, commit])).toEqual({ command: commit, arg: "" })
    expect(findUserCommand("/reviewer", [review])).toBeUndefined()
    expect(findUserCommand("/review/x", [review])).toBeUndefined()
    expect(findUserCommand("please /review", [review])).toBeUndefined()
  })
})
