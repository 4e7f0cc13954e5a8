/**
 * agent.yaml's schema: every key, its default and what it means. Decoding it costs start-up
 * time (building the schemas alone is some 3 ms), so nothing on the way to a first request
 * imports this module statically: a configuration seen before comes from its memo
 * (ConfigMemo.ts), and this module is loaded only to decode one that was not.
 */
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { DEFAULT_SYSTEM } from "./DefaultSystem"
import { mcpKeyDescriptions, McpServersConfig } from "./McpConfig"
import { defaultSandbox, SandboxConfig, sandboxKeyDescriptions } from "./SandboxConfig"

const unitSeconds: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 }

/**
 * A duration once trimmed (`trim` drops what `\s` matches): with a `\s*` on either side of the
 * optional unit, a long run of spaces before a wrong character took time quadratic in its length.
 */
const durationPattern = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h)?$/

/** Seconds, written as a number or as a string such as "90s", "2m", "1h", "500ms". */
const Seconds = Schema.transformOrFail(Schema.Unknown, Schema.Number, {
  strict: true,
  decode: (input, _, ast) => {
    const match = typeof input === "string" ? durationPattern.exec(input.trim()) : null
    const seconds = typeof input === "number"
      ? input
      : match === null
      ? Number.NaN
      : Number(match[1]) * unitSeconds[match[2] ?? "s"]
    return Number.isFinite(seconds) && seconds > 0
      ? ParseResult.succeed(seconds)
      : ParseResult.fail(
        new ParseResult.Type(
          ast,
          input,
          `expected a positive duration such as 90, "90s" or "2m", got ${JSON.stringify(input)}`
        )
      )
  },
  encode: (seconds) => ParseResult.succeed(seconds)
}).annotations({
  jsonSchema: {
    anyOf: [
      { type: "number", exclusiveMinimum: 0 },
      { type: "string", pattern: "^\\s*\\d+(\\.\\d+)?\\s*(ms|s|m|h)?\\s*$" }
    ]
  }
})

const PositiveInt = Schema.Int.pipe(
  Schema.positive({ message: (i) => `expected a positive whole number, got ${String(i.actual)}` })
)

/** Where `model.api: anthropic` and `responses` go when no `model.url` is written. */
export const PROVIDER_URLS = {
  anthropic: "https://api.anthropic.com/v1",
  responses: "https://api.openai.com/v1"
} as const

type ModelApi = "chat" | "responses" | "anthropic"

/** `model.thinking`: how hard the model thinks before answering, or Anthropic's budget in tokens. */
const Thinking = Schema.Union(
  Schema.String.pipe(
    Schema.filter((s): s is "off" | "low" | "medium" | "high" => ["off", "low", "medium", "high"].includes(s), {
      message: (issue) =>
        `expected "off", "low", "medium", "high" or a number of tokens, got ${JSON.stringify(issue.actual)}`,
      jsonSchema: { enum: ["off", "low", "medium", "high"] }
    })
  ),
  PositiveInt
)

const ModelConfig = Schema.Struct({
  api: Schema.optionalWith(
    Schema.String.pipe(
      Schema.filter((s): s is ModelApi => s === "chat" || s === "responses" || s === "anthropic", {
        message: (issue) => `expected "chat", "responses" or "anthropic", got ${JSON.stringify(issue.actual)}`,
        jsonSchema: { enum: ["chat", "responses", "anthropic"] }
      })
    ),
    { default: () => "chat" as const }
  ).annotations({
    description: "wire protocol of the server: chat completions, OpenAI Responses or Anthropic Messages"
  }),
  url: Schema.optionalWith(
    Schema.String.pipe(
      Schema.filter(
        (url) => /^https?:\/\/[^\s/]+/.test(url) || `expected an http:// or https:// URL, got ${JSON.stringify(url)}`,
        {
          jsonSchema: { pattern: "^https?://[^\\s/]+" }
        }
      )
    ),
    { default: () => "http://127.0.0.1:11434/v1" }
  ).annotations({
    description:
      "base URL of the API (with api: chat, of an OpenAI-compatible server, /chat/completions appended); unset with api: anthropic or responses, the provider's own"
  }),
  name: Schema.optionalWith(Schema.NonEmptyTrimmedString, { default: () => "qwen2.5-coder:7b" }).annotations({
    description: "model id sent with each request"
  }),
  apiKeyEnv: Schema.optional(Schema.NonEmptyTrimmedString).annotations({
    description: "name of the environment variable that holds the bearer token"
  }),
  contextWindow: Schema.optional(PositiveInt).annotations({
    description: "context window of the model, in tokens; by default what the server says it serves, else 32768"
  }),
  textToolCalls: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  vision: Schema.optional(Schema.Boolean),
  temperature: Schema.optional(
    Schema.Number.pipe(
      Schema.filter((n) => (n >= 0 && n <= 2) || `expected a number from 0 to 2, got ${n}`, {
        jsonSchema: { minimum: 0, maximum: 2 }
      })
    )
  ),
  maxTokens: Schema.optional(PositiveInt),
  thinking: Schema.optional(Thinking).annotations({
    description:
      "extended thinking (anthropic) or reasoning effort (responses): off, low, medium, high, or a budget in tokens"
  }),
  headers: Schema.optional(
    Schema.Record({
      key: Schema.String.pipe(
        Schema.filter((name) =>
          /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || `expected an HTTP header name, got ${JSON.stringify(name)}`
        )
      ),
      value: Schema.String.pipe(
        Schema.filter((value) => !/[\r\n]/.test(value) || "expected a header value on one line")
      )
    })
  ),
  extraBody: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
  maxAnswerBytes: Schema.optionalWith(PositiveInt, { default: () => 4 * 1024 * 1024 }).annotations({
    description: "bytes of text (answer and tool-call arguments) one model call may stream before the turn fails"
  })
})

