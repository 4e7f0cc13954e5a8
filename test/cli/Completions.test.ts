import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { parseArgs } from "../../src/cli/Args"
import { readSubcommand } from "../../src/cli/Cli"
import {
  childrenOf,
  type CommandPath,
  COMMANDS,
  optionsOf,
  type OptionSpec,
  ROOT_OPTIONS,
  specOf,
  TOP_COMMANDS,
  type TopCommand
} from "../../src/cli/CommandLine"
import { completionScript } from "../../src/cli/Completions"

/** What the table says each place offers: its options' names, and the words one below it. */
const expected = (): Map<string, { options: Array<string>; members: Array<string> }> =>
  new Map([
    ["mm", { options: ROOT_OPTIONS.flatMap(names).sort(), members: [...TOP_COMMANDS].sort() }],
    ...(Object.keys(COMMANDS) as Array<CommandPath>).map((path) =>
      [`mm ${path}`, {
        options: optionsOf(path).flatMap(names).sort(),
        members: childrenOf(path).map((child) => child.split(" ").at(-1)!).sort()
      }] as const
    )
  ])

const names = (option: { readonly long: string; readonly short?: string }) =>
  option.short === undefined ? [option.long] : [option.short, option.long]

/** Each place of a script, read back from its text. */
const offered = (shell: "bash" | "zsh" | "fish") => {
  const script = completionScript(shell)
  const places = new Map<string, { options: Array<string>; members: Array<string> }>()
  const at = (place: string) => {
    if (!places.has(place)) places.set(place, { options: [], members: [] })
    return places.get(place)!
  }
  for (const line of script.split("\n")) {
    if (shell === "bash") {
      const arm = /^ {8}'([^']+)'\) if .* then words='([^']*)'; elif .* then words='([^']*)'; fi ;;$/.exec(line)
      if (arm !== null) places.set(arm[1], { options: arm[2].split(" ").sort(), members: words(arm[3]) })
    } else if (shell === "zsh") {
      const arm = /^ {8}\('([^']+)'\) if .* then items=\((.*)\); elif .* then items=\((.*)\); fi ;;$/.exec(line)
      if (arm !== null) {
        const items = (text: string) => [...text.matchAll(/(?:^| )'([^':]+):/g)].map((m) => m[1]).sort()
        places.set(arm[1], { options: items(arm[2]), members: items(arm[3]) })
      }
    } else {
      const option = /^complete -c mm -n 'test \(__mm_at\) = "([^"]+)"' (?:-s (\S+) )?-l (\S+)/.exec(line)
      if (option !== null) {
        at(option[1]).options.push(...(option[2] === undefined ? [] : [`-${option[2]}`]), `--${option[3]}`)
      }
      const member = /^complete -c mm -n 'test \(__mm_at next\) = "([^"]+)"' -a (\S+)/.exec(line)
      if (member !== null) at(member[1]).members.push(member[2])
    }
  }
  for (const place of places.values()) {
    place.options.sort()
    place.members.sort()
  }
  return places
}

const words = (text: string) => (text === "" ? [] : text.split(" ").sort())

describe("the shell completions", () => {
  it("offer, in each shell and at each command, exactly the options and subcommands mm reads", () => {
    for (const shell of ["bash", "zsh", "fish"] as const) {
      expect(offered(shell), shell).toEqual(expected())
    }
  })

  it("offer no option of a command-line library that mm does not read", () => {
    for (const shell of ["sh", "bash", "zsh", "fish"] as const) {
      const script = completionScript(shell)
      expect(script, shell).not.toMatch(/log-level|wizard/)
      expect(script.length).toBeGreaterThan(500)
    }
    expect(completionScript("sh")).toBe(completionScript("bash"))
  })

  it.effect("offer, at each command, only options that mm's parsers then take there", () =>
    Effect.gen(function*() {
      let tried = 0
      for (const [place, { options }] of offered("bash")) {
        const words = place.split(" ").slice(1)
        const path = words.length === 0 ? undefined : words.join(" ") as CommandPath
        const operands = path === undefined ? [] : Array.from({ length: specOf(path).operands?.min ?? 0 }, () => "w")
        const specs: ReadonlyArray<OptionSpec> = path === undefined ? ROOT_OPTIONS : optionsOf(path)
        for (const name of options) {
          const option = specs.find((spec) => spec.long === name || spec.short === name)!
          const value = option.value === undefined ? [] : [option.choices?.[0] ?? "9c03be11"]
          const line = [...words, ...operands, name, ...value]
          tried++
          if (path === undefined) {
            // mm's own: read by hand (--output-format wants -p)
            const parsed = parseArgs(name === "--output-format" ? ["-p", ...line] : line)
            expect(parsed._tag, line.join(" ")).not.toBe("Usage")
          } else {
            const reading = yield* readSubcommand(words[0] as TopCommand, line.slice(1))
            expect(reading._tag, line.join(" ")).toBe(name === "-h" || name === "--help" ? "Help" : "Command")
          }
        }
      }
      expect(tried).toBeGreaterThan(40)
    }))
})
