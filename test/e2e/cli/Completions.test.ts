// The shell completions offer only what mm accepts: each option the bash script offers, at each
// command, is given to dist/mm.js, which must take it (a subcommand goes on to read its
// configuration). And every page mm prints about its command line, `mm checkpoints` alone
// included, is mm's own.
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { COMMANDS, type CommandSpec, type OptionSpec, ROOT_OPTIONS } from "../../../src/cli/CommandLine"
import { MM_BIN, runMm, tempProject } from "../../support/MmProcess"

const project = tempProject(["sessions:", "  enabled: false"])
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-completions-"))

const script = (shell: string): string => {
  const run = spawnSync(process.execPath, [MM_BIN, "--completions", shell], { encoding: "utf8" })
  expect(run.status).toBe(0)
  return run.stdout
}

const bashScript = path.join(dir, "mm.bash")
fs.writeFileSync(bashScript, script("bash"))

/** What bash's completion offers for the words typed so far (the last one being completed). */
const bashOffers = (words: ReadonlyArray<string>): Array<string> =>
  execFileSync("bash", [
    "-c",
    "source \"$1\"; shift; COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); _mm_completions; printf '%s\\n' \"${COMPREPLY[@]}\"",
    "bash",
    bashScript,
    ...words
  ], { cwd: project, encoding: "utf8" }).split("\n").filter((word) => word !== "")

/** Every command the script leads to from `mm`, by the words that name it. */
const places = (words: ReadonlyArray<string> = ["mm"]): Array<ReadonlyArray<string>> => [
  words,
  ...bashOffers([...words, ""]).flatMap((member) => places([...words, member]))
]

const allOptions: ReadonlyArray<OptionSpec> = [
  ...ROOT_OPTIONS,
  ...Object.values(COMMANDS).flatMap((command): ReadonlyArray<OptionSpec> => command.options)
]
const specByName = new Map<string, OptionSpec>(
  allOptions.flatMap((option) =>
    option.short === undefined ? [[option.long, option]] : [[option.long, option], [option.short, option]]
  )
)

/** A value mm accepts for the option: its first choice, an id for --resume and --fork, else a word. */
const valueFor = (name: string): ReadonlyArray<string> => {
  const spec = specByName.get(name)
  if (spec?.value === undefined) return []
  if (spec.choices !== undefined) return [spec.choices[0]]
  return name === "--resume" || name === "--fork" ? ["9c03be11"] : ["x"]
}

/**
 * mm run in a project whose agent.yaml is there (so mm init stops short of replacing it) and
 * with AGENT_CONFIG naming no file (so a subcommand stops once it has read its line).
 */
const mm = (args: ReadonlyArray<string>) => {
  const run = spawnSync(process.execPath, [MM_BIN, ...args], {
    cwd: project,
    encoding: "utf8",
    env: { ...process.env, AGENT_CONFIG: path.join(dir, "none.yaml") },
    input: ""
  })
  return { code: run.status, stdout: run.stdout, stderr: run.stderr }
}

/** Operands enough for the command the words name. */
const operandsFor = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const spec = (COMMANDS as Record<string, CommandSpec | undefined>)[words.slice(1).join(" ")]
  return Array.from({ length: spec?.operands?.min ?? 0 }, () => "9c03be11")
}

