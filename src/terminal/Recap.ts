import type { Message } from "../domain/Session"
import { sanitize, sanitizeProse } from "../text/Sanitize"
import type { Style } from "../text/Style"
import { userMessageKind } from "../text/UserMessages"
import { builtinRegistry, type ToolRegistryShape } from "../tools/Registry"
import { parseArguments } from "../tools/ToolArguments"
import type { MarkdownEngine } from "./MarkdownEngine"

/** How many exchanges are drawn after a `/resume` by default (`sessions.recap`), and answer lines each. */
const RECAP_EXCHANGES = 3
const RECAP_ANSWER_LINES = 3

interface Exchange {
  /** The first line drawn: `> question`, `! command` or `(mm) note`, styled. */
  readonly head: (style: Style) => string
  readonly answer: Array<string>
  readonly tools: Array<string>
}

const fenceLine = /^\s{0,3}(`{3,}|~{3,})/
const indent = (text: string) => text.replace(/^/gm, "  ")
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

/** A question drawn bold after `> `; a shell command after `! ` and a note of mm's after `(mm) `, dim: neither was asked. */
const headOf = (content: string, images = "") => (style: Style): string => {
  const kind = userMessageKind(content)
  const [first, ...rest] = sanitize(kind._tag === "Shell" ? kind.command : kind.text).split("\n")
  const line = `${clip(first, 200)}${rest.length > 0 ? ` … (+${rest.length} line(s))` : ""}`
  if (kind._tag === "Shell") return style.dim(`! ${line}`)
  if (kind._tag === "Note") return style.dim(`(mm) ${line}`)
  return style.bold(`> ${line}${sanitize(images)}`)
}

/** The stored conversation cut into exchanges: a question and what followed it. */
const exchangesOf = (
  messages: ReadonlyArray<Message>,
  cwd: string,
  tools: Pick<ToolRegistryShape, "describe">
): Array<Exchange> => {
  const exchanges: Array<Exchange> = []
  for (const message of messages) {
    if (message.role === "user" && message.summary !== true) {
      const images = (message.images ?? []).map((image) => ` [image ${image.name}]`).join("")
      exchanges.push({ head: headOf(message.content ?? "", images), answer: [], tools: [] })
      continue
    }
    const current = exchanges.at(-1)
    if (current === undefined || message.role !== "assistant") continue
    if (message.content !== null && message.content.trim() !== "") current.answer.push(message.content.trim())
    for (const call of message.tool_calls ?? []) {
      const parsed = parseArguments(call.function.arguments)
      const title = tools.describe(call.function.name, parsed._tag === "Right" ? parsed.right : undefined, cwd).title
      current.tools.push(`${call.function.name}  ${title}`)
    }
  }
  return exchanges
}

/**
 * The last exchanges of a resumed session, drawn compactly so the user sees where they were:
 * each question, one line per tool call, the answer cut to a few lines; `exchanges` of them
 * (`sessions.recap`; 0 draws nothing). A call is titled as its tool's record says (`tools`).
 */
export const recapLines = (
  messages: ReadonlyArray<Message>,
  cwd: string,
  style: Style,
  engine?: MarkdownEngine,
  exchanges: number = RECAP_EXCHANGES,
  tools: Pick<ToolRegistryShape, "describe"> = builtinRegistry
): Array<string> => {
  if (exchanges <= 0) return []
  const all = exchangesOf(messages, cwd, tools)
  const last = all.slice(-exchanges)
  if (last.length === 0) return []
  const lines: Array<string> = []
  if (all.length > last.length) lines.push(style.dim(`… ${all.length - last.length} earlier exchange(s) not shown`))
  for (const exchange of last) {
    lines.push(exchange.head(style))
    for (const tool of exchange.tools) lines.push(style.dim(`⚙ ${clip(sanitize(tool), 120)}`))
    // fence lines say nothing in a recap of a few lines
    const answer = sanitizeProse(exchange.answer.join("\n"))
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
