import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { libraryReading, type Reading, readSubcommand } from "../../src/cli/Cli"
import {
  type CommandPath,
  COMMANDS,
  optionsOf,
  type OptionSpec,
  ROOT_OPTIONS,
  type Runnable,
  specOf,
  type TopCommand
} from "../../src/cli/CommandLine"
import { subcommandProblem } from "../../src/cli/SubcommandUsage"

/** A reading as the tests compare it: the command and what it was given, or the line of a refusal. */
const shown = (reading: Reading) =>
  reading._tag === "Command"
    ? {
      path: reading.given.path,
      options: Object.fromEntries(reading.given.options),
      operands: reading.given.operands
    }
    : reading._tag === "Usage"
    ? reading.message
    : "Help"

const split = (words: ReadonlyArray<string>) => ({ top: words[0] as TopCommand, args: words.slice(1) })

const read = (words: ReadonlyArray<string>) => Effect.map(readSubcommand(split(words).top, split(words).args), shown)

const paths = Object.keys(COMMANDS) as Array<CommandPath>

const namesOf = (option: OptionSpec): ReadonlyArray<string> =>
  option.short === undefined ? [option.long] : [option.long, option.short]

/** A value the option takes: its first choice, else a word. */
const valueOf = (option: OptionSpec): string => option.choices?.[0] ?? "a.yaml"

/** Every option anyone declares, @effect/cli's own built-ins among them. */
const everyName: ReadonlyArray<{ readonly name: string; readonly option?: OptionSpec }> = [
  ...new Map(
    [...ROOT_OPTIONS, ...paths.flatMap((path) => optionsOf(path))].flatMap((option) =>
      namesOf(option).map((name) => [name, { name, option }] as const)
    )
  ).values(),
  // @effect/cli's own, unknown ones, and known ones in another case (mm's names are case-sensitive)
  ...["--wizard", "--log-level", "--nope", "-x", "--CONFIG", "-C", "--Json"].map((name) => ({ name }))
]

interface Case {
  readonly words: ReadonlyArray<string>
  /** What the table says of it: the command with what it was given, or refused. */
  readonly expected: ReturnType<typeof shown> | "refused"
}

/**
 * Lines drawn from the table: each command that runs, with its operands, alone and with each of
 * its options by each name; with each option it does not take; with an operand too few or too
 * many; each group alone and with a word that is none of its members.
 */
const cases = (): ReadonlyArray<Case> =>
  paths.flatMap((path): ReadonlyArray<Case> => {
    const spec = specOf(path)
    const words = path.split(" ")
    if (!spec.runs) return [{ words, expected: "refused" }, { words: [...words, "nope"], expected: "refused" }]
    const operands = Array.from({ length: spec.operands?.min ?? 0 }, (_, i) => `w${i}`)
    const base = [...words, ...operands]
    const accepted = (options: Record<string, string | true>) => ({ path: path as Runnable, options, operands })
    const own: Array<Case> = [{ words: base, expected: accepted({}) }]
    for (const option of spec.options) {
      for (const name of namesOf(option)) {
        const value = option.value === undefined ? [] : [valueOf(option)]
        own.push({ words: [...base, name, ...value], expected: accepted({ [option.long]: value[0] ?? true }) })
      }
      if (option.value !== undefined) {
        own.push({
          words: [...base, `${option.long}=${valueOf(option)}`],
          expected: accepted({ [option.long]: valueOf(option) })
        })
        own.push({ words: [...base, option.long], expected: "refused" })
      }
    }
    const others = everyName.filter(({ name }) => !optionsOf(path).some((option) => namesOf(option).includes(name)))
    const foreign = others.map(({ name, option }): Case => ({
      words: [...base, name, ...(option?.value === undefined ? [] : [valueOf(option)])],
      expected: "refused"
    }))
    const wanted = spec.operands
    const counts: Array<Case> = [
      ...(wanted !== undefined && wanted.min > 0 ? [{ words: base.slice(0, -1), expected: "refused" as const }] : []),
      ...(wanted?.max !== undefined || wanted === undefined
        ? [{ words: [...base, "extra"], expected: "refused" as const }]
        : [])
    ]
    return [...own, ...foreign, ...counts]
  })

