import { commandWords } from "../commands/SlashCommands"
import { VERSION } from "../lib/Version"
import {
  childrenOf,
  columns,
  type CommandPath,
  HELP,
  HELP_WIDTH,
  optionsOf,
  type OptionSpec,
  optionSyntax,
  ROOT_OPTIONS,
  type TopCommand,
  usageRows,
  wrapWords
} from "./CommandLine"

/**
 * `mm --help` and `mm SUBCOMMAND --help`, written for people. The USAGE and OPTIONS sections
 * are drawn from CommandLine.ts, the one description of the command line; the prose around
 * them is here.
 */
export type HelpTopic = "mm" | TopCommand

const usage = (topic: HelpTopic): ReadonlyArray<string> => ["USAGE", ...columns(usageRows(topic))]

/**
 * The options of a page: each once, with what it does; an option that only some members of
 * a group take (or that means something else in each) says which, `(search) …`.
 */
const optionRows = (topic: TopCommand): ReadonlyArray<readonly [string, string]> => {
  const leaves = [topic, ...childrenOf(topic)].filter((path) => childrenOf(path).length === 0) as Array<CommandPath>
  const byLong = new Map<string, { option: OptionSpec; uses: Array<{ path: CommandPath; help: string }> }>()
  for (const path of leaves) {
    for (const option of optionsOf(path)) {
      const entry = byLong.get(option.long) ?? { option, uses: [] }
      entry.uses.push({ path, help: option.help })
      byLong.set(option.long, entry)
    }
  }
  // --help last, as on mm's own page
  const sorted = [...byLong.values()].sort((a, b) => Number(a.option === HELP) - Number(b.option === HELP))
  return sorted.map(({ option, uses }) => {
    const same = uses.length === leaves.length && uses.every((use) => use.help === uses[0].help)
    const help = same || leaves.length === 1
      ? uses[0].help
      : uses.map((use) => `(${use.path.split(" ").at(-1)}) ${use.help}`).join("; ")
    return [optionSyntax(option), help] as const
  })
}

const options = (rows: ReadonlyArray<readonly [string, string]>): ReadonlyArray<string> => [
  "OPTIONS",
  ...columns(rows)
]

const top = (): string =>
  [
    `mm ${VERSION} — a small coding agent with persistent sessions`,
    "",
    ...usage("mm"),
    "",
    ...options(ROOT_OPTIONS.map((option) => [optionSyntax(option), option.help] as const)),
    "",
    "IN THE REPL",
    ...wrapWords(`slash commands: ${commandWords("terminal").join(" ")} — /help explains them`, HELP_WIDTH - 2).map(
      (line) => `  ${line}`
    ),
    "  piped (stdin not a terminal), each line is a question: answers go to stdout; the banner,",
    "  tool lines, notices and errors go to stderr",
    "",
    "CONFIGURATION",
    "  --config PATH, else $AGENT_CONFIG, else ./agent.yaml (mm init writes one), over your own",
    "  ~/.config/mm/agent.yaml, over the built-in defaults. A project's MCP servers, looser permissions",
    "  or sandbox and another model.url for your key wait until you trust them (asked on a terminal;",
    "  --trust or MM_TRUST_PROJECT=1 for one run)",
    "",
    "EXIT CODES",
    "  0 done · 1 the turn failed (piped REPL: the last turn) · 2 bad usage or configuration · 130 interrupted",
    "",
    "EXAMPLES",
    "  mm \"why does the checkout test fail?\"",
    "  git diff | mm -p \"review this change\" > review.md",
    "  mm --continue -p \"and now add a test\"",
    "  mm --resume 9c03be11",
    "  mm --fork 9c03be11:2 -p \"try it with a map instead\""
  ].join("\n")

/** What each subcommand's page says besides its usage and options. */
const ABOUT: { readonly [T in TopCommand]: { readonly title: string; readonly text: ReadonlyArray<string> } } = {
  sessions: {
    title: "mm sessions — this project's saved conversations (kept under .mm/sessions unless sessions.enabled: false)",
    text: [
      "ID is a full id (20261128-164210-9c03be11), a unique prefix (20261128-16) or the last 4 to 8",
      "hex digits (9c03be11). To go on with one: mm --resume ID."
    ]
  },
  init: {
    title: "mm init — write a commented agent.yaml for the project in the current directory",
    text: [
      "Looks for a model server on 127.0.0.1 (Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM 8000),",
      "lists the models it finds and lets you pick one, and writes sessions.enabled: true (the default) for",
      "all to see. --preset anthropic, openai or openrouter writes that hosted API instead, with the",
      "environment variable its key is read from."
    ]
  },
  checkpoints: {
    title: "mm checkpoints — the file copies kept for /undo, in .mm/checkpoints",
    text: ["gc removes the copies that no session of this project uses any more."]
  },
  acp: {
    title: "mm acp — run as an Agent Client Protocol agent on stdin/stdout, for Zed and other ACP editors",
    text: []
  }
}

const page = (topic: TopCommand): string => {
  const about = ABOUT[topic]
  return [
    about.title,
    "",
    ...usage(topic),
    ...(about.text.length === 0 ? [] : ["", ...about.text.map((line) => `  ${line}`)]),
    "",
    ...options(optionRows(topic))
  ].join("\n")
}

export const helpText = (topic: HelpTopic): string => (topic === "mm" ? top() : page(topic))
