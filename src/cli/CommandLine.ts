/**
 * The one description of mm's command line: every command, option and operand, with the words
 * that say what each does. @effect/cli's declaration of the subcommands is built from it
 * (Cli.ts), the hand reader of `mm`'s own options (Args.ts) reads it, `--help` (Help.ts) and a
 * usage error list it, and the shell completions (Completions.ts) offer it. Data only, and
 * small: it is on the start-up path.
 */

export interface OptionSpec {
  readonly long: `--${string}`
  readonly short?: `-${string}`
  /** The value it takes, as help names it (`PATH`); none for a switch. */
  readonly value?: string
  /** The value may be left out (`--resume` alone picks from a list). */
  readonly optionalValue?: boolean
  /** The words the value may be; completed from this list. */
  readonly choices?: ReadonlyArray<string>
  /** The value is a file's path: completed from the disk. */
  readonly file?: boolean
  /** What it does, on one line of help (or two). */
  readonly help: string
}

/** What follows a command's words and options: `ID`, `at least 1` of them. */
export interface Operands {
  readonly name: string
  readonly min: number
  readonly max?: number
}

export interface CommandSpec {
  /** What it does, in a few words: the second column of a usage line, and a completion's description. */
  readonly summary: string
  readonly options: ReadonlyArray<OptionSpec>
  readonly operands?: Operands
  /** false: only its subcommands run (`mm checkpoints` alone is bad usage). */
  readonly runs: boolean
}

const config = {
  long: "--config",
  short: "-c",
  value: "PATH",
  file: true,
  help: "the agent.yaml to use (else $AGENT_CONFIG, ./agent.yaml, the defaults)"
} as const satisfies OptionSpec

/** The project's guarded settings (MCP servers, looser permissions or sandbox, where the key goes) without asking. */
const trust = {
  long: "--trust",
  help: "apply this project's agent.yaml whole for this run, even settings not trusted yet (as MM_TRUST_PROJECT=1)"
} as const satisfies OptionSpec

/** Every command takes it; the page it shows is its top-level command's. */
export const HELP = { long: "--help", short: "-h", help: "this page" } as const satisfies OptionSpec

/** The shells `--completions` writes a script for (written as keys: `bash` the shell, not the tool). */
const SHELL_NAMES = { sh: true, bash: true, fish: true, zsh: true } as const

export type Shell = keyof typeof SHELL_NAMES

export const SHELLS = Object.keys(SHELL_NAMES) as ReadonlyArray<Shell>

/** The options of `mm` itself, in the order `mm --help` lists them. */
export const ROOT_OPTIONS = [
  config,
  { long: "--print", short: "-p", help: "print mode: only the answer on stdout, then exit" },
  {
    long: "--output-format",
    value: "FMT",
    choices: ["text", "json"],
    help: "with -p: text (default) or json (one JSON object per line and event)"
  },
  { long: "--continue", help: "go on with the latest conversation of this project" },
  {
    long: "--resume",
    value: "ID",
    optionalValue: true,
    help:
      "go on with that conversation (full id, unique prefix or 8-hex suffix); without an id, on a terminal, pick it from a list"
  },
  {
    long: "--fork",
    value: "ID[:N]",
    help: "go on in a new session holding that one's turns up to N (all by default); the original stays as it is"
  },
  { long: "--yes", short: "-y", help: "allow every tool without asking, for this run" },
  { long: "--verbose", help: "with -p: tool calls and the session id on stderr" },
  trust,
  { long: "--no-color", help: "no colours (as NO_COLOR=1); tables, lists and wrapping stay" },
  HELP,
  { long: "--version", short: "-v", help: "print mm's version" },
  {
    long: "--completions",
    value: "SHELL",
    choices: SHELLS,
    help: "print a completion script for sh, bash, fish or zsh"
  }
] as const satisfies ReadonlyArray<OptionSpec>

export type RootOption = (typeof ROOT_OPTIONS)[number]["long"]

/** What follows `mm`'s options: the question, in as many words as typed. */
export const ROOT_OPERANDS: Operands = { name: "QUESTION", min: 0 }

/** `mm`'s two forms without a subcommand, for the usage lines. */
const ROOT_USAGE: ReadonlyArray<readonly [string, string]> = [
  ["mm [options] [QUESTION]", "the REPL here (asking QUESTION first)"],
  ["mm -p [options] [QUESTION]", "answer once and exit (piped stdin is added as context)"]
]

const json = (help: string) => ({ long: "--json", help }) as const satisfies OptionSpec
const listJson = json("print JSON, for scripts")
const listAll = {
  long: "--all",
  help: "sub-agents' conversations too, each under its parent"
} as const satisfies OptionSpec

