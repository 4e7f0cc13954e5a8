/**
 * The command line read by hand for the common case (`mm`, `mm "QUESTION"`, `mm -p …`,
 * `--continue`, `--resume`), so that starting mm never waits for the command-line library.
 * Subcommands, `--help` and `--completions` go to @effect/cli (src/cli/Cli.ts), which declares
 * the same options for the help page. This file must stay small: it is on the start-up path.
 */
import { forkTarget, type StartOn } from "../domain/StartOn"

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
  /** `--help` (src/cli/Help.ts). */
  | { readonly _tag: "Help"; readonly topic: "mm" | (typeof SUBCOMMANDS)[number] }
  /** Bad usage: the line, then the usage, exit code 2. */
  | { readonly _tag: "Usage"; readonly message: string }

export const USAGE = [
  "usage: mm [options] [QUESTION]            the REPL (asking QUESTION first)",
  "       mm -p [options] [QUESTION]         answer once on stdout and exit (stdin is added as context)",
  "       mm sessions [list | show ID | search PATTERN | rm ID…]",
  "       mm init [--url URL] [--model NAME] [--force]",
  "       mm checkpoints gc",
  "       mm acp [--config PATH]",
  "options: -c/--config PATH, -p/--print, --output-format text|json, --continue, --resume [ID], --fork ID[:N], -y/--yes, --verbose, --no-color",
  "mm --help tells more"
].join("\n")

export const SUBCOMMANDS = ["acp", "sessions", "init", "checkpoints"] as const

/** Options of each subcommand (its own subcommands' included), with whether they take a value. */
const SUBCOMMAND_OPTIONS: Record<(typeof SUBCOMMANDS)[number], Record<string, boolean>> = {
  acp: { "--config": true, "-c": true },
  sessions: {
    "--config": true,
    "-c": true,
    "--json": false,
    "--yes": false,
    "-y": false,
    "--regex": false,
    "--ignore-case": false,
    "-i": false
  },
  init: { "--url": true, "--model": true, "--force": false },
  checkpoints: { "--config": true, "-c": true }
}

const HELP_FLAGS = new Set(["--help", "-h"])

/** A word that can only be (part of) a session id: what `--resume` takes as its value. */
const idLike = /^[0-9a-f-]{1,24}$/

const unknownOption = (arg: string): Parsed => ({ _tag: "Usage", message: `unknown option ${arg.split("=")[0]}` })

type Subcommand = (typeof SUBCOMMANDS)[number]

/** A subcommand's line goes to @effect/cli whole, once its options are known to be its own. */
const parseSubcommand = (subcommand: Subcommand, rest: ReadonlyArray<string>): Parsed => {
  const known = SUBCOMMAND_OPTIONS[subcommand]
  const options = rest.slice(0, rest.includes("--") ? rest.indexOf("--") : rest.length)
  if (options.some((arg) => HELP_FLAGS.has(arg))) return { _tag: "Help", topic: subcommand }
  for (const arg of options) {
    if (!arg.startsWith("-") || arg === "-" || arg === "--completions") continue
    if (!(arg.split("=")[0] in known)) return unknownOption(arg)
  }
  return { _tag: "Delegate" }
}

/** What the top-level options have said so far. */
interface Draft {
  config: string | undefined
  print: boolean
  outputFormat: string | undefined
  start: StartOn
  continueLatest: boolean
  yes: boolean
  verbose: boolean
}

/** One option's value: after `=`, or the next word (then taken). */
interface OptionCursor {
  readonly name: string
  readonly inline: string | undefined
  /** The next word, taken as the value. */
  readonly take: () => string | undefined
  /** The next word, left where it is. */
  readonly peek: () => string | undefined
}

const readOutputFormat = (format: string | undefined, draft: Draft): Parsed | undefined => {
  if (format !== "text" && format !== "json") {
    const not = format === undefined ? "" : `, not ${JSON.stringify(format)}`
    return { _tag: "Usage", message: `--output-format takes text or json${not}` }
  }
  draft.outputFormat = format
  return undefined
}

