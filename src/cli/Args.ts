/**
 * The command line read by hand for the common case (`mm`, `mm "QUESTION"`, `mm -p …`,
 * `--continue`, `--resume`), so that starting mm never waits for the command-line library.
 * Subcommands, `--help` and `--completions` go to @effect/cli (src/Cli.ts), which declares
 * the same options for the help page. This file must stay small: it is on the start-up path.
 */

/** Which conversation mm starts on. */
export type StartOn =
  | { readonly _tag: "New" }
  /** `--continue`: the latest session of the project (what a bare `/resume` takes). */
  | { readonly _tag: "Latest" }
  /** `--resume` without an id: a list to pick from, on a terminal. */
  | { readonly _tag: "Pick" }
  /** `--resume ID`: full id, unique prefix or hex suffix. */
  | { readonly _tag: "Id"; readonly id: string }

export interface RunArgs {
  readonly config: string | undefined
  readonly question: string | undefined
  readonly print: boolean
  readonly outputFormat: "text" | "json"
  readonly start: StartOn
  readonly yes: boolean
  readonly verbose: boolean
}

export const DEFAULT_RUN: RunArgs = {
  config: undefined,
  question: undefined,
  print: false,
  outputFormat: "text",
  start: { _tag: "New" },
  yes: false,
  verbose: false
}

export type Parsed =
  | { readonly _tag: "Run"; readonly run: RunArgs }
  /** A subcommand or `--completions`: @effect/cli reads the whole line. */
  | { readonly _tag: "Delegate" }
  /** `--help` (src/Help.ts). */
  | { readonly _tag: "Help"; readonly topic: "mm" | (typeof SUBCOMMANDS)[number] }
  /** Bad usage: the line, then the usage, exit code 2. */
  | { readonly _tag: "Usage"; readonly message: string }

export const USAGE = [
  "usage: mm [options] [QUESTION]            the REPL (asking QUESTION first)",
  "       mm -p [options] [QUESTION]         answer once on stdout and exit (stdin is added as context)",
  "       mm sessions [list | show ID | rm ID…]",
  "       mm init [--url URL] [--model NAME] [--force]",
  "       mm checkpoints gc",
  "       mm acp [--config PATH]",
  "options: -c/--config PATH, -p/--print, --output-format text|json, --continue, --resume [ID], -y/--yes, --verbose",
  "mm --help tells more"
].join("\n")

export const SUBCOMMANDS = ["acp", "sessions", "init", "checkpoints"] as const

/** Options of each subcommand (its own subcommands' included), with whether they take a value. */
const SUBCOMMAND_OPTIONS: Record<(typeof SUBCOMMANDS)[number], Record<string, boolean>> = {
  acp: { "--config": true, "-c": true },
  sessions: { "--config": true, "-c": true, "--json": false, "--yes": false, "-y": false },
  init: { "--url": true, "--model": true, "--force": false },
  checkpoints: { "--config": true, "-c": true }
}

const HELP_FLAGS = new Set(["--help", "-h"])

/** A word that can only be (part of) a session id: what `--resume` takes as its value. */
const idLike = /^[0-9a-f-]{1,24}$/

const unknownOption = (arg: string): Parsed => ({ _tag: "Usage", message: `unknown option ${arg.split("=")[0]}` })

export const parseArgs = (args: ReadonlyArray<string>): Parsed => {
  const first = args[0]
  if (first !== undefined && (SUBCOMMANDS as ReadonlyArray<string>).includes(first)) {
    const known = SUBCOMMAND_OPTIONS[first as (typeof SUBCOMMANDS)[number]]
    const subcommand = first as (typeof SUBCOMMANDS)[number]
    for (const arg of args.slice(1)) {
      if (arg === "--") break
      if (HELP_FLAGS.has(arg)) return { _tag: "Help", topic: subcommand }
    }
    for (const arg of args.slice(1)) {
      if (arg === "--") break
      if (!arg.startsWith("-") || arg === "-" || arg === "--completions") continue
      if (!(arg.split("=")[0] in known)) return unknownOption(arg)
    }
    return { _tag: "Delegate" }
  }

  let config: string | undefined
  let print = false
  let outputFormat: string | undefined
  let start: StartOn = { _tag: "New" }
  let continueLatest = false
  let yes = false
  let verbose = false
  const words: Array<string> = []

  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === "--") {
      words.push(...args.slice(i + 1))
      break
    }
    if (!arg.startsWith("-") || arg === "-") {
      words.push(arg)
      continue
    }
    if (HELP_FLAGS.has(arg)) return { _tag: "Help", topic: "mm" }
    if (arg === "--completions") return { _tag: "Delegate" }
    const eq = arg.indexOf("=")
    const name = eq > 0 && arg.startsWith("--") ? arg.slice(0, eq) : arg
    const inline = eq > 0 && arg.startsWith("--") ? arg.slice(eq + 1) : undefined
    const value = (): string | undefined => {
      if (inline !== undefined) return inline
      const next = args[i + 1]
      if (next === undefined) return undefined
      i++
      return next
    }
    switch (name) {
      case "-c":
      case "--config": {
        const path = value()
        if (path === undefined || path === "") return { _tag: "Usage", message: `${name} needs a path` }
        config = path
        break
      }
      case "-p":
      case "--print":
        print = true
        break
      case "--output-format": {
        const format = value()
        if (format !== "text" && format !== "json") {
          return {
            _tag: "Usage",
            message: `--output-format takes text or json${
              format === undefined ? "" : `, not ${JSON.stringify(format)}`
            }`
          }
        }
        outputFormat = format
        break
      }
      case "--continue":
        continueLatest = true
        break
      case "--resume": {
        if (inline !== undefined) {
          if (inline === "") return { _tag: "Usage", message: "--resume= needs an id" }
          start = { _tag: "Id", id: inline }
        } else if (args[i + 1] !== undefined && idLike.test(args[i + 1])) {
          start = { _tag: "Id", id: args[++i] }
        } else {
          start = { _tag: "Pick" }
        }
        break
      }
      case "-y":
      case "--yes":
        yes = true
        break
      case "--verbose":
        verbose = true
        break
      default:
        return unknownOption(arg)
    }
  }

  if (continueLatest && start._tag !== "New") {
    return { _tag: "Usage", message: "--continue and --resume cannot be used together" }
  }
  if (continueLatest) start = { _tag: "Latest" }
  if (outputFormat !== undefined && !print) {
    return { _tag: "Usage", message: "--output-format applies to -p (print mode) only" }
  }
  if (print && start._tag === "Pick") {
    return { _tag: "Usage", message: "--resume needs an id with -p (or use --continue for the latest session)" }
  }
  const question = words.join(" ")
  return {
    _tag: "Run",
    run: {
      config,
      question: question.trim() === "" ? undefined : question,
      print,
      outputFormat: outputFormat === "json" ? "json" : "text",
      start,
      yes,
      verbose
    }
  }
}