describe("mm's subcommands, parsed by @effect/cli as declared from the table", () => {
  it.effect("@effect/cli takes what the table lists at each command, and refuses what it does not", () =>
    Effect.gen(function*() {
      const all = cases()
      expect(all.length).toBeGreaterThan(150)
      for (const { expected, words } of all) {
        const { args, top } = split(words)
        const library = shown(yield* libraryReading(top, args))
        const mm = yield* read(words)
        if (expected === "refused") {
          expect(typeof library, `@effect/cli: mm ${words.join(" ")}`).toBe("string")
          // the refusal is worded from the table, never in @effect/cli's words
          expect(mm, `mm ${words.join(" ")}`).toBe(subcommandProblem(top, args))
          expect(typeof mm).toBe("string")
        } else {
          expect(library, `@effect/cli: mm ${words.join(" ")}`).toEqual(expected)
          expect(mm, `mm ${words.join(" ")}`).toEqual(expected)
        }
      }
    }))

  it.effect("reads the member, options and operands of a line", () =>
    Effect.gen(function*() {
      expect(yield* read(["sessions"])).toEqual({ path: "sessions", options: {}, operands: [] })
      expect(yield* read(["sessions", "--json", "list", "-c", "a.yaml"])).toEqual({
        path: "sessions list",
        options: { "--json": true, "--config": "a.yaml" },
        operands: []
      })
      expect(yield* read(["sessions", "search", "--regex", "-i", "--json", "--", "-x"])).toEqual({
        path: "sessions search",
        options: { "--regex": true, "--ignore-case": true, "--json": true },
        operands: ["-x"]
      })
      expect(yield* read(["sessions", "rm", "a", "b", "--yes"])).toMatchObject({
        path: "sessions rm",
        operands: ["a", "b"]
      })
      expect(yield* read(["init", "--url=http://x", "--force"])).toMatchObject({
        options: { "--url": "http://x", "--force": true }
      })
      expect(yield* read(["acp", "-c", "a.yaml"])).toEqual({
        path: "acp",
        options: { "--config": "a.yaml" },
        operands: []
      })
      expect(yield* read(["sessions", "show", "--help"])).toBe("Help")
    }))

  it.effect("refuses bad usage with one line in mm's words", () =>
    Effect.gen(function*() {
      expect(yield* read(["checkpoints"])).toBe("checkpoints needs one of: gc")
      expect(yield* read(["sessions", "show"])).toBe("sessions show needs ID")
      expect(yield* read(["sessions", "show", "a", "b"])).toBe("sessions show takes one ID, not also b")
      expect(yield* read(["sessions", "nope"])).toBe("sessions has no subcommand nope (it has: list, show, search, rm)")
      expect(yield* read(["acp", "extra"])).toBe("acp takes nothing more: extra")
      expect(yield* read(["sessions", "--regex", "search", "x"])).toBe("sessions does not take --regex")
      expect(yield* read(["sessions", "--json", "show", "x"])).toBe("sessions show does not take --json")
      expect(yield* read(["init", "--url"])).toBe("--url needs URL")
      expect(yield* read(["init", "--yes"])).toBe("unknown option --yes")
      expect(yield* read(["acp", "-p"])).toBe("unknown option -p")
    }))

  it.effect("refuses @effect/cli's own options, which mm never shows", () =>
    Effect.gen(function*() {
      for (
        const words of [
          ["sessions", "--wizard"],
          ["checkpoints", "gc", "--log-level", "debug"],
          ["init", "--completions", "bash"],
          ["sessions", "list", "--version"]
        ]
      ) {
        expect(yield* read(words)).toBe(`unknown option ${words.find((word) => word.startsWith("--"))}`)
      }
    }))

  it.effect("refuses, in the table's words, what @effect/cli alone would take beyond the table", () =>
    Effect.gen(function*() {
      const beyond: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        // a switch takes a true or false after it
        [["sessions", "search", "--regex", "true", "x"], "sessions search takes one PATTERN, not also x"],
        [["sessions", "search", "-i=yes", "x"], "unknown option -i=yes"],
        [["sessions", "search", "--ignore-case=true", "x"], "--ignore-case takes no value"],
        // the same option twice
        [["sessions", "list", "--json", "--json"], "--json is given twice"]
      ]
      for (const [words, refusal] of beyond) expect(yield* read(words), words.join(" ")).toBe(refusal)
      // not an option after --
      expect(yield* read(["sessions", "search", "--", "--wizard"])).toMatchObject({ operands: ["--wizard"] })
    }))
})
