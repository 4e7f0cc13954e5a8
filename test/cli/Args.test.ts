import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { DEFAULT_RUN, parseArgs } from "../../src/cli/Args"
import { libraryRunArgs } from "../../src/cli/Cli"
import { helpText } from "../../src/cli/Help"

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
    expect(usage(["sessions", "rm", "--force"])).toBe("unknown option --force")
    expect(usage(["init", "--yes"])).toBe("unknown option --yes")
    expect(usage(["--output-format", "xml", "-p", "q"])).toBe("--output-format takes text or json, not \"xml\"")
    expect(usage(["--output-format", "json", "q"])).toBe("--output-format applies to -p (print mode) only")
    expect(usage(["--continue", "--resume", "abc"])).toBe("--continue and --resume cannot be used together")
    expect(usage(["-p", "--resume"])).toMatch(/^--resume needs an id with -p/)
    expect(usage(["--config"])).toBe("--config needs a path")
    expect(usage(["--fork"])).toMatch(/^--fork needs a session id/)
    expect(usage(["--fork", "abc:x"])).toMatch(/^--fork needs a session id/)
    expect(usage(["--resume", "abc", "--fork", "abc"])).toBe("--resume and --fork cannot be used together")
    expect(usage(["--fork", "abc", "--continue"])).toBe("--continue and --fork cannot be used together")
    expect(usage(["sessions", "search", "--regex", "-i", "--json", "x"])).toBe("Delegate")
  })

  it("leaves subcommands and completions to @effect/cli, and answers --help itself", () => {
    expect(parseArgs(["sessions", "show", "abc"])._tag).toBe("Delegate")
    expect(parseArgs(["sessions", "rm", "a", "b", "--yes"])._tag).toBe("Delegate")
    expect(parseArgs(["init", "--url", "http://x", "--force"])._tag).toBe("Delegate")
    expect(parseArgs(["acp", "-c", "a.yaml"])._tag).toBe("Delegate")
    expect(parseArgs(["--completions", "bash"])._tag).toBe("Delegate")
    expect(parseArgs(["-h"])).toEqual({ _tag: "Help", topic: "mm" })
    expect(parseArgs(["-p", "q", "--help"])).toEqual({ _tag: "Help", topic: "mm" })
    expect(parseArgs(["sessions", "rm", "--help"])).toEqual({ _tag: "Help", topic: "sessions" })
    expect(parseArgs(["init", "-h"])).toEqual({ _tag: "Help", topic: "init" })
  })

  it.effect("agrees with @effect/cli's declaration of the same options", () =>
    Effect.gen(function*() {
      const lines: ReadonlyArray<ReadonlyArray<string>> = [
        [],
        ["a question"],
        ["-p", "q"],
        ["--print", "--output-format", "json", "--verbose", "q"],
        ["-c", "x.yaml", "--yes", "q"],
        ["--continue", "-p", "more"],
        ["--resume", "20261128-16", "-p", "q"],
        ["--resume", "9c03be11"]
      ]
      for (const args of lines) {
        expect(yield* libraryRunArgs(args)).toEqual(run(args))
      }
    }))

  it("documents in --help every option it reads", () => {
    const help = helpText("mm")
    for (
      const flag of [
        "-c, --config",
        "-p, --print",
        "--output-format",
        "--continue",
        "--resume",
        "-y, --yes",
        "--verbose",
        "--completions",
        "--help",
        "--version"
      ]
    ) {
      expect(help).toContain(flag)
    }
    expect(helpText("sessions")).toContain("mm sessions rm ID… [--yes]")
    expect(helpText("init")).toContain("--force")
  })
})
