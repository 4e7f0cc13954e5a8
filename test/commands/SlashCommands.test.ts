import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { compactedLine, sentence } from "../../src/commands/CommandWords"
import { type CommandHandlers, readCommand, SLASH_COMMANDS } from "../../src/commands/SlashCommands"
import { REPO_ROOT } from "../support/paths"

describe("the registry of slash commands", () => {
  it("names each command once, aliases included, and each is offered somewhere", () => {
    const words = SLASH_COMMANDS.flatMap((command) => [command.name, ...command.aliases])
    expect(new Set(words).size).toBe(words.length)
    for (const command of SLASH_COMMANDS) expect(command.facades.length).toBeGreaterThan(0)
  })

  it("reads a line as a command of the façade, another façade's, an unknown one, or a question", () => {
    expect(readCommand("/new", "acp")).toEqual({ _tag: "Command", name: "new", arg: "" })
    expect(readCommand("  /new  ", "acp")).toEqual({ _tag: "Command", name: "new", arg: "" })
    expect(readCommand("/compact keep the file names\nand the tests ", "acp")).toEqual({
      _tag: "Command",
      name: "compact",
      arg: "keep the file names\nand the tests"
    })
    expect(readCommand("/quit", "terminal")).toEqual({ _tag: "Command", name: "exit", arg: "" })
    expect(readCommand("/newish", "acp")).toEqual({ _tag: "Unknown", word: "/newish" })
    expect(readCommand("/sessions all", "acp")).toMatchObject({ _tag: "Elsewhere", word: "/sessions" })
    expect(readCommand("/sessions all", "terminal")).toEqual({ _tag: "Command", name: "sessions", arg: "all" })
    expect(readCommand("/etc/hosts: what is in it?", "terminal")).toBeUndefined()
    expect(readCommand("please /new", "acp")).toBeUndefined()
  })

  it("a façade's handlers are exactly its commands: one missing, or one too many, does not compile", () => {
    const handlers: CommandHandlers<"acp", number> = {
      new: 1,
      compact: 2,
      init: 7,
      changes: 3,
      undo: 4,
      permissions: 5
    }
    // @ts-expect-error the editor offers /permissions: its handler cannot be left out
    const missing: CommandHandlers<"acp", number> = { new: 1, compact: 2, init: 7, changes: 3, undo: 4 }
    const extra: CommandHandlers<"acp", number> = {
      ...handlers,
      // @ts-expect-error /sessions is not offered to the editor: no handler for it
      sessions: 6
    }
    expect([Object.keys(handlers).length, Object.keys(missing).length, Object.keys(extra).length]).toEqual([6, 5, 7])
  })

  it("says what /compact did in one wording, a line on the terminal and a sentence in the editor", () => {
    const done = { _tag: "Compacted", replaced: 4, tokensBefore: 900, tokensAfter: 300, warning: undefined } as const
    expect(compactedLine(done)).toBe("compacted: 4 older message(s) replaced by a summary (about 900 → 300 tokens)")
    expect(sentence(compactedLine(done))).toBe(
      "Compacted: 4 older message(s) replaced by a summary (about 900 → 300 tokens)."
    )
    expect(sentence(compactedLine({ _tag: "Nothing" }))).toMatch(/^Nothing to compact yet: .*\.$/)
  })

  it("is the table of docs/reference/slash-commands.md: each command, on the terminal and in the editor as offered", () => {
    const page = fs.readFileSync(path.join(REPO_ROOT, "docs/reference/slash-commands.md"), "utf8")
    const rows = page.split("\n").filter((line) => line.startsWith("| `/"))
    for (const command of SLASH_COMMANDS) {
      const row = rows.find((line) => new RegExp(`^\\| \`/${command.name}[\\s\`]`).test(line))
      expect(row, `/${command.name} has a row`).toBeDefined()
      const [, terminal, editor] = row!.split(" | ")
      const offered = command.facades as ReadonlyArray<string>
      expect([terminal.startsWith("yes"), editor.startsWith("yes")], `/${command.name}`).toEqual([
        offered.includes("terminal"),
        offered.includes("acp")
      ])
    }
  })
})