/** The subcommands, by their words; a group (`sessions`) comes before its members. */
export const COMMANDS = {
  sessions: {
    summary: "this project's saved conversations",
    options: [config, listJson, listAll],
    runs: true
  },
  "sessions list": {
    summary: "list them, newest first (mm sessions alone too)",
    options: [config, listJson, listAll],
    runs: true
  },
  "sessions show": {
    summary: "one as Markdown: questions, answers, tool calls, errors",
    options: [config],
    operands: { name: "ID", min: 1, max: 1 },
    runs: true
  },
  "sessions search": {
    summary: "the lines said or printed that hold PATTERN, newest first",
    options: [
      config,
      json("one JSON object per matching line"),
      { long: "--regex", help: "PATTERN is a JavaScript regular expression" },
      { long: "--ignore-case", short: "-i", help: "any case (slower)" }
    ],
    operands: { name: "PATTERN", min: 1, max: 1 },
    runs: true
  },
  "sessions rm": {
    summary: "delete the ones named (asked first, unless --yes)",
    options: [config, { long: "--yes", short: "-y", help: "delete without asking" }],
    operands: { name: "ID", min: 1 },
    runs: true
  },
  init: {
    summary: "write an agent.yaml for this project",
    options: [
      {
        long: "--preset",
        value: "NAME",
        choices: ["local", "openai", "anthropic", "openrouter"],
        help: "a hosted API (openai, anthropic, openrouter) or a local server (local: look for one)"
      },
      { long: "--url", value: "URL", help: "the server to use instead of looking (its /models are listed)" },
      { long: "--model", value: "NAME", help: "the model to use instead of picking" },
      { long: "--force", help: "replace an existing agent.yaml" }
    ],
    runs: true
  },
  checkpoints: { summary: "the file copies kept for /undo", options: [], runs: false },
  "checkpoints gc": {
    summary: "remove the copies kept for /undo that no session uses",
    options: [config],
    runs: true
  },
  acp: {
    summary: "an ACP agent on stdin/stdout, for Zed and other editors",
    options: [config, trust],
    runs: true
  }
} as const satisfies Record<string, CommandSpec>

export type CommandPath = keyof typeof COMMANDS

/** The commands that run (every one but a group such as `checkpoints`). */
export type Runnable = { [P in CommandPath]: (typeof COMMANDS)[P]["runs"] extends true ? P : never }[CommandPath]

/** The long names of a command's options. */
export type OptionOf<P extends CommandPath> = (typeof COMMANDS)[P]["options"][number]["long"]

/** The top-level subcommands, in the order help lists them. */
export const TOP_COMMANDS = ["sessions", "init", "checkpoints", "acp"] as const satisfies ReadonlyArray<CommandPath>

export type TopCommand = (typeof TOP_COMMANDS)[number]

export const specOf = (path: CommandPath): CommandSpec => COMMANDS[path]

/** The paths of the commands one word below `path` (`sessions` → `sessions list`, …). */
export const childrenOf = (path: string): ReadonlyArray<CommandPath> =>
  (Object.keys(COMMANDS) as Array<CommandPath>).filter((other) =>
    other.startsWith(`${path} `) && !other.slice(path.length + 1).includes(" ")
  )

/** Every option a command takes, `--help` included. */
export const optionsOf = (path: CommandPath): ReadonlyArray<OptionSpec> => [...specOf(path).options, HELP]

/** An option as help shows it: `-c, --config PATH`, `    --resume [ID]`. */
export const optionSyntax = (option: OptionSpec): string => {
  const value = option.value === undefined
    ? ""
    : option.optionalValue === true
    ? ` [${option.value}]`
    : ` ${option.value}`
  return `${option.short === undefined ? "   " : `${option.short},`} ${option.long}${value}`
}

/** How a command is typed: `mm sessions search PATTERN [--json] [--regex] [-i]`; a group names its members. */
const usageSyntax = (path: CommandPath): string => {
  const children = childrenOf(path).map((child) => child.slice(path.length + 1))
  if (children.length > 0) {
    return specOf(path).runs ? `mm ${path} [${children.join("|")}]` : `mm ${path} ${children.join("|")}`
  }
  const spec = specOf(path)
  const operands = spec.operands === undefined
    ? []
    : [`${spec.operands.name}${spec.operands.max === 1 ? "" : "…"}`]
  // --config, which every command takes, is left to the options
  const options = spec.options.filter((option) => option !== config).map((option) =>
    `[${option.short ?? option.long}${option.value === undefined ? "" : ` ${option.value}`}]`
  )
  return ["mm", path, ...operands, ...options].join(" ")
}

/** Words of `text` in lines of at most `width` characters (a longer word stands alone). */
export const wrapWords = (text: string, width: number): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line)
      line = word
    } else line = line === "" ? word : `${line} ${word}`
  }
  return [...lines, line]
}

/** How wide help and usage lines are. */
export const HELP_WIDTH = 100

/** Lines of two columns, the second starting at one column for all and wrapped under itself. */
export const columns = (rows: ReadonlyArray<readonly [string, string]>, indent = "  "): ReadonlyArray<string> => {
  const width = Math.max(...rows.map(([left]) => left.length)) + 2
  const room = Math.max(30, HELP_WIDTH - indent.length - width)
  return rows.flatMap(([left, right]) =>
    wrapWords(right, room).map((part, i) => `${indent}${(i === 0 ? left : "").padEnd(width)}${part}`)
  )
}

/** The usage lines of `mm` (every form) or of one top-level command (it and its members). */
export const usageRows = (topic: "mm" | TopCommand): ReadonlyArray<readonly [string, string]> =>
  topic === "mm"
    ? [...ROOT_USAGE, ...TOP_COMMANDS.map((top) => [usageSyntax(top), specOf(top).summary] as const)]
    : [topic, ...childrenOf(topic)].filter((path) => childrenOf(path).length === 0).map((path) =>
      [usageSyntax(path), specOf(path).summary] as const
    )
