/**
 * The one registry of slash commands. Each command is one record: its name and aliases, the
 * hint of its argument, what it does, and the façades that offer it. The terminal's `/help`,
 * its `/` menu and Tab completion, and the editor's `available_commands_update` and help text
 * are all drawn from these records; each façade runs them through a handler map typed by
 * `CommandHandlers`, so that a command offered without a handler, or a handler for a command
 * not offered, does not compile. Data only: this module is on the start-up path of `--help`.
 */

/** Where a slash command can be typed: mm's terminal, or an editor over ACP. */
export type Facade = "terminal" | "acp"

export interface SlashCommandRecord {
  /** Without its slash: `compact`. */
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  /** Its argument, as typed: `[n]`, `[rm n]`; empty for none. */
  readonly hint: string
  /** What its argument is, in words, for an editor's input field (ACP's input hint); with a `hint` only. */
  readonly argument?: string
  readonly description: string
  readonly facades: ReadonlyArray<Facade>
  /** In a façade that does not offer it: what does its job there. */
  readonly elsewhere?: string
}

/** Every slash command, in the order help lists them. Adding one: a record here, and a handler in each façade offering it. */
export const SLASH_COMMANDS = [
  { name: "help", aliases: [], hint: "", description: "this list", facades: ["terminal"] },
  {
    name: "sessions",
    aliases: [],
    hint: "[word|all]",
    description:
      "list this project's conversations, newest first (a word filters by title; search PATTERN finds it in what was said and what the tools printed)",
    facades: ["terminal"],
    elsewhere: "here the editor lists its threads itself"
  },
  {
    name: "resume",
    aliases: [],
    hint: "[n|id]",
    description: "continue the latest conversation, row n of /sessions, or an id (a unique prefix or suffix is enough)",
    facades: ["terminal"],
    elsewhere: "here the editor reloads its threads itself"
  },
  {
    name: "new",
    aliases: [],
    hint: "",
    description: "start a new conversation; the one so far stays on disk as it is",
    facades: ["terminal", "acp"]
  },
  {
    name: "fork",
    aliases: [],
    hint: "[n]",
    description:
      "go on in a new session holding this one's turns up to turn n (all by default); this one stays as it is",
    facades: ["terminal"],
    elsewhere: "here the editor forks a thread itself"
  },
  {
    name: "compact",
    aliases: [],
    hint: "[hint]",
    argument: "what the summary should focus on (optional)",
    description: "replace older turns by a summary to free the context window (the hint says what it should keep)",
    facades: ["terminal", "acp"]
  },
  {
    name: "context",
    aliases: [],
    hint: "",
    description: "what the context holds (system prompt, skills, messages, tool results), in tokens",
    facades: ["terminal"]
  },
  {
    name: "model",
    aliases: [],
    hint: "[name]",
    description:
      "the models the server lists, the one in use marked; with a name, the model of this conversation from now on (kept in its session)",
    facades: ["terminal"],
    elsewhere: "here the editor's model selector chooses it"
  },
  {
    name: "init",
    aliases: [],
    hint: "",
    description:
      "ask the model to study the project and write or update AGENTS.md (its write is approved as any other)",
    facades: ["terminal", "acp"]
  },
  {
    name: "plan",
    aliases: [],
    hint: "",
    description: "the plan the model keeps for this conversation (its todo list), as it stands",
    facades: ["terminal"],
    elsewhere: "here the editor shows the plan itself"
  },
  {
    name: "changes",
    aliases: [],
    hint: "[n]",
    argument: "a turn number, to see its diffs (optional)",
    description:
      "what write_file and edit_file changed in this conversation, by turn (bash is not tracked); with n, the diffs of turn n",
    facades: ["terminal", "acp"]
  },
  {
    name: "undo",
    aliases: [],
    hint: "[n]",
    argument: "how many turns to take back (optional, default 1)",
    description:
      "take back the files mm's file tools changed in the last turn (or the last n), after showing the diffs",
    facades: ["terminal", "acp"]
  },
  {
    name: "rewind",
    aliases: [],
    hint: "n",
    description:
      "go back to just before turn n: the files mm's tools changed since are restored, and the conversation goes on in a fork (Esc Esc at an empty prompt picks the turn)",
    facades: ["terminal"]
  },
  { name: "last", aliases: [], hint: "", description: "the whole output of the last tool call", facades: ["terminal"] },
  {
    name: "jobs",
    aliases: [],
    hint: "[kill N]",
    description: "the conversation's background jobs (id, state, runtime, command, last line); kill N ends one",
    facades: ["terminal"]
  },
  {
    name: "mcp",
    aliases: [],
    hint: "",
    description: "the MCP servers, their state and their tools",
    facades: ["terminal"]
  },
  {
    name: "permissions",
    aliases: [],
    hint: "[rm n]",
    argument: "rm N to revoke the Nth, or import to see the rows of the project's .mm/permissions.json (optional)",
    description:
      "the approvals remembered for this project (\"always\" answers); rm n revokes one; import offers those of .mm/permissions.json",
    facades: ["terminal", "acp"]
  },
  {
    name: "exit",
    aliases: ["quit"],
    hint: "",
    description: "leave (Ctrl-D does too; Ctrl-C or Esc cancels a running answer or tool, and an approval)",
    facades: ["terminal"]
  }
] as const satisfies ReadonlyArray<SlashCommandRecord>