const CompactionConfig = Schema.Struct({
  auto: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  threshold: Schema.optionalWith(
    Schema.Number.pipe(
      Schema.filter((n) => (n > 0 && n <= 1) || `expected a fraction above 0 and at most 1, got ${n}`, {
        jsonSchema: { exclusiveMinimum: 0, maximum: 1 }
      })
    ),
    { default: () => 0.8 }
  ),
  keepTurns: Schema.optionalWith(
    Schema.Int.pipe(
      Schema.nonNegative({ message: (i) => `expected a whole number of 0 or more, got ${String(i.actual)}` })
    ),
    { default: () => 2 }
  )
})

const SessionsConfig = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }),
  dir: Schema.optionalWith(Schema.NonEmptyTrimmedString, { default: () => ".mm/sessions" }),
  recap: Schema.optionalWith(
    Schema.Int.pipe(
      Schema.between(0, 100, { message: (i) => `expected a whole number from 0 to 100, got ${String(i.actual)}` })
    ),
    { default: () => 3 }
  )
})

const SkillsConfig = Schema.Struct({
  dirs: Schema.optionalWith(Schema.Array(Schema.NonEmptyTrimmedString), {
    default: () => [".mm/skills", "~/.mm/skills"]
  })
})

/** A file name (no directory part) read as project instructions, e.g. AGENTS.md or CLAUDE.md. */
const InstructionFileName = Schema.String.pipe(
  Schema.filter(
    (name) =>
      (name.trim() !== "" && !/[/\\]/.test(name) && name !== "." && name !== "..") ||
      `expected a file name without a directory (such as AGENTS.md), got ${JSON.stringify(name)}`,
    { jsonSchema: { pattern: "^[^/\\\\]+$" } }
  )
)

/** `false`, or the file names read as project instructions. */
const InstructionsConfig = Schema.Union(Schema.Array(InstructionFileName), Schema.Literal(false))

/** The built-in tools a declared sub-agent may be given (never `task`: a sub-agent starts none of its own). */
export const SUB_AGENT_TOOLS = ["bash", "read_file", "write_file", "edit_file", "grep", "glob", "todo"] as const

const SubAgentTool = Schema.String.pipe(
  Schema.filter(
    (name) =>
      (SUB_AGENT_TOOLS as ReadonlyArray<string>).includes(name) ||
      `expected one of ${SUB_AGENT_TOOLS.join(", ")}, got ${JSON.stringify(name)}`,
    { jsonSchema: { enum: [...SUB_AGENT_TOOLS] } }
  )
)

const SUB_AGENT_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,39}$/

/** One sub-agent of `agents:`: what it is for (the model reads it), and what it is given. */
const SubAgentConfig = Schema.Struct({
  description: Schema.NonEmptyTrimmedString.annotations({
    description: "what the agent is for; the model reads it to choose one"
  }),
  system: Schema.optional(Schema.String).annotations({
    description: "its system prompt; unset: mm's own for sub-agents"
  }),
  tools: Schema.optional(Schema.Array(SubAgentTool)).annotations({
    description: "the built-in tools it is given; unset: read_file, grep, glob and bash"
  }),
  model: Schema.optional(Schema.NonEmptyTrimmedString).annotations({
    description: "the model it asks, on the same server; unset: the conversation's"
  })
})

