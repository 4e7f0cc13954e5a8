import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { DEFAULT_RUN, parseArgs, usageText } from "../../src/cli/Args"
import { libraryRunArgs } from "../../src/cli/Cli"
import {
  childrenOf,
  type CommandPath,
  optionsOf,
  optionSyntax,
  ROOT_OPTIONS,
  TOP_COMMANDS
} from "../../src/cli/CommandLine"
import { helpText } from "../../src/cli/Help"
import { flag, type Given, value } from "../../src/cli/Subcommands"

const run = (args: ReadonlyArray<string>) => {
  const parsed = parseArgs(args)
  if (parsed._tag !== "Run") throw new Error(`not a run: ${JSON.stringify(parsed)}`)
  return parsed.run
}

describe("reading the command line by hand", () => {
  it("takes the common forms", () => {
    expect(run([])).toEqual(DEFAULT_RUN)
    expect(run(["why", "is", "it", "slow?"]).question).toBe("why is it slow?")
    expect(run(["-p", "q"])).toMatchObject({ print: true, question: "q" })
    expect(run(["q", "--print", "--output-format", "json", "--verbose", "-y"])).toMatchObject({
      print: true,
      question: "q",
      outputFormat: "json",
      verbose: true,
      yes: true
    })
    expect(run(["--config=x.yaml", "-c", "y.yaml"]).config).toBe("y.yaml")
    expect(run(["--continue", "-p", "more"]).start).toEqual({ _tag: "Latest" })
    expect(run(["--resume", "20261128-16", "go on"])).toMatchObject({
      start: { _tag: "Id", id: "20261128-16" },
      question: "go on"
    })
    expect(run(["--resume=9c03be11"]).start).toEqual({ _tag: "Id", id: "9c03be11" })
    // a word that cannot be part of an id is the question, and --resume picks from a list
    expect(run(["--resume", "fix the tests"])).toMatchObject({ start: { _tag: "Pick" }, question: "fix the tests" })
    expect(run(["--resume"]).start).toEqual({ _tag: "Pick" })
    expect(run(["--", "-p", "is a question"])).toMatchObject({ print: false, question: "-p is a question" })
    expect(run(["--fork", "9c03be11:2", "-p", "q"])).toMatchObject({
      start: { _tag: "Fork", id: "9c03be11", turn: 2 },
      print: true,
      question: "q"
    })
    expect(run(["--fork=20261128-16"]).start).toEqual({ _tag: "Fork", id: "20261128-16" })
  })

  it("refuses bad usage with one line", () => {
    const usage = (args: ReadonlyArray<string>) => {
      const parsed = parseArgs(args)
      return parsed._tag === "Usage" ? parsed.message : parsed._tag
    }
    expect(usage(["--nope"])).toBe("unknown option --nope")
    expect(usage(["--nope=1"])).toBe("unknown option --nope")
    expect(usage(["-x"])).toBe("unknown option -x")
    expect(usage(["--wizard"])).toBe("unknown option --wizard")
    expect(usage(["--log-level", "debug"])).toBe("unknown option --log-level")
    expect(usage(["--output-format", "xml", "-p", "q"])).toBe("--output-format takes text or json, not \"xml\"")
    expect(usage(["--output-format", "json", "q"])).toBe("--output-format applies to -p (print mode) only")
    expect(usage(["--continue", "--resume", "abc"])).toBe("--continue and --resume cannot be used together")
    expect(usage(["-p", "--resume"])).toMatch(/^--resume needs an id with -p/)
    expect(usage(["--config"])).toBe("--config needs a path")
    expect(usage(["--fork"])).toMatch(/^--fork needs a session id/)
    expect(usage(["--fork", "abc:x"])).toMatch(/^--fork needs a session id/)
    expect(usage(["--resume", "abc", "--fork", "abc"])).toBe("--resume and --fork cannot be used together")
    expect(usage(["--fork", "abc", "--continue"])).toBe("--continue and --fork cannot be used together")
    expect(usage(["--print=yes"])).toBe("--print takes no value")
    expect(usage(["sessions", "search", "--regex", "-i", "--json", "x"])).toBe("Subcommand")
  })

  it("leaves a subcommand's line to @effect/cli, unless it asks for its page", () => {
    expect(parseArgs(["sessions", "show", "abc"])).toEqual({
      _tag: "Subcommand",
      top: "sessions",
      args: ["show", "abc"]
    })
    expect(parseArgs(["checkpoints"])).toEqual({ _tag: "Subcommand", top: "checkpoints", args: [] })
    expect(parseArgs(["acp", "-c", "a.yaml"])).toEqual({ _tag: "Subcommand", top: "acp", args: ["-c", "a.yaml"] })
    // after --, -h is an operand (a pattern to search for)
    expect(parseArgs(["sessions", "search", "--", "-h"])._tag).toBe("Subcommand")
  })

  it("answers --help (after options of mm that are right), --version and --completions itself", () => {
    expect(parseArgs(["-h"])).toEqual({ _tag: "Help", topic: "mm" })
    expect(parseArgs(["-p", "q", "--help"])).toEqual({ _tag: "Help", topic: "mm" })
    expect(parseArgs(["sessions", "rm", "--help"])).toEqual({ _tag: "Help", topic: "sessions" })
    expect(parseArgs(["checkpoints", "-h"])).toEqual({ _tag: "Help", topic: "checkpoints" })
    expect(parseArgs(["init", "-h"])).toEqual({ _tag: "Help", topic: "init" })
    expect(parseArgs(["--nope", "--help"])._tag).toBe("Usage")
    expect(parseArgs(["sessions", "show", "--help"])).toEqual({ _tag: "Help", topic: "sessions" })
    expect(parseArgs(["-p", "--version"])).toEqual({ _tag: "Version" })
    expect(parseArgs(["--completions", "zsh"])).toEqual({ _tag: "Completions", shell: "zsh" })
    expect(parseArgs(["--completions=fish"])).toEqual({ _tag: "Completions", shell: "fish" })
    const bad = parseArgs(["--completions", "tcsh"])
    expect(bad._tag === "Usage" && bad.message).toBe("--completions takes sh, bash, fish or zsh, not \"tcsh\"")
  })

  it("documents in --help every option it reads, and each usage error names the command's forms", () => {
    for (const option of ROOT_OPTIONS) expect(helpText("mm")).toContain(optionSyntax(option))
    for (const top of TOP_COMMANDS) {
      const page = helpText(top)
      for (const path of [top, ...childrenOf(top)] as Array<CommandPath>) {
        for (const option of optionsOf(path)) expect(page, `${path} ${option.long}`).toContain(optionSyntax(option))
      }
      expect(page.split("\n")[0]).toMatch(new RegExp(`^mm ${top} — `))
      expect(usageText(top)).toMatch(new RegExp(`^usage: mm ${top}`))
    }
    expect(helpText("sessions")).toContain("mm sessions rm ID… [-y]")
    expect(usageText("mm")).toMatch(/^usage: mm \[options\] \[QUESTION\] /)
  })

  it.effect("agrees with @effect/cli's declaration, built from the same table", () =>
    Effect.gen(function*() {
      const lines: Array<ReadonlyArray<string>> = [
        [],
        ["a question"],
        ["why", "is", "it", "slow?"],
        ["-p", "q"],
        ["--print", "--output-format", "json", "--verbose", "q"],
        ["-c", "x.yaml", "--yes", "q"],
        ["--config=x.yaml", "q"],
        ["--continue", "-p", "more"],
        ["--resume", "20261128-16", "-p", "q"],
        ["--resume", "9c03be11"],
        ["--fork", "9c03be11:2", "-p", "q"],
        ["--", "-p", "is a question"]
      ]
      // and each option of mm that @effect/cli declares, alone before a question, by each of its names
      for (const option of ROOT_OPTIONS) {
        if (["--help", "--version", "--completions", "--no-color"].includes(option.long)) continue
        const value = "choices" in option ? [option.choices[0]] : "value" in option ? ["9c03be11"] : []
        const print = option.long === "--output-format" ? ["-p"] : []
        for (const name of "short" in option ? [option.long, option.short] : [option.long]) {
          lines.push([...print, name, ...value, "q"])
        }
      }
      for (const args of lines) {
        expect(yield* libraryRunArgs(args), args.join(" ")).toEqual(run(args))
      }
    }))

  it("a subcommand's handler reads only the options its command takes: another one does not compile", () => {
    const given: Given & { readonly path: "sessions show" } = {
      path: "sessions show",
      options: new Map([["--config", "a.yaml"]]),
      operands: ["abc"]
    }
    expect(value(given, "--config")).toBe("a.yaml")
    // @ts-expect-error mm sessions show takes no --json
    expect(flag(given, "--json")).toBe(false)
  })
})