type Entry = (typeof SLASH_COMMANDS)[number]

/** The names of the commands a façade offers: `"new" | "compact" | …` for `"acp"`. */
export type CommandName<F extends Facade> = Entry extends infer E
  ? E extends { readonly name: infer N; readonly facades: ReadonlyArray<infer G> } ? F extends G ? N : never
  : never
  : never

/** What a façade runs for each command it offers: exactly one handler per command, and no other. */
export type CommandHandlers<F extends Facade, Handler> = { readonly [N in CommandName<F>]: Handler }

/** The records of the commands a façade offers, in the registry's order. */
export const commandsIn = (facade: Facade): ReadonlyArray<SlashCommandRecord> =>
  SLASH_COMMANDS.filter((command: SlashCommandRecord) => command.facades.includes(facade))

/** How a command is typed: `/compact [hint]`. */
export const usageOf = (command: SlashCommandRecord): string =>
  command.hint === "" ? `/${command.name}` : `/${command.name} ${command.hint}`

/** Every word that names a command of a façade, aliases included, with its slash: for Tab and for "unknown command". */
export const commandWords = (facade: Facade): ReadonlyArray<string> =>
  commandsIn(facade).flatMap((command) => [command.name, ...command.aliases].map((name) => `/${name}`))

/** A typed line read as a command of one façade. */
type ReadCommand<F extends Facade> =
  | { readonly _tag: "Command"; readonly name: CommandName<F>; readonly arg: string }
  /** A command of another façade: `record` says what does its job here. */
  | { readonly _tag: "Elsewhere"; readonly word: string; readonly record: SlashCommandRecord }
  | { readonly _tag: "Unknown"; readonly word: string }

const named = (word: string) => (command: SlashCommandRecord): boolean =>
  command.name === word || command.aliases.includes(word)

/**
 * A line whose first word is `/word` is a command: of this façade (with the rest of the line,
 * trimmed, as its argument), of another one, or unknown. A line such as `/etc/hosts …` is a
 * question: `undefined`.
 */
export const readCommand = <F extends Facade>(text: string, facade: F): ReadCommand<F> | undefined => {
  const match = /^\/([A-Za-z][\w-]*)(?:\s+([\s\S]*))?$/.exec(text.trim())
  if (match === null) return undefined
  const [, word, rest] = match
  const known = SLASH_COMMANDS.find(named(word)) as SlashCommandRecord | undefined
  if (known === undefined) return { _tag: "Unknown", word: `/${word}` }
  if (!known.facades.includes(facade)) return { _tag: "Elsewhere", word: `/${word}`, record: known }
  return { _tag: "Command", name: known.name as CommandName<F>, arg: rest?.trim() ?? "" }
}