describe("mm's command line, as the shells and the help pages show it", () => {
  it("every option the bash completion offers, at every command, is taken by mm there", () => {
    const found = places()
    expect(found.map((words) => words.join(" "))).toEqual(
      expect.arrayContaining(["mm sessions search", "mm checkpoints gc"])
    )
    let tried = 0
    for (const words of found) {
      const offered = bashOffers([...words, "-"])
      expect(offered, words.join(" ")).toContain("--help")
      for (const option of offered) {
        const args = [...words.slice(1), ...operandsFor(words), option, ...valueFor(option)]
        const page = ["-h", "--help", "-v", "--version", "--completions"].includes(option)
        // mm's own options are read in order by hand, before the --help that ends the line here
        const run = mm(page || words.length > 1 ? args : [...args, "--help"])
        tried++
        // not refused: no usage shown, and the line went as far as it leads
        expect(run.stderr, args.join(" ")).not.toMatch(/^usage: /m)
        const [reached, expected] = option === "--completions"
          ? [run.stdout, /^# mm completion for bash/]
          : page || words.length === 1
          ? [run.stdout, /^mm (\d+\.\d+\.\d+|[a-z]+ — )/]
          : words[1] === "init"
          ? [run.stdout + run.stderr, /already exists|wrote /]
          : [run.stderr, /^mm: .*: cannot read the configuration/]
        expect(reached, args.join(" ")).toMatch(expected)
      }
    }
    expect(tried).toBeGreaterThan(40)
  }, 120_000)

  it("the completions of every shell leave out what mm refuses (--log-level, --wizard)", () => {
    for (const shell of ["sh", "bash", "zsh", "fish"]) {
      const text = script(shell)
      expect(text, shell).toContain("output-format")
      expect(text, shell).not.toMatch(/log-level|wizard/)
    }
    expect(spawnSync("bash", ["-n", bashScript]).status).toBe(0)
  })

  for (const shell of ["zsh", "fish"]) {
    const installed = spawnSync(shell, ["--version"]).status === 0
    it.skipIf(!installed)(`the ${shell} script is read by ${shell} without a syntax error`, () => {
      const file = path.join(dir, `mm.${shell}`)
      fs.writeFileSync(file, script(shell))
      const check = spawnSync(shell, ["-n", file], { encoding: "utf8" })
      expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: "" })
    })
  }

  it("mm checkpoints alone is bad usage in mm's words: one line, the command's usage, exit 2", async () => {
    const run = await runMm(project, [], ["checkpoints"])
    expect(run.code).toBe(2)
    expect(run.stdout).toBe("")
    expect(run.stderr.split("\n")).toEqual([
      "mm: checkpoints needs one of: gc",
      expect.stringMatching(/^usage: mm checkpoints gc +remove the copies kept for \/undo/),
      "mm checkpoints --help tells more",
      ""
    ])
  })

  it("each subcommand's --help is mm's page, in the style of mm --help, without escape codes", async () => {
    for (
      const [args, title] of [
        [["sessions", "--help"], "mm sessions — "],
        [["sessions", "show", "-h"], "mm sessions — "],
        [["checkpoints", "--help"], "mm checkpoints — "],
        [["checkpoints", "gc", "--help"], "mm checkpoints — "],
        [["init", "--help"], "mm init — "],
        [["acp", "--help"], "mm acp — "]
      ] as const
    ) {
      const run = await runMm(project, [], args)
      expect(run.code).toBe(0)
      const lines = run.stdout.split("\n")
      expect(lines[0].startsWith(title), lines[0]).toBe(true)
      expect(lines).toContain("USAGE")
      expect(lines).toContain("OPTIONS")
      expect(run.stdout).toMatch(/\n {2}-h, --help +this page\n/)
      expect(run.stdout).not.toContain("\u001b[")
    }
  })

  it("only a subcommand initialises @effect/cli: not --help, --completions, nor a usage error of mm's own", () => {
    // @effect/cli's modules name their symbols with Symbol.for("@effect/cli/…") as they run
    const preload = path.join(dir, "cli-seen.cjs")
    fs.writeFileSync(
      preload,
      "const symbolFor = Symbol.for\n" +
        "let seen = false\n" +
        "Symbol.for = (key) => { if (!seen && String(key).startsWith(\"@effect/cli\")) { seen = true; process.stderr.write(\"[@effect/cli]\\n\") } return symbolFor(key) }\n"
    )
    const seen = (args: ReadonlyArray<string>) =>
      spawnSync(process.execPath, ["-r", preload, MM_BIN, ...args], { cwd: project, encoding: "utf8", input: "" })
        .stderr.includes("[@effect/cli]")
    expect(seen(["--help"])).toBe(false)
    expect(seen(["sessions", "--help"])).toBe(false)
    expect(seen(["--completions", "zsh"])).toBe(false)
    expect(seen(["--nope"])).toBe(false)
    expect(seen(["checkpoints"])).toBe(true)
    expect(seen(["sessions", "list", "--json"])).toBe(true)
  })
})
