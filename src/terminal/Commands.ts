import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import type { Agent } from "../agent/Agent"
import type { JobsShape } from "../agent/Jobs"
import type { RememberedApprovalsShape } from "../approvals/RememberedApprovals"
import type { ChangesShape } from "../changes/Changes"
import { compactedLine } from "../commands/CommandWords"
import { INIT_PROMPT, restoreModel } from "../commands/ModelChoice"
import { type CommandHandlers, commandsIn, commandWords, readCommand, usageOf } from "../commands/SlashCommands"
import { expandedLine, fillCommand, findUserCommand, type UserCommands } from "../commands/UserCommands"
import type { AppConfig } from "../config/Config"
import { McpServers, serversListing } from "../mcp/McpServers"
import type { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import type { KeeperShape } from "../sessions/Keeper"
import { endedJobsLine, jobsListing, recordedJobsLine } from "../text/JobsText"
import { contextListing, forkedLine, listingRows, resumedLines, sessionsListing } from "../text/Lines"
import { importApprovals, permissionsCommand } from "../text/PermissionsText"
import { NO_PLAN, planChecklist, planHeader } from "../text/PlanText"
import { sanitize, sanitizeOutput } from "../text/Sanitize"
import { searchSummary, sessionHitLines } from "../text/SearchText"
import type { Style } from "../text/Style"
import { runUndo, showChanges } from "./ChangesView"
import type { TerminalInput } from "./Input"
import type { Answers } from "./Markdown"
import { modelCommand } from "./ModelCommand"
import { ownHelp, ownMenu, ownWords } from "./OwnCommands"
import { recapLines } from "./Recap"
import { runRewind } from "./Rewind"
import type { Printer } from "./TerminalIO"

/** What a slash command can reach: the conversation, the printer, and what the terminal remembers between commands. */
export interface CommandContext {
  readonly cwd: string
  readonly agent: Agent["Type"]
  readonly conversation: Conversation
  readonly keeper: KeeperShape
  readonly changes: ChangesShape
  /** The conversation's background jobs: `/jobs`, and ended by `/new` and `/resume`. */
  readonly jobs: JobsShape
  /** The project's remembered "always" answers (in the user's state), for /permissions. */
  readonly remembered: RememberedApprovalsShape
  readonly input: TerminalInput
  readonly print: Printer
  readonly style: Style
  readonly red: (line: string) => void
  readonly notice: (line: string | undefined) => void
  /** Runs `work` until it ends or the user cancels (Ctrl-C, Esc). */
  readonly cancellable: <A, E>(
    work: Effect.Effect<A, E>
  ) => Effect.Effect<{ readonly _tag: "Done"; readonly value: A } | { readonly _tag: "Cancelled" }, E>
  /** State kept between commands of one launch. */
  readonly memory: TerminalMemory
  /** How answers are drawn (rendered markdown on a terminal), for the recap after `/resume`. */
  readonly answers: Answers
  /** How many exchanges the recap after `/resume` draws (`sessions.recap`). */
  readonly recapExchanges: number
}

export interface TerminalMemory {
  /** The ids of the numbered rows of the last `/sessions`, for `/resume N`. */
  rows: ReadonlyArray<string> | undefined
  /** The whole output of the last tool call, for `/last`. */
  lastTool: { readonly name: string; readonly title: string; readonly output: string } | undefined
  /** What the next prompt starts with, for editing (a rewound question); taken once. */
  draft?: string
  /** The user's own commands, read when mm started (src/commands/UserCommands.ts). */
  own?: UserCommands
}

/** `"leave"` ends mm; `send`: the question to ask now (`/init`, the user's own commands). */
export type CommandOutcome = void | "leave" | { readonly send: string }

/** What a command may need beside its context. */
type CommandNeeds = McpServers | ModelClient | AppConfig

/** What the terminal runs for a slash command (its record, name and help, is in src/commands/SlashCommands.ts). */
type TerminalCommand = (ctx: CommandContext, arg: string) => Effect.Effect<CommandOutcome, never, CommandNeeds>

/** `/sessions search [--regex] [-i] PATTERN`: the matching lines, as they are found. */
const searchCommand = (ctx: CommandContext, arg: string) =>
  Effect.gen(function*() {
    const words = arg.split(/\s+/)
    const regex = words.includes("--regex")
    const ignoreCase = words.includes("-i")
    const pattern = arg.replace(/^(?:(?:--regex|-i)\s+)*/, "").trim()
    if (pattern === "") return ctx.print.line("usage: /sessions search [--regex] [-i] PATTERN")
    let sessions = 0
    let lines = 0
    const run = ctx.keeper.search(ctx.cwd, { pattern, regex, ignoreCase }).pipe(
      Stream.runForEach((found) =>
        Effect.sync(() => {
          sessions++
          lines += found.hits.length
          ctx.print.line(sessionHitLines(found).join("\n"))
        })
      ),
      Effect.either
    )
    const outcome = yield* ctx.cancellable(run)
    if (outcome._tag === "Cancelled") return
    if (outcome.value._tag === "Left") return ctx.red(outcome.value.left.message)
    ctx.print.line(searchSummary(pattern, sessions, lines))
  })

const sessions: TerminalCommand = (ctx, arg) =>
  Effect.gen(function*() {
    if (arg === "search" || arg.startsWith("search ")) return yield* searchCommand(ctx, arg.slice(6).trim())
    const listing = yield* ctx.keeper.list(ctx.cwd)
    const options = arg === "all" ? { all: true } : { filter: arg }
    ctx.memory.rows = listingRows(listing, options)
    ctx.print.line(sessionsListing(listing, yield* ctx.conversation.id, options))
  })

/** `/resume 2` takes row 2 of the last listing (or of the listing `/sessions` would show). */
const rowId = (ctx: CommandContext, arg: string) =>
  Effect.gen(function*() {
    if (!/^\d{1,3}$/.test(arg)) return undefined
    const rows = ctx.memory.rows ?? listingRows(yield* ctx.keeper.list(ctx.cwd))
    const n = Number(arg)
    return n >= 1 && n <= rows.length ? rows[n - 1] : undefined
  })

/** The conversation's jobs ended, said in a line when some ran (before it changes session). */
const endJobs = (ctx: CommandContext) =>
  Effect.gen(function*() {
    const running = ctx.jobs.running()
    yield* ctx.jobs.end(ctx.conversation)
    ctx.notice(endedJobsLine(running))
  })

const resume: TerminalCommand = (ctx, arg) =>
  Effect.gen(function*() {
    yield* endJobs(ctx)
    const requested = arg === "" ? undefined : ((yield* rowId(ctx, arg)) ?? arg)
    const resumed = yield* Effect.either(ctx.conversation.resume(requested))
    if (resumed._tag === "Left") return ctx.red(resumed.left.message)
    if (resumed.right === undefined) {
      return ctx.print.line("no earlier session to resume (only sessions with at least one turn count)")
    }
    for (const line of resumedLines(resumed.right)) ctx.print.line(line)
    const kept = yield* restoreModel(ctx.conversation)
    if (kept !== undefined) ctx.print.line(sanitize(kept))
    const recap = recapLines(
      (yield* ctx.conversation.snapshot).messages,
      ctx.cwd,
      ctx.style,
      yield* ctx.answers.engine,
      ctx.recapExchanges
    )
    if (recap.length > 0) ctx.print.line(recap.join("\n"))
    const jobsLine = recordedJobsLine((yield* ctx.conversation.snapshot).jobs)
    if (jobsLine !== undefined) ctx.print.line(ctx.style.dim(sanitizeOutput(jobsLine)))
    // the question mm stopped during waits on the prompt line, to send again or edit
    if (resumed.right.interrupted !== undefined) ctx.input.offer?.(resumed.right.interrupted)
  })

const newConversation: TerminalCommand = (ctx) =>
  Effect.gen(function*() {
    const previous = yield* ctx.conversation.id
    yield* endJobs(ctx)
    yield* ctx.conversation.detach
    ctx.print.line(
      previous === ""
        ? "new conversation"
        : `new conversation — ${previous} stays as it is; /resume ${previous} to go back`
    )
  })

const fork: TerminalCommand = (ctx, arg) =>
  Effect.gen(function*() {
    if (arg !== "" && !/^\d{1,6}$/.test(arg)) {
      return ctx.print.line("usage: /fork [N] — N a turn number (default: all)")
    }
    const forked = yield* Effect.either(ctx.conversation.fork(arg === "" ? undefined : Number(arg)))
    if (forked._tag === "Left") return ctx.red(forked.left.message)
    ctx.notice(forked.right.warning)
    ctx.print.line(forkedLine(forked.right))
  })

const compact: TerminalCommand = (ctx, arg) =>
  Effect.gen(function*() {
    const outcome = yield* ctx.cancellable(Effect.either(ctx.agent.compact(ctx.conversation, arg)))
    if (outcome._tag === "Cancelled") return
    const done = outcome.value
    if (done._tag === "Left") return ctx.red(done.left.message)
    if (done.right._tag === "Compacted") ctx.notice(done.right.warning)
    ctx.print.line(compactedLine(done.right))
  })

const context: TerminalCommand = (ctx) =>
  Effect.map(ctx.agent.context(ctx.conversation), (report) => ctx.print.line(contextListing(report)))

const model: TerminalCommand = (ctx, arg) => modelCommand(ctx, arg)

const init: TerminalCommand = () => Effect.succeed({ send: INIT_PROMPT })

/** `/plan`: the latest plan of the conversation, from its session, or a line saying there is none. */
const plan: TerminalCommand = (ctx) =>
  Effect.map(ctx.conversation.snapshot, (session) => {
    if (session.plan === undefined) return ctx.print.line(NO_PLAN)
    ctx.print.line(planHeader(session.plan))
    for (const line of planChecklist(session.plan.entries, ctx.style)) ctx.print.line(line)
  })

const changes: TerminalCommand = (ctx, arg) => showChanges(ctx.changes, ctx.conversation, arg, ctx)

const undo: TerminalCommand = (ctx, arg) => runUndo(ctx.changes, ctx.conversation, arg, ctx)

const rewind: TerminalCommand = (ctx, arg) =>
  Effect.map(runRewind(ctx.changes, ctx.conversation, arg, ctx), (question) => {
    if (question !== undefined && ctx.input.interactive) ctx.memory.draft = question
  })

const last: TerminalCommand = (ctx) =>
  Effect.sync(() => {
    const tool = ctx.memory.lastTool
    if (tool === undefined) return ctx.print.line("no tool has run in this launch yet")
    ctx.print.line(ctx.style.dim(`⚙ ${tool.name}  ${tool.title}`))
    ctx.print.line(tool.output === "" ? "(no output)" : tool.output)
  })

/** `/jobs`: the listing; `/jobs kill N`: ends job N and shows its last output. */
const jobs: TerminalCommand = (ctx, arg) =>
  Effect.gen(function*() {
    if (arg === "") {
      return ctx.print.line(sanitizeOutput(jobsListing(yield* ctx.jobs.list(ctx.conversation), Date.now())))
    }
    const kill = /^kill\s+(\d+)$/.exec(arg)
    if (kill === null) return ctx.red("usage: /jobs [kill N]")
    const result = yield* ctx.jobs.kill(ctx.conversation, Number(kill[1]))
    if (result.failed) return ctx.red(result.output)
    ctx.print.line(sanitizeOutput(result.output))
  })

const mcp: TerminalCommand = (ctx) =>
  Effect.map(McpServers, (servers) => {
    const configured = servers.configured
    ctx.print.line(serversListing(configured === undefined ? [] : [configured]))
  })

/** `/permissions [rm N | import]`: an import shows the project file's rows, then asks y/n before it writes. */
const permissions: TerminalCommand = (ctx, arg) =>
  Effect.gen(function*() {
    const outcome = yield* permissionsCommand(ctx.remembered, ctx.conversation, arg)
    const show = ({ failed, text }: { readonly text: string; readonly failed: boolean }) =>
      failed ? ctx.red(text) : ctx.print.line(text)
    if (outcome._tag === "Said") return show(outcome)
    ctx.print.line(outcome.text)
    const prompt = `import ${outcome.scopes.length} approval(s)? [y]es [n]o: `
    const answer = yield* Effect.promise(() => ctx.input.key(ctx.style.yellow(prompt), ["y", "n"]))
    if (answer !== "y") return ctx.print.line("nothing imported")
    show(yield* importApprovals(ctx.remembered, ctx.cwd, outcome.scopes))
  })

const exit: TerminalCommand = () => Effect.succeed("leave" as const)

const help: TerminalCommand = (ctx) => Effect.sync(() => ctx.print.line(helpText(ctx.memory.own)))

/** What the terminal runs for each command it offers (src/commands/SlashCommands.ts lists them). */
const HANDLERS: CommandHandlers<"terminal", TerminalCommand> = {
  help,
  sessions,
  resume,
  new: newConversation,
  fork,
  compact,
  context,
  model,
  init,
  plan,
  changes,
  undo,
  rewind,
  last,
  jobs,
  mcp,
  permissions,
  exit
}

/** Every word Tab completes at the start of a line: the terminal's commands and their aliases, then the user's. */
export const commandNames = (own?: UserCommands): ReadonlyArray<string> => [
  ...commandWords("terminal"),
  ...ownWords(own)
]

export const helpText = (own?: UserCommands): string => {
  const commands = commandsIn("terminal")
  const width = Math.max(...commands.map((command) => usageOf(command).length)) + 2
  return [
    "Type a question and press Enter (Alt-Enter or Ctrl-J for a new line). Commands:",
    ...commands.map((command) => `  ${usageOf(command).padEnd(width)}${command.description}`),
    ...ownHelp(own, width),
    "In a question, @path attaches that project file; a line starting with ! runs a shell command and keeps its output as context.",
    "Keys: Tab completes, Up/Down and Ctrl-R search history, Esc or Ctrl-C cancels a running answer (docs/reference/keys.md)."
  ].join("\n")
}

/** What `/` on an empty line shows: every command, as typed, and what it does, one a line. */
export const commandMenu = (style: Style, own?: UserCommands): string => {
  const commands = commandsIn("terminal")
  const width = Math.max(...commands.map((command) => command.name.length + 1)) + 2
  return [
    ...commands.map((command) => `  ${`/${command.name}`.padEnd(width)}${style.dim(command.description)}`),
    ...ownMenu(own, width, style)
  ].join("\n")
}

/**
 * How a typed line is read: a slash command when its first word is one of the terminal's
 * commands; any other `/word` is said to be unknown (or another façade's); a path such as
 * `/etc/hosts …` is a question (`undefined`).
 */
export const runCommandLine = (
  ctx: CommandContext,
  text: string
): Effect.Effect<CommandOutcome, never, CommandNeeds> | undefined => {
  const read = readCommand(text, "terminal")
  if (read?._tag === "Command") return HANDLERS[read.name](ctx, read.arg)
  // a built-in name always wins; then the user's own commands
  const own = read?._tag === "Elsewhere" ? undefined : findUserCommand(text, ctx.memory.own?.commands ?? [])
  if (own !== undefined) {
    return Effect.sync(() => {
      ctx.print.line(ctx.style.dim(sanitize(expandedLine(own.command))))
      return { send: fillCommand(own.command, own.arg) }
    })
  }
  if (read === undefined) return undefined
  const elsewhere = read._tag === "Elsewhere"
    ? ` (an editor's command${read.record.elsewhere === undefined ? "" : `: ${read.record.elsewhere}`})`
    : ""
  return Effect.sync(() =>
    ctx.print.line(`unknown command ${read.word}${elsewhere} — commands: ${commandNames(ctx.memory.own).join(" ")}`)
  )
}