const TasksConfig = Schema.Struct({
  parallel: Schema.optionalWith(PositiveInt, { default: () => 3 })
})

/** `webFetch`: the `web_fetch` tool, off unless enabled (its description costs every request bytes). */
const WebFetchConfig = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "give the model the web_fetch tool (each new domain is asked)"
  }),
  allowPrivate: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "let web_fetch reach loopback, link-local and private addresses"
  }),
  maxBytes: Schema.optionalWith(PositiveInt, { default: () => 5 * 1024 * 1024 }).annotations({
    description: "bytes of one answer read at most; the rest is cut"
  }),
  timeout: Schema.optionalWith(Seconds, { default: () => 30 }).annotations({
    description: "seconds one fetch may take, redirects included"
  })
})

/** `jobs`: background commands (`bash` with `background: true`, `job_output`, `job_kill`), off unless enabled. */
const JobsConfig = Schema.Struct({
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "let the model start commands in the background and read their output later"
  }),
  maxBuffer: Schema.optionalWith(PositiveInt, { default: () => 1024 * 1024 }).annotations({
    description: "bytes of a job's output kept until it is read; older output is dropped"
  })
})

/** The events a hook runs at, with Claude Code's names. */
export const HOOK_EVENTS = [
  "PreToolUse",
  "PostToolUse",
  "UserPromptSubmit",
  "Stop",
  "SessionStart",
  "PreCompact"
] as const

export type HookEvent = typeof HOOK_EVENTS[number]

/** One command a hook runs: Claude Code's `{type: command, command, timeout}`. */
const HookCommand = Schema.Struct({
  type: Schema.optionalWith(Schema.Literal("command"), { default: () => "command" as const }),
  command: Schema.NonEmptyTrimmedString,
  timeout: Schema.optional(Seconds).annotations({ description: "seconds before the hook is killed (default 60)" })
})

/** The hooks of one event: those whose `matcher` (a regular expression on the tool's name; empty or `*`: all) matches. */
const HookGroup = Schema.Struct({
  matcher: Schema.optional(Schema.String),
  hooks: Schema.Array(HookCommand)
})

const HooksConfig = Schema.Struct(
  Object.fromEntries(HOOK_EVENTS.map((event) => [event, Schema.optional(Schema.Array(HookGroup))])) as {
    readonly [K in HookEvent]: Schema.optional<Schema.Array$<typeof HookGroup>>
  }
)

export type HookGroupConfig = typeof HookGroup.Type

/** `commands`: where the user's own slash commands are read. */
const CommandsConfig = Schema.Struct({
  claude: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "also read .claude/commands (the project's) and ~/.claude/commands (the user's)"
  })
})

const decodeDefaults = <A, I>(schema: Schema.Schema<A, I>) => () => Schema.decodeUnknownSync(schema)({})

/** `permissions` in agent.yaml: ask before what changes things, ask only what the sandbox cannot hold, or never ask. */
type Permissions = "ask" | "auto" | "allow"

