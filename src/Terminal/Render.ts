import type { LoadedConfig } from "../Config"
import type { Listing, ResumeReport, SaveStatus } from "../Keeper"
import type { SessionListing } from "../SessionStore"
import type { Style } from "./Style"

const pad = (n: number) => String(n).padStart(2, "0")

/** `2026-09-16 10:15`, local time. */
export const localMinute = (iso: string): string => {
  const date = new Date(iso)
  if (Number.isNaN(date.getTime())) return "????-??-?? ??:??"
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`
}

export const errorsSuffix = (count: number): string => (count > 0 ? ` · ⚠️ ${count} error(s)` : "")

export const sessionsLine = (status: SaveStatus, earlier: number): string => {
  switch (status._tag) {
    case "Off":
      return "sessions: off — set sessions.enabled: true in agent.yaml to keep conversations"
    case "NotSaved":
      return `sessions: not saved (${status.reason})`
    case "Saving":
      return `sessions: saved under ${status.dir} · ${earlier} earlier — /resume to continue the latest, /sessions to list`
  }
}

export const banner = (input: {
  readonly version: string
  readonly loaded: LoadedConfig
  readonly answering: boolean
  readonly cwd: string
  readonly status: SaveStatus
  readonly earlier: number
  readonly style: Style
}): string =>
  [
    `${input.style.bold(`mm ${input.version}`)} · model ${input.loaded.config.model.name} at ${input.loaded.config.model.url} ` +
      (input.answering ? "(answering)" : input.style.yellow("(not answering)")),
    `project: ${input.cwd}${input.loaded.file === undefined ? "" : ` · config: ${input.loaded.file}`}`,
    sessionsLine(input.status, input.earlier)
  ].join("\n")

const row = (entry: SessionListing, currentId: string): string => {
  if (entry._tag === "Unreadable") return `  ${entry.id}  unreadable: ${entry.reason}`
  const s = entry.summary
  const mark = s.id === currentId ? "*" : " "
  const title = s.title === "" ? "(no question yet)" : s.title
  return `${mark} ${s.id}  ${localMinute(s.updatedAt)}  ${s.turns} turn(s)  ${title}${errorsSuffix(s.errors)}`
}

/** The `/sessions` and `mm sessions` listing (docs/reference/slash-commands.md). */
export const sessionsListing = (listing: Listing, currentId: string): string => {
  switch (listing._tag) {
    case "Off":
      return "sessions are off — set sessions.enabled: true in agent.yaml to keep conversations"
    case "Failed":
      return `cannot list the sessions in ${listing.dir}: ${listing.reason}`
    case "Listed": {
      const header = `${listing.entries.length} session(s) in ${listing.dir} — /resume <id> to continue one, /resume for the latest`
      return [header, ...listing.entries.map((entry) => row(entry, currentId))].join("\n")
    }
  }
}

export const resumedLine = (report: ResumeReport): string =>
  `↩️ resumed ${report.id} — ${report.messages} message(s), started with ${JSON.stringify(report.title)}${errorsSuffix(report.errors)}`

const firstLineOf = (text: string) => text.split("\n").find((l) => l.trim() !== "")?.trim() ?? ""

const shorten = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

export const toolStartLine = (name: string, title: string, style: Style): string =>
  style.dim(`⚙ ${name}  ${shorten(title, 120)}`)

/** The short line under a tool call: the first line of the result and how long it was. */
export const toolResultLine = (output: string, failed: boolean, style: Style): string => {
  const all = output.split("\n").filter((line) => line.trim() !== "")
  const lines = output === "" ? 0 : output.split("\n").length
  // a bash result starts with its status; the first line of what it printed says more
  const head = /^(exit code|killed )/.test(all[0] ?? "") && all.length > 1 ? `${all[0]} · ${all[1].trim()}` : firstLineOf(output)
  const summary = shorten(head, 100)
  const text = `  ${failed ? "✗" : "↳"} ${summary}${lines > 1 ? `  (${lines} lines)` : ""}`
  return failed ? style.yellow(text) : style.dim(text)
}

export const HELP = [
  "Type a question and press Enter. Commands:",
  "  /help           this list",
  "  /sessions       list this project's saved sessions",
  "  /resume [id]    continue the latest session, or the one with that id",
  "  /new            start a new conversation (the current file stays as it is)",
  "  /compact [hint] replace older turns by a summary to free the context window",
  "  /exit           leave (Ctrl-D does too; Ctrl-C cancels a running answer or tool, and an approval)"
].join("\n")

export const COMMANDS = ["/help", "/sessions", "/resume", "/new", "/compact", "/exit"] as const