const readResume = (option: OptionCursor, draft: Draft): Parsed | undefined => {
  if (draft.start._tag === "Fork") return { _tag: "Usage", message: "--resume and --fork cannot be used together" }
  if (option.inline !== undefined) {
    if (option.inline === "") return { _tag: "Usage", message: "--resume= needs an id" }
    draft.start = { _tag: "Id", id: option.inline }
  } else {
    const next = option.peek()
    draft.start = next !== undefined && idLike.test(next) ? { _tag: "Id", id: option.take()! } : { _tag: "Pick" }
  }
  return undefined
}

const readFork = (option: OptionCursor, draft: Draft): Parsed | undefined => {
  if (draft.start._tag !== "New") return { _tag: "Usage", message: "--resume and --fork cannot be used together" }
  const value = option.inline ?? option.take()
  const target = value === undefined ? undefined : forkTarget(value)
  if (target === undefined) {
    return {
      _tag: "Usage",
      message: "--fork needs a session id, with :N to keep its turns up to N (--fork 9c03be11:2)"
    }
  }
  draft.start = { _tag: "Fork", ...target }
  return undefined
}

/** Applies one top-level option to the draft; a Parsed when it ends the reading (bad usage). */
const readOption = (option: OptionCursor, arg: string, draft: Draft): Parsed | undefined => {
  switch (option.name) {
    case "-c":
    case "--config": {
      const path = option.inline ?? option.take()
      if (path === undefined || path === "") return { _tag: "Usage", message: `${option.name} needs a path` }
      draft.config = path
      return undefined
    }
    case "-p":
    case "--print":
      return void (draft.print = true)
    case "--output-format":
      return readOutputFormat(option.inline ?? option.take(), draft)
    case "--continue":
      return void (draft.continueLatest = true)
    case "--resume":
      return readResume(option, draft)
    case "--fork":
      return readFork(option, draft)
    case "-y":
    case "--yes":
      return void (draft.yes = true)
    case "--verbose":
      return void (draft.verbose = true)
    default:
      return unknownOption(arg)
  }
}

/** The options that do not go together, then the RunArgs. */
const finish = (draft: Draft, words: ReadonlyArray<string>): Parsed => {
  if (draft.continueLatest && draft.start._tag !== "New") {
    return {
      _tag: "Usage",
      message: `--continue and --${draft.start._tag === "Fork" ? "fork" : "resume"} cannot be used together`
    }
  }
  const start: StartOn = draft.continueLatest ? { _tag: "Latest" } : draft.start
  if (draft.outputFormat !== undefined && !draft.print) {
    return { _tag: "Usage", message: "--output-format applies to -p (print mode) only" }
  }
  if (draft.print && start._tag === "Pick") {
    return { _tag: "Usage", message: "--resume needs an id with -p (or use --continue for the latest session)" }
  }
  const question = words.join(" ")
  return {
    _tag: "Run",
    run: {
      config: draft.config,
      question: question.trim() === "" ? undefined : question,
      print: draft.print,
      outputFormat: draft.outputFormat === "json" ? "json" : "text",
      start,
      yes: draft.yes,
      verbose: draft.verbose
    }
  }
}

export const parseArgs = (args: ReadonlyArray<string>): Parsed => {
  const first = args[0]
  if (first !== undefined && (SUBCOMMANDS as ReadonlyArray<string>).includes(first)) {
    return parseSubcommand(first as Subcommand, args.slice(1))
  }
  const draft: Draft = {
    config: undefined,
    print: false,
    outputFormat: undefined,
    start: { _tag: "New" },
    continueLatest: false,
    yes: false,
    verbose: false
  }
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
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
    const option: OptionCursor = {
      name: eq > 0 ? arg.slice(0, eq) : arg,
      inline: eq > 0 ? arg.slice(eq + 1) : undefined,
      take: () => (args[i + 1] === undefined ? undefined : args[++i]),
      peek: () => args[i + 1]
    }
    const ended = readOption(option, arg, draft)
    if (ended !== undefined) return ended
  }
  return finish(draft, words)
}
