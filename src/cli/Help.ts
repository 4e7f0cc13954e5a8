import { commandWords } from "../commands/SlashCommands"
import { VERSION } from "../lib/Version"

/**
 * `mm --help` and `mm SUBCOMMAND --help`, written for people: one line per option. The
 * options are the ones src/cli/Args.ts reads and src/cli/Cli.ts declares (a test checks all three agree).
 */
export type HelpTopic = "mm" | "acp" | "sessions" | "init" | "checkpoints"

const top = (): string =>
  [
    `mm ${VERSION} — a small coding agent with persistent sessions`,
    "",
    "USAGE",
    "  mm [options] [QUESTION]          the REPL in the current directory (asking QUESTION first)",
    "  mm -p [options] [QUESTION]       answer once and exit; stdin, when piped, is added as context",
    "  mm sessions [list|show|search|rm]  this project's saved conversations (mm sessions --help)",
    "  mm init [--url URL] [--model NAME] [--force]   write an agent.yaml for this project",
    "  mm checkpoints gc                remove the copies kept for /undo that no session uses",
    "  mm acp [--config PATH]           an Agent Client Protocol agent on stdin/stdout (Zed…)",
    "",
    "OPTIONS",
    "  -c, --config PATH         the agent.yaml to use",
    "  -p, --print               print mode: only the answer on stdout, then exit",
    "      --output-format FMT   with -p: text (default) or json (one JSON object per line and event)",
    "      --continue            go on with the latest conversation of this project",
    "      --resume [ID]         go on with that conversation (full id, unique prefix or 8-hex suffix);",
    "                            without an id, on a terminal, pick it from a list",
    "      --fork ID[:N]         go on in a new session holding that one's turns up to N (all by default);",
    "                            the original stays as it is",
    "  -y, --yes                 allow every tool without asking, for this run",
    "      --verbose             with -p: tool calls and the session id on stderr",
    "      --no-color            no colours (as NO_COLOR=1); tables, lists and wrapping stay",
    "  -h, --help                this page",
    "  -v, --version             print mm's version",
    "      --completions SHELL   print a completion script for sh, bash, fish or zsh",
    "",
    "IN THE REPL",
    `  slash commands: ${commandWords("terminal").join(" ")} — /help explains them`,
    "  piped (stdin not a terminal), each line is a question: answers go to stdout; the banner,",
    "  tool lines, notices and errors go to stderr",
    "",
    "CONFIGURATION",
    "  --config PATH, else $AGENT_CONFIG, else ./agent.yaml, else built-in defaults (mm init writes one)",
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

const sessions = (): string =>
  [
    "mm sessions — this project's saved conversations (sessions.enabled: true in agent.yaml)",
    "",
    "USAGE",
    "  mm sessions [list] [--json]      list them, newest update first (--json: for scripts)",
    "  mm sessions show ID              print one as Markdown: questions, answers, tool calls, errors",
    "  mm sessions search PATTERN       the lines of questions, answers and tool outputs that hold PATTERN,",
    "        [--regex] [-i] [--json]    newest session first (archives of compacted turns included)",
    "  mm sessions rm ID… [--yes]       delete exactly the ones named (asks first; --yes without asking)",
    "",
    "  ID is a full id (20261128-164210-9c03be11), a unique prefix (20261128-16) or the last 4 to 8",
    "  hex digits (9c03be11). To go on with one: mm --resume ID.",
    "",
    "OPTIONS",
    "  -c, --config PATH         the agent.yaml to use",
    "      --json                (list) print JSON; (search) one JSON object per matching line",
    "      --regex               (search) PATTERN is a JavaScript regular expression",
    "  -i, --ignore-case         (search) any case (slower)",
    "  -y, --yes                 (rm) delete without asking"
  ].join("\n")

const init = (): string =>
  [
    "mm init — write a commented agent.yaml for the project in the current directory",
    "",
    "Looks for a model server on 127.0.0.1 (Ollama 11434, llama.cpp 8080, LM Studio 1234, vLLM 8000),",
    "lists the models it finds and lets you pick one, turns sessions on, and adds .mm/ to .gitignore",
    "when the project has one.",
    "",
    "OPTIONS",
    "      --url URL             the server to use instead of looking (its /models are listed)",
    "      --model NAME          the model to use instead of picking",
    "      --force               replace an existing agent.yaml"
  ].join("\n")

const acp = (): string =>
  [
    "mm acp — run as an Agent Client Protocol agent on stdin/stdout, for Zed and other ACP editors",
    "",
    "OPTIONS",
    "  -c, --config PATH         the agent.yaml to use"
  ].join("\n")

const checkpoints = (): string =>
  [
    "mm checkpoints gc — remove from .mm/checkpoints the file copies (kept for /undo) that no session of",
    "this project uses any more",
    "",
    "OPTIONS",
    "  -c, --config PATH         the agent.yaml to use"
  ].join("\n")

export const helpText = (topic: HelpTopic): string => {
  switch (topic) {
    case "checkpoints":
      return checkpoints()
    case "mm":
      return top()
    case "sessions":
      return sessions()
    case "init":
      return init()
    case "acp":
      return acp()
  }
}
