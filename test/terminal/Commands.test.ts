import { describe, expect, it } from "@effect/vitest"

import { commandsIn, commandWords, usageOf } from "../../src/commands/SlashCommands"
import { commandMenu, helpText } from "../../src/terminal/Commands"
import { plain } from "../../src/text/Style"

describe("the terminal's slash commands", () => {
  it("draws the terminal's /help, its / menu and its Tab words from the records", () => {
    const help = helpText()
    const menu = commandMenu(plain)
    for (const command of commandsIn("terminal")) {
      expect(help).toContain(`${usageOf(command)}`)
      expect(help).toContain(command.description)
      expect(menu).toMatch(
        new RegExp(`/${command.name} +${command.description.slice(0, 20).replace(/[()[\]|]/g, "\\$&")}`)
      )
    }
    expect(commandWords("terminal")).toContain("/quit")
    expect(commandWords("acp")).toEqual(["/new", "/compact", "/init", "/changes", "/undo", "/permissions"])
  })
})
