/**
 * The command line read by hand for the common forms (`mm`, `mm "QUESTION"`, `mm -p …`,
 * `--continue`, `--resume`), so that starting mm never waits for @effect/cli: `mm`'s own
 * options as CommandLine.ts describes them (the one description that @effect/cli's
 * declaration, --help and the shell completions are drawn from too; a test checks that this
 * reading and @effect/cli's agree). A subcommand's line goes to @effect/cli (Cli.ts) whole,
 * unless it asks for its --help. This file must stay small: it is on the start-up path.
 */
import { forkTarget, type StartOn } from "../domain/StartOn"
import {
  columns,
  HELP,
  HELP_WIDTH,
  type OptionSpec,
  ROOT_OPTIONS,
  type RootOption,
  type Shell,
  SHELLS,
  TOP_COMMANDS,
  type TopCommand,
  usageRows,
  wrapWords
} from "./CommandLine"

export interface RunArgs {
  readonly config: string | undefined
  readonly question: string | undefined
  readonly print: boolean
  readonly outputFormat: "text" | "json"
  readonly start: StartOn
  readonly yes: boolean
  readonly verbose: boolean
  /** `--trust`: the project's guarded settings apply for this run, without being recorded. */
  readonly trust: boolean
}

export const DEFAULT_RUN: RunArgs = {
  config: undefined,
  question: undefined,
  print: false,
  outputFormat: "text",
  start: { _tag: "New" },
  yes: false,
  verbose: false,
  trust: false
}

type Parsed =
  | { readonly _tag: "Run"; readonly run: RunArgs }
  /** `mm TOP …`: @effect/cli reads the rest (Cli.ts). */
  | { readonly _tag: "Subcommand"; readonly top: TopCommand; readonly args: ReadonlyArray<string> }
  /** `--help` (src/cli/Help.ts): the page of `mm` or of a top-level subcommand. */
  | { readonly _tag: "Help"; readonly topic: "mm" | TopCommand }
  | { readonly _tag: "Completions"; readonly shell: Shell }
  | { readonly _tag: "Version" }
  /** Bad usage: the line, then the usage of `topic`, exit code 2. */
  | { readonly _tag: "Usage"; readonly message: string; readonly topic: "mm" | TopCommand }

/** What a usage error prints after its line: how `topic` is typed, and where to read more. */
export const usageText = (topic: "mm" | TopCommand): string => {
  const [first, ...rest] = columns(usageRows(topic), "")
  const options = topic === "mm"
    ? wrapWords(`options: ${ROOT_OPTIONS.filter((option) => option !== HELP).map(shortSyntax).join(", ")}`, HELP_WIDTH)
    : []
  return [
    `usage: ${first}`,
    ...rest.map((line) => `       ${line}`),
    ...options,
    `${topic === "mm" ? "mm" : `mm ${topic}`} --help tells more`
  ].join("\n")
}

const shortSyntax = (option: OptionSpec): string =>
  `${option.short === undefined ? "" : `${option.short}/`}${option.long}${
    option.value === undefined ? "" : option.optionalValue === true ? ` [${option.value}]` : ` ${option.value}`
  }`

/** A word that can only be (part of) a session id: what `--resume` takes as its value. */
const idLike = /^[0-9a-f-]{1,24}$/

const usage = (message: string): Parsed => ({ _tag: "Usage", message, topic: "mm" })

const unknownOption = (arg: string): Parsed => usage(`unknown option ${arg.split("=")[0]}`)

/** What the top-level options have said so far. */
interface Draft {
  config: string | undefined
  print: boolean
  outputFormat: string | undefined
  start: StartOn
  continueLatest: boolean
  yes: boolean
  verbose: boolean
  trust: boolean
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
    return usage(`--output-format takes text or json${not}`)
  }
  draft.outputFormat = format
  return undefined
}

const readResume = (option: OptionCursor, draft: Draft): Parsed | undefined => {
  if (draft.start._tag === "Fork") return usage("--resume and --fork cannot be used together")
  if (option.inline !== undefined) {
    if (option.inline === "") return usage("--resume= needs an id")
    draft.start = { _tag: "Id", id: option.inline }
  } else {
    const next = option.peek()
    draft.start = next !== undefined && idLike.test(next) ? { _tag: "Id", id: option.take()! } : { _tag: "Pick" }
  }
  return undefined
}