export const AgentConfigSchema = Schema.Struct({
  model: Schema.optionalWith(ModelConfig, { default: decodeDefaults(ModelConfig) }),
  system: Schema.optionalWith(Schema.String, { default: () => DEFAULT_SYSTEM }),
  watchdogTimeout: Schema.optionalWith(Seconds, { default: () => 120 }),
  editorTimeout: Schema.optionalWith(Seconds, { default: () => 30 }),
  maxOutput: Schema.optionalWith(PositiveInt, { default: () => 16000 }),
  maxSteps: Schema.optionalWith(PositiveInt, { default: () => 50 }),
  theme: Schema.optionalWith(
    Schema.String.pipe(
      Schema.filter((s): s is "dark" | "light" | "auto" => s === "dark" || s === "light" || s === "auto", {
        message: (issue) => `expected "dark", "light" or "auto", got ${JSON.stringify(issue.actual)}`,
        jsonSchema: { enum: ["dark", "light", "auto"] }
      })
    ),
    { default: () => "auto" as const }
  ),
  permissions: Schema.optionalWith(
    Schema.String.pipe(
      Schema.filter((s): s is Permissions => s === "ask" || s === "auto" || s === "allow", {
        message: (issue) => `expected "ask", "auto" or "allow", got ${JSON.stringify(issue.actual)}`,
        jsonSchema: { enum: ["ask", "auto", "allow"] }
      })
    ),
    { default: () => "ask" as const }
  ),
  sandbox: Schema.optionalWith(SandboxConfig, { default: () => defaultSandbox }),
  compaction: Schema.optionalWith(CompactionConfig, { default: decodeDefaults(CompactionConfig) }),
  sessions: Schema.optionalWith(SessionsConfig, { default: decodeDefaults(SessionsConfig) }),
  skills: Schema.optionalWith(SkillsConfig, { default: decodeDefaults(SkillsConfig) }),
  mcpServers: Schema.optionalWith(McpServersConfig, { default: () => ({}) }),
  secrets: Schema.optionalWith(Schema.Array(Schema.NonEmptyTrimmedString), { default: () => [] }),
  instructions: Schema.optionalWith(InstructionsConfig, { default: () => ["AGENTS.md"] }),
  agents: Schema.optionalWith(
    // each name is what the model passes to `task`; checked here so that a bad one is named
    // (a key refused by the record's own key schema would read as an unknown key)
    Schema.Record({ key: Schema.String, value: SubAgentConfig }).pipe(
      Schema.filter((agents) => {
        const bad = Object.keys(agents).find((name) => !SUB_AGENT_NAME.test(name))
        return bad === undefined ||
          `expected agent names of letters, digits, - and _ (a letter first, at most 40), got ${JSON.stringify(bad)}`
      }, { jsonSchema: { propertyNames: { pattern: SUB_AGENT_NAME.source } } })
    ),
    { default: () => ({}) }
  ),
  tasks: Schema.optionalWith(TasksConfig, { default: decodeDefaults(TasksConfig) }),
  webFetch: Schema.optionalWith(WebFetchConfig, { default: decodeDefaults(WebFetchConfig) }),
  jobs: Schema.optionalWith(JobsConfig, { default: decodeDefaults(JobsConfig) }),
  hooks: Schema.optionalWith(HooksConfig, { default: () => ({}) }),
  commands: Schema.optionalWith(CommandsConfig, { default: decodeDefaults(CommandsConfig) })
}).annotations({ title: "mm agent.yaml", description: "Configuration of the mm coding agent" })

export type AgentConfig = typeof AgentConfigSchema.Type

