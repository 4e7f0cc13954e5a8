import type { Message } from "../domain/Session"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"
import { describeCall } from "../tools/Describe"
import { parseToolArguments } from "../tools/ToolSpecs"
import { SHELL_CONTEXT_HEAD } from "./Attachments"
import type { MarkdownEngine } from "./MarkdownEngine"

/** How many exchanges, and answer lines each, are drawn after a `/resume`. */
export const RECAP_EXCHANGES = 3
export const RECAP_ANSWER_LINES = 3

interface Exchange {
  readonly question: string
  readonly answer: Array<string>
  readonly tools: Array<string>
}

const fenceLine = /^\s{0,3}(`{3,}|~{3,})/
const indent = (text: string) => text.replace(/^/gm, "  ")
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** The stored conversation cut into exchanges: a question and what followed it. */
const exchangesOf = (messages: ReadonlyArray<Message>, cwd: string): Array<Exchange> => {
  const exchanges: Array<Exchange> = []
  for (const message of messages) {
    if (message.role === "user" && message.summary !== true) {
      const content = message.content ?? ""
      // a `!command` line is drawn as typed
      const shell = content.startsWith(SHELL_CONTEXT_HEAD) ? /\n\$ (.*)/.exec(content)?.[1] : undefined
      const images = (message.images ?? []).map((image) => ` [image ${image.name}]`).join("")
      exchanges.push({ question: shell === undefined ? content + images : `!${shell}`, answer: [], tools: [] })
      continue
    }
    const current = exchanges.at(-1)
    if (current === undefined || message.role !== "assistant") continue
    if (message.content !== null && message.content.trim() !== "") current.answer.push(message.content.trim())
    for (const call of message.tool_calls ?? []) {
      const parsed = parseToolArguments(call.function.name, call.function.arguments)
      const title = describeCall(call.function.name, parsed._tag === "Right" ? parsed.right : undefined, cwd).title
      current.tools.push(`${call.function.name}  ${title}`)
    }
  }
  return exchanges
}

/**
 * The last exchanges of a resumed session, drawn compactly so the user sees where they were:
 * each question, one line per tool call, the answer cut to a few lines.
 */
export const recapLines = (
  messages: ReadonlyArray<Message>,
  cwd: string,
  style: Style,
  engine?: MarkdownEngine
): Array<string> => {
  const all = exchangesOf(messages, cwd)
  const last = all.slice(-RECAP_EXCHANGES)
  if (last.length === 0) return []
  const lines: Array<string> = []
  if (all.length > last.length) lines.push(style.dim(`… ${all.length - last.length} earlier exchange(s) not shown`))
  for (const exchange of last) {
    const [first, ...rest] = sanitize(exchange.question).split("\n")
    lines.push(style.bold(`> ${clip(first, 200)}${rest.length > 0 ? ` … (+${rest.length} line(s))` : ""}`))
    for (const tool of exchange.tools) lines.push(style.dim(`⚙ ${clip(sanitize(tool), 120)}`))
    // fence lines say nothing in a recap of a few lines
    const answer = sanitize(exchange.answer.join("\n"))
      .split("\n")
      .filter((line) => line.trim() !== "" && !fenceLine.test(line))
    for (const line of answer.slice(0, RECAP_ANSWER_LINES)) {
      const shown = clip(line, 200)
      lines.push(engine === undefined ? `  ${shown}` : indent(engine.line(shown)))
    }
    if (answer.length > RECAP_ANSWER_LINES) {
      lines.push(style.dim(`  … (${answer.length - RECAP_ANSWER_LINES} more line(s))`))
    }
  }
  return lines
}