const readFork = (option: OptionCursor, draft: Draft): Parsed | undefined => {
  if (draft.start._tag !== "New") return usage("--resume and --fork cannot be used together")
  const value = option.inline ?? option.take()
  const target = value === undefined ? undefined : forkTarget(value)
  if (target === undefined) {
    return usage("--fork needs a session id, with :N to keep its turns up to N (--fork 9c03be11:2)")
  }
  draft.start = { _tag: "Fork", ...target }
  return undefined
}

const readShell = (shell: string | undefined): Parsed =>
  (SHELLS as ReadonlyArray<string>).includes(shell ?? "")
    ? { _tag: "Completions", shell: shell as Shell }
    : usage(`--completions takes sh, bash, fish or zsh${shell === undefined ? "" : `, not ${JSON.stringify(shell)}`}`)

/** Applies one option to the draft; a Parsed when it ends the reading (help, a script, bad usage). */
type Reader = (option: OptionCursor, draft: Draft) => Parsed | undefined

/** A reader for each of `mm`'s options (CommandLine.ts lists them): one missing, or one too many, does not compile. */
const READERS: { readonly [Long in RootOption]: Reader } = {
  "--config": (option, draft) => {
    const path = option.inline ?? option.take()
    if (path === undefined || path === "") return usage(`${option.name} needs a path`)
    draft.config = path
    return undefined
  },
  "--print": (_, draft) => void (draft.print = true),
  "--output-format": (option, draft) => readOutputFormat(option.inline ?? option.take(), draft),
  "--continue": (_, draft) => void (draft.continueLatest = true),
  "--resume": readResume,
  "--fork": readFork,
  "--yes": (_, draft) => void (draft.yes = true),
  "--verbose": (_, draft) => void (draft.verbose = true),
  "--trust": (_, draft) => void (draft.trust = true),
  // Main.ts has taken it out of the line and set NO_COLOR; a second one changes nothing
  "--no-color": () => undefined,
  "--help": () => ({ _tag: "Help", topic: "mm" }),
  "--version": () => ({ _tag: "Version" }),
  "--completions": (option) => readShell(option.inline ?? option.take())
}

/** `mm`'s options by the names they are typed with, long and short. */
const ROOT_BY_NAME = new Map<string, (typeof ROOT_OPTIONS)[number]>(
  ROOT_OPTIONS.flatMap((option) => [
    [option.long, option] as const,
    ...("short" in option ? [[option.short, option] as const] : [])
  ])
)

/** The options that do not go together, then the RunArgs. */
const finish = (draft: Draft, words: ReadonlyArray<string>): Parsed => {
  if (draft.continueLatest && draft.start._tag !== "New") {
    return usage(`--continue and --${draft.start._tag === "Fork" ? "fork" : "resume"} cannot be used together`)
  }
  const start: StartOn = draft.continueLatest ? { _tag: "Latest" } : draft.start
  if (draft.outputFormat !== undefined && !draft.print) {
    return usage("--output-format applies to -p (print mode) only")
  }
  if (draft.print && start._tag === "Pick") {
    return usage("--resume needs an id with -p (or use --continue for the latest session)")
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
      verbose: draft.verbose,
      trust: draft.trust
    }
  }
}

/** `mm TOP …`: its page if it asks for it, else @effect/cli reads it. */
const subcommand = (top: TopCommand, rest: ReadonlyArray<string>): Parsed => {
  const options = rest.slice(0, rest.includes("--") ? rest.indexOf("--") : rest.length)
  return options.some((arg) => arg === HELP.long || arg === HELP.short)
    ? { _tag: "Help", topic: top }
    : { _tag: "Subcommand", top, args: rest }
}

export const parseArgs = (args: ReadonlyArray<string>): Parsed => {
  const first = args[0]
  if (first !== undefined && (TOP_COMMANDS as ReadonlyArray<string>).includes(first)) {
    return subcommand(first as TopCommand, args.slice(1))
  }
  const draft: Draft = {
    config: undefined,
    print: false,
    outputFormat: undefined,
    start: { _tag: "New" },
    continueLatest: false,
    yes: false,
    verbose: false,
    trust: false
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
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
    const name = eq > 0 ? arg.slice(0, eq) : arg
    const spec = ROOT_BY_NAME.get(name)
    if (spec === undefined) return unknownOption(arg)
    if (eq > 0 && !("value" in spec)) return usage(`${spec.long} takes no value`)
    const option: OptionCursor = {
      name,
      inline: eq > 0 ? arg.slice(eq + 1) : undefined,
      take: () => (args[i + 1] === undefined ? undefined : args[++i]),
      peek: () => args[i + 1]
    }
    const ended = READERS[spec.long](option, draft)
    if (ended !== undefined) return ended
  }
  return finish(draft, words)
}