/** What each key means, for the published JSON Schema (editors show it on hover). */
export const keyDescriptions: Record<string, string> = {
  model: "The model server and the model mm talks to.",
  "model.api":
    "The wire protocol: chat (OpenAI chat completions: local servers, most gateways), responses (OpenAI Responses) or anthropic (Anthropic Messages).",
  "model.url":
    "Base URL of the API. With api: chat, of an OpenAI-compatible server (mm appends /chat/completions); unset with anthropic or responses, the provider's (https://api.anthropic.com/v1, https://api.openai.com/v1).",
  "model.thinking":
    "How much the model thinks before it answers: off, low, medium, high, or a budget in tokens. Anthropic: extended thinking with that budget; Responses: the reasoning effort; chat: not sent (use model.extraBody).",
  "model.name": "Model id sent with each request.",
  "model.apiKeyEnv": "Name of the environment variable holding the bearer token (the key never goes in this file).",
  "model.contextWindow":
    "Tokens the model can take; automatic compaction is measured against it. Unset: what the server says it serves (llama.cpp, vLLM, Ollama, LM Studio), else 32768. A server serving fewer tokens wins.",
  "model.textToolCalls":
    "Turn tool calls a model wrote as text (<tool_call>…</tool_call>, [TOOL_CALLS]…, a bare JSON call) into real calls.",
  "model.vision":
    "Whether the model can see images (@file.png, an editor's image blocks); unset: what the server says (llama.cpp /props, Ollama /api/show), else no.",
  "model.temperature": "Sampling temperature sent with each request (0 to 2); unset: the server's default.",
  "model.maxTokens": "Most tokens one answer may have (max_tokens); unset: the server's default.",
  "model.headers":
    "Extra HTTP headers sent to the model server; a value may name environment variables as ${NAME} (kept secret).",
  "model.extraBody":
    "Fields merged into every request body, for server-specific options (e.g. Ollama's options.num_ctx, vLLM's top_k).",
  "model.maxAnswerBytes":
    "Bytes of text (answer and tool-call arguments) one model call may stream; past it the turn fails as a generation error, so a server that never stops cannot fill the memory.",
  system: "The system prompt. A resumed or reloaded session continues under the one configured now.",
  watchdogTimeout:
    "Seconds the model may stay silent (before its first token or between two) before the turn is given up; a number or a string such as \"90s\" or \"2m\".",
  editorTimeout:
    "Under mm acp, seconds the editor may take to answer one request for a file or a terminal (fs/*, terminal/*) before that call fails with one line and the turn goes on.",
  maxOutput: "Characters of one tool result kept for the model; longer output keeps its head and tail.",
  maxSteps: "Model calls allowed in one turn.",
  permissions:
    "ask: bash, write_file and edit_file show a preview and wait for approval, and so does read_file, grep or glob outside the project directory (refused when stdin is not a terminal); auto: commands run in the sandbox and edits inside the project go ahead, anything else is asked (as ask without a working sandbox); allow: never ask.",
  compaction: "Replacing older turns by a summary.",
  "compaction.auto": "Compact automatically before a turn when the history nears the context window.",
  "compaction.threshold": "Fraction of model.contextWindow that triggers automatic compaction.",
  "compaction.keepTurns": "Most recent turns kept word for word after a compaction.",
  sessions: "Persistent sessions: one JSON file per conversation.",
  "sessions.enabled":
    "Save every conversation under sessions.dir, to list and resume it later (on unless set to false).",
  "sessions.dir": "Where session files go: relative to the project, or absolute for one store shared by every project.",
  theme:
    "The terminal's colours: dark (for a dark background), light (for a light one), or auto (from COLORFGBG where the terminal sets it, else dark).",
  "sessions.recap":
    "How many of the last exchanges the terminal draws after a resume (0: none, only the line saying what was resumed).",
  skills: "Skills: folders holding a SKILL.md, listed in the system prompt.",
  "skills.dirs": "Folders searched for skills; relative ones are resolved against the project.",
  instructions:
    "File names read as the project's instructions (AGENTS.md by default), at the project's root and in every folder down to the working directory, and in ~/.config/mm/; false reads none.",
  secrets:
    "Globs of files whose content is secret, besides the built-in names (.env, .env.*, *.pem, *.key, id_rsa*, .npmrc, .netrc, .pypirc, .pgpass): read_file asks before reading one even inside the project (in every mode but allow), and grep and glob leave them out. A glob without a / matches a file's name at any depth; one with a / the path relative to the project.",
  agents:
    "Sub-agents the model may hand a task to (the task tool), by name: a description the model reads, and optionally their own system prompt, tools and model. Without any, task runs a general sub-agent with read_file, grep, glob and bash.",
  tasks: "Sub-agents at work.",
  "tasks.parallel": "Most sub-agents that run at once when one answer holds several task calls.",
  webFetch: "The web_fetch tool: the model reads a web page (HTML as Markdown), each new domain asked.",
  "webFetch.enabled": "Give the model web_fetch (off by default: each tool's description is sent with every request).",
  "webFetch.allowPrivate":
    "Let web_fetch reach loopback, link-local and private addresses (refused by default, redirects included).",
  "webFetch.maxBytes": "Bytes of one answer read at most; a longer one is cut, and the result says so.",
  "webFetch.timeout": "Seconds one fetch may take, redirects included; a number or a string such as \"30s\".",
  jobs: "Background commands: bash with background: true, read with job_output, ended with job_kill.",
  "jobs.enabled":
    "Give the model background commands (off by default). Jobs end with the conversation: when mm exits, on /new or on /resume of another session.",
  "jobs.maxBuffer":
    "Bytes of a job's output kept until the model reads it; older output is dropped (the result says so).",
  hooks:
    "Commands run at events of a turn, in Claude Code's format: PreToolUse, PostToolUse, UserPromptSubmit, Stop, SessionStart, PreCompact, each a list of {matcher, hooks: [{type: command, command, timeout}]}. A project's hooks run only once the project is trusted.",
  commands: "The user's own slash commands: Markdown prompt files in .mm/commands/ and ~/.config/mm/commands/.",
  "commands.claude": "Also read Claude Code's command folders, .claude/commands/ and ~/.claude/commands/.",
  ...mcpKeyDescriptions,
  ...sandboxKeyDescriptions
}

let defaults: AgentConfig | undefined

/** Every key at its default; made on first use, since building a decoder costs start-up time. */
export const defaultConfig = (): AgentConfig => (defaults ??= Schema.decodeUnknownSync(AgentConfigSchema)({}))
