import type { ContextReport } from "../agent/Agent"
import type { TurnEvent } from "../agent/TurnEvent"
import type { LoadedConfig } from "../config/Config"
import { firstLine } from "../lib/OneLine"
import { windowFigure } from "../model/ServerWords"
import type { ForkReport, Listing, ResumeReport, SaveStatus } from "../sessions/Conversation"
import { interruptedLine } from "../sessions/Interrupted"
import type { Started } from "../sessions/SessionStart"
import { resumedPlanLine } from "./PlanText"
import { sanitize } from "./Sanitize"
import { subAgentSuffix, underParents } from "./SessionTree"
import type { Style } from "./Style"

const pad = (n: number) => String(n).padStart(2, "0")

/** `2026-09-16 10:15`, local time. */
export const localMinute = (iso: string): string => {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return "????-??-?? ??:??"
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${
    pad(date.getMinutes())
  }`
}

/** ` · ⑂ from 20261201-… at turn 2`: a fork's parent, on its listing row. */
const forkSuffix = (from: { readonly id: string; readonly turn: number } | undefined): string =>
  from === undefined ? "" : ` · ⑂ from ${from.id} at turn ${from.turn}`

/** What `/fork`, `/rewind` and `--fork` say once the fork is made. */
export const forkedLine = (report: ForkReport): string => {
  const kept = `${report.turn} turn(s) kept`
  const left = report.left > 0 ? `; the ${report.left} later turn(s) stay in ${report.from}` : ""
  if (report.id === "") return `⑂ forked at turn ${report.turn} (not saved): ${kept}${left}`
  const from = report.from === "" ? "" : ` from ${report.from}`
  return `⑂ forked${from} at turn ${report.turn}: this conversation continues as ${report.id} — ${kept}${left}`
}

export const errorsSuffix = (count: number): string => (count > 0 ? ` · ⚠️ ${count} error(s)` : "")

export const sessionsLine = (status: SaveStatus, earlier: number): string => {
  switch (status._tag) {
    case "Off":
      return "sessions: off (sessions.enabled: false): no conversation is kept"
    case "NotSaved":
      return `sessions: not saved (${status.reason})`
    case "Saving":
      return earlier === 0
        ? `sessions: saved under ${status.dir} · no earlier sessions`
        : `sessions: saved under ${status.dir} · ${earlier} earlier — /resume to continue the latest, /sessions to list`
  }
}

/** How the server stands when it did not list its models: loading, not OpenAI-compatible, or answering otherwise. */
export type ServerState = "loading" | "not-openai" | "reached" | undefined

const unlisted = (state: ServerState): string => {
  switch (state) {
    case "loading":
      return "(loading its model)"
    case "not-openai":
      return "(not an OpenAI-compatible server)"
    case "reached":
      return "(reachable, but listed no models)"
    default:
      return "(not answering)"
  }
}

/**
 * `(answering)` — only when a model list came back — or how the server stands otherwise, or
 * the models there are when the configured one is not among them.
 */
export const answeringPart = (
  model: string,
  answering: boolean,
  missingFrom: ReadonlyArray<string> | undefined,
  style: Style,
  names: (models: ReadonlyArray<string>) => string = (models) => models.join(", "),
  state: ServerState = undefined
): string => {
  if (!answering) return style.yellow(unlisted(state))
  if (missingFrom === undefined) return "(answering)"
  return style.yellow(`(answering, but has no model ${model} — available: ${names(missingFrom)})`)
}

export const banner = (input: {
  readonly version: string
  readonly loaded: LoadedConfig
  readonly answering: boolean
  readonly cwd: string
  readonly status: SaveStatus
  readonly earlier: number
  readonly style: Style
  /** `/help for commands · Ctrl-D to leave`, until the project has a saved session. */
  readonly tips?: boolean
  /** The models the server lists, when the configured one is not among them. */
  readonly missingFrom?: ReadonlyArray<string> | undefined
  /** The context window in force, in tokens. */
  readonly contextWindow?: number | undefined
  readonly modelNames?: (models: ReadonlyArray<string>) => string
  /** The instruction files read (as `findInstructionFiles` names them). */
  readonly instructions?: ReadonlyArray<string>
  /** How the server stands when it listed no models. */
  readonly serverState?: ServerState
}): string =>
  [
    `${
      input.style.bold(`mm ${input.version}`)
    } · model ${input.loaded.config.model.name} at ${input.loaded.config.model.url} ` +
    answeringPart(
      input.loaded.config.model.name,
      input.answering,
      input.missingFrom,
      input.style,
      input.modelNames,
      input.serverState
    ) +
    (input.contextWindow === undefined ? "" : ` · ${windowFigure(input.contextWindow)} context`),
    `project: ${input.cwd}${input.loaded.file === undefined ? "" : ` · config: ${input.loaded.file}`}`,
    // a first run: no configuration, and nothing answers where the defaults look
    ...(input.loaded.file === undefined && !input.answering ? [input.style.yellow(FIRST_RUN_HINT)] : []),
    sessionsLine(input.status, input.earlier),
    ...(input.instructions === undefined || input.instructions.length === 0
      ? []
      : [instructionsLine(input.instructions)]),
    ...(input.tips === true ? [input.style.dim(TIPS)] : [])
  ].join("\n")

/** `instructions: AGENTS.md, src/AGENTS.md`: the instruction files the system message holds. */
export const instructionsLine = (files: ReadonlyArray<string>): string => `instructions: ${files.join(", ")}`

const TIPS = "/help for commands · Ctrl-D to leave"

/** Under the banner when there is no configuration and no model server answers. */
export const FIRST_RUN_HINT = "no model server found — mm init sets one up"

/** What a bare `/resume` could take: sessions with at least one turn, other than the current one. */
export const earlierCount = (listing: Listing, currentId: string): number =>
  listing._tag === "Listed"
    ? listing.entries.filter((e) => e._tag === "Readable" && e.summary.turns > 0 && e.summary.id !== currentId).length
    : 0

/** The line printed when mm leaves with a saved session. */
export const goodbyeLine = (id: string): string =>
  `session ${id} saved — /resume ${id} (or mm --resume ${id}) to continue`

/** `just now`, `5 min ago`, `2 h ago`, `3 d ago`: beside the date in `/sessions`. */
export const relativeTime = (iso: string, now: Date): string => {
  const ms = now.getTime() - new Date(iso).getTime()
  if (Number.isNaN(ms)) return "?"
  const minutes = Math.floor(ms / 60_000)
  if (minutes < 1) return "just now"
  if (minutes < 60) return `${minutes} min ago`
  const hours = Math.floor(minutes / 60)
  if (hours < 24) return `${hours} h ago`
  return `${Math.floor(hours / 24)} d ago`
}

/** How many rows `/sessions` shows before `… N more (/sessions all)`. */
const LISTING_ROWS = 20

interface ListingOptions {
  /** Only titles containing this (case-insensitive). */
  readonly filter?: string
  /** No cut after LISTING_ROWS rows. */
  readonly all?: boolean
  readonly now?: Date
  /** What ends the header; `mm sessions` says how to resume from the shell. */
  readonly resumeHint?: string
}

/**
 * What `/sessions` shows, in its order: conversations with at least one turn, newest
 * update first (the order a bare `/resume` takes), then the unreadable files. A sub-agent's
 * conversation, when the listing holds one (`mm sessions list --all`), comes under its parent.
 */
export const listedSessions = (listing: Listing, options: ListingOptions = {}) => {
  if (listing._tag !== "Listed") return { readable: [], unreadable: [], empty: 0 }
  const word = options.filter?.toLowerCase() ?? ""
  const readable = underParents(
    listing.entries
      .flatMap((entry) => (entry._tag === "Readable" ? [entry.summary] : []))
      .filter((s) => s.turns > 0)
      .filter((s) => word === "" || s.title.toLowerCase().includes(word))
      .sort((a, b) => (a.updatedAt < b.updatedAt ? 1 : a.updatedAt > b.updatedAt ? -1 : a.id < b.id ? 1 : -1))
  )
  const unreadable = word === "" ? listing.entries.flatMap((entry) => (entry._tag === "Unreadable" ? [entry] : [])) : []
  const empty = listing.entries.filter((entry) => entry._tag === "Readable" && entry.summary.turns === 0).length
  return { readable, unreadable, empty }
}

/** The ids of the numbered rows of a listing, row 1 first. */
export const listingRows = (listing: Listing, options: ListingOptions = {}): ReadonlyArray<string> => {
  const { readable } = listedSessions(listing, options)
  return (options.all === true ? readable : readable.slice(0, LISTING_ROWS)).map((s) => s.id)
}

/** The `/sessions` and `mm sessions` listing (docs/reference/slash-commands.md). */
export const sessionsListing = (listing: Listing, currentId: string, options: ListingOptions = {}): string => {
  switch (listing._tag) {
    case "Off":
      return "sessions are off (sessions.enabled: false): no conversation is kept"
    case "Failed":
      return cannotList(listing.dir, listing.reason)
    case "Listed": {
      const now = options.now ?? new Date()
      const { readable, unreadable, empty } = listedSessions(listing, options)
      const shown = options.all === true ? readable : readable.slice(0, LISTING_ROWS)
      const width = String(Math.max(shown.length, 1)).length
      const matching = options.filter === undefined || options.filter === ""
        ? ""
        : ` matching ${JSON.stringify(options.filter)}`
      const header = `${readable.length + unreadable.length} session(s) in ${listing.dir}${matching} — ${
        options.resumeHint ?? "/resume <id> to continue one, /resume for the latest"
      }`
      const rows = shown.map((s, i) => {
        const mark = s.id === currentId ? "*" : " "
        return `${String(i + 1).padStart(width)} ${mark} ${s.id}  ${localMinute(s.updatedAt)} (${
          relativeTime(s.updatedAt, now)
        })  ${s.turns} turn(s)  ${sanitize(s.title)}${errorsSuffix(s.errors)}${forkSuffix(s.forkedFrom)}${
          subAgentSuffix(s.parent)
        }`
      })
      const unreadableRows = unreadable.map((entry) =>
        `${" ".repeat(width)}   ${entry.id}  unreadable: ${sanitize(entry.reason)}`
      )
      const more = readable.length > shown.length ? [`… ${readable.length - shown.length} more (/sessions all)`] : []
      const hidden = empty > 0 ? [`${empty} empty not shown`] : []
      return [header, ...rows, ...unreadableRows, ...more, ...hidden].join("\n")
    }
  }
}

/** The store's reason may already say "cannot list DIR": said once. */
const cannotList = (dir: string, reason: string): string => {
  const prefix = `cannot list ${dir}: `
  return `cannot list the sessions in ${dir}: ${reason.startsWith(prefix) ? reason.slice(prefix.length) : reason}`
}

/** What the terminal and `-p --verbose` say of the session a conversation started on. */
export const startedLines = (started: Extract<Started, { _tag: "Started" }>): ReadonlyArray<string> => [
  ...(started.note === undefined ? [] : [started.note]),
  ...(started.report === undefined ? [] : resumedLines(started.report)),
  ...(started.forked === undefined ? [] : [forkedLine(started.forked)])
]

/** The resumed line, the plan's in one line when there is one, and the interrupted question's when mm stopped during the last turn. */
export const resumedLines = (report: ResumeReport): ReadonlyArray<string> => [
  resumedLine(report),
  ...(report.plan === undefined ? [] : [resumedPlanLine(report.plan)]),
  ...(report.interrupted === undefined ? [] : [sanitize(interruptedLine(report.interrupted))])
]

export const resumedLine = (report: ResumeReport): string =>
  `↩️ resumed ${report.id} — ${report.messages} message(s), started with ${sanitize(JSON.stringify(report.title))}${
    errorsSuffix(report.errors)
  }`

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export const toolStartLine = (name: string, title: string, style: Style): string =>
  style.dim(title === name ? `⚙ ${name}` : `⚙ ${name}  ${shorten(title, 120)}`)

/** The short line under a tool call: the first line of the result and how long it was. */
export const toolResultLine = (output: string, failed: boolean, style: Style): string => {
  const all = output.split("\n").filter((line) => line.trim() !== "")
  const lines = output === "" ? 0 : output.split("\n").length
  // a bash result starts with its status; the first line of what it printed says more
  const head = /^(exit code|killed )/.test(all[0] ?? "") && all.length > 1
    ? `${all[0]} · ${all[1].trim()}`
    : firstLine(output)
  const summary = shorten(head, 100)
  const text = `  ${failed ? "✗" : "↳"} ${summary}${lines > 1 ? `  (${lines} lines)` : ""}`
  return failed ? style.yellow(text) : style.dim(text)
}

/** `340`, `1.2k`, `18k`: token counts as people read them. */
const tokenCount = (n: number): string =>
  n < 1000
    ? String(n)
    : n < 10_000
    ? `${(Math.round(n / 100) / 10).toFixed(1).replace(/\.0$/, "")}k`
    : `${Math.round(n / 1000)}k`

/**
 * The dim line after a turn: `1.2k in · 340 out · 18% of 32k context` (`~` when mm estimated
 * it), with `(1.1k cached)` after the input when the server read part of it from its cache.
 */
/** What sub-agents spent in a turn, all told. */
export interface SubAgentSpend {
  readonly promptTokens: number
  readonly completionTokens: number
  /** Some of it estimated: marked `~` as the window's figures are. */
  readonly estimated?: boolean
}

/**
 * `2.2k in · 9 out · 1% of 200k context`, then what the turn's sub-agents spent, apart: their
 * tokens fill their own windows, not this one.
 */
export const usageLine = (usage: Extract<TurnEvent, { _tag: "Usage" }>, subAgents?: SubAgentSpend): string => {
  const mark = usage.estimated ? "~" : ""
  const percent = Math.round((100 * (usage.promptTokens + usage.completionTokens)) / usage.contextWindow)
  const cached = usage.cachedTokens === undefined || usage.cachedTokens === 0
    ? ""
    : ` (${tokenCount(usage.cachedTokens)} cached)`
  return `${mark}${tokenCount(usage.promptTokens)} in${cached} · ${mark}${
    tokenCount(usage.completionTokens)
  } out · ${mark}${percent}% of ${windowFigure(usage.contextWindow)} context${
    subAgents === undefined
      ? ""
      : ` · sub-agents: ${subAgents.estimated === true ? "~" : ""}${tokenCount(subAgents.promptTokens)} in · ${
        subAgents.estimated === true ? "~" : ""
      }${tokenCount(subAgents.completionTokens)} out`
  }`
}

/** `/context`: what the next request holds, part by part. */
export const contextListing = (report: ContextReport): string => {
  const percent = Math.round((100 * report.total) / report.contextWindow)
  const rows: Array<[string, number]> = [
    ["system prompt", report.systemPrompt],
    [
      `instructions (${report.instructions.count} file${report.instructions.count === 1 ? "" : "s"})`,
      report.instructions.tokens
    ],
    [`skills (${report.skills.count})`, report.skills.tokens],
    ["environment", report.environment],
    ["tool definitions", report.tools],
    [`messages (${report.messages.count})`, report.messages.tokens],
    [`tool results (${report.toolResults.count})`, report.toolResults.tokens]
  ]
  const width = Math.max(...rows.map(([label]) => label.length))
  const share = (tokens: number) => `${Math.round((100 * tokens) / Math.max(1, report.total))}%`.padStart(5)
  return [
    `context: about ${tokenCount(report.total)} of ${
      windowFigure(report.contextWindow)
    } tokens (${percent}%), estimated at 4 characters a token`,
    ...rows.map(([label, tokens]) => `  ${label.padEnd(width)}  ${tokenCount(tokens).padStart(5)}  ${share(tokens)}`),
    ...(report.measured === undefined
      ? []
      : [`  the server counted ${tokenCount(report.measured)} for the last answer (question, history and answer)`]),
    ...(report.subAgents === undefined ? [] : [
      `  sub-agents: ${report.subAgents.runs} run${report.subAgents.runs === 1 ? "" : "s"} took ${
        report.subAgents.estimated === true ? "~" : ""
      }${tokenCount(report.subAgents.promptTokens)} in · ${report.subAgents.estimated === true ? "~" : ""}${
        tokenCount(report.subAgents.completionTokens)
      } out in their own windows; only their answers are in this one`
    ]),
    ...(report.sandbox === undefined ? [] : [report.sandbox])
  ].join("\n")
}
