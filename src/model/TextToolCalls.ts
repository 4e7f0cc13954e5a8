/**
 * Tool calls a model wrote as text instead of `tool_calls`, which small open models do when
 * the server's chat template does not parse them. One parser per form those models write,
 * each anchored:
 * - Hermes / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (one or more),
 *   the blocks running to the end of the answer, after any text;
 * - Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}]`, or `[TOOL_CALLS]name[ARGS]{…}`,
 *   the same way;
 * - a bare JSON call (`{"name": …, "arguments"|"parameters": {…}}`, or a list of them) that
 *   is the whole answer.
 * A tag inside a code fence left open or a code span is an example, not a call; so is JSON
 * after prose or in a fence. Only a call naming a known tool counts; anything else stays text.
 */
import type { ToolCall } from "../domain/Session"
import { isRecord } from "../lib/Guards"

interface TextCalls {
  /** The text before the calls: what stays as the answer. */
  readonly content: string
  readonly calls: ReadonlyArray<ToolCall>
}

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

interface Found {
  readonly name: string
  readonly arguments: string
}

/** One call object, or undefined when it is not a call of a known tool with object arguments. */
const callOf = (value: unknown, known: ReadonlySet<string>, argumentsRequired: boolean): Found | undefined => {
  if (!isRecord(value)) return undefined
  const fn = isRecord(value.function) ? value.function : value
  const name = fn.name
  if (typeof name !== "string" || !known.has(name)) return undefined
  const raw = "arguments" in fn ? fn.arguments : "parameters" in fn ? fn.parameters : undefined
  if (raw === undefined) return argumentsRequired ? undefined : { name, arguments: "{}" }
  const args = typeof raw === "string" ? parse(raw) : raw
  return isRecord(args) ? { name, arguments: JSON.stringify(args) } : undefined
}

/** A call or a list of calls; undefined when any of them is not a call. */
const callsOf = (value: unknown, known: ReadonlySet<string>, argumentsRequired: boolean): Array<Found> | undefined => {
  const items = Array.isArray(value) ? value : [value]
  if (items.length === 0) return undefined
  const found: Array<Found> = []
  for (const item of items) {
    const call = callOf(item, known, argumentsRequired)
    if (call === undefined) return undefined
    found.push(call)
  }
  return found
}

const HERMES_OPEN = "<tool_call>"
const HERMES_CLOSE = "</tool_call>"

/** `<tool_call>…</tool_call>` blocks up to the end (the last one may lack its closing tag). */
const hermes = (text: string, known: ReadonlySet<string>): { start: number; calls: Array<Found> } | undefined => {
  const start = text.indexOf(HERMES_OPEN)
  if (start < 0) return undefined
  const calls: Array<Found> = []
  // trimmed at the start only, once: trimming both ends on each block is quadratic in the blanks after them
  let rest = text.slice(start)
  while (rest !== "") {
    if (!rest.startsWith(HERMES_OPEN)) return undefined
    rest = rest.slice(HERMES_OPEN.length)
    const close = rest.indexOf(HERMES_CLOSE)
    const body = close < 0 ? rest : rest.slice(0, close)
    const found = callsOf(parse(body.trim()), known, false)
    if (found === undefined) return undefined
    // one by one: spread as arguments, a block listing 200,000 calls overflows the stack
    for (const call of found) calls.push(call)
    rest = close < 0 ? "" : rest.slice(close + HERMES_CLOSE.length).trimStart()
  }
  return { start, calls }
}

const MISTRAL = "[TOOL_CALLS]"
const MISTRAL_ARGS = "[ARGS]"

/** `[TOOL_CALLS][…]` (a JSON list), or `[TOOL_CALLS]name[ARGS]{…}` repeated. */
const mistral = (text: string, known: ReadonlySet<string>): { start: number; calls: Array<Found> } | undefined => {
  const start = text.indexOf(MISTRAL)
  if (start < 0) return undefined
  const rest = text.slice(start + MISTRAL.length).trim()
  if (rest.startsWith("[") || rest.startsWith("{")) {
    const found = callsOf(parse(rest), known, false)
    return found === undefined ? undefined : { start, calls: found }
  }
  const calls: Array<Found> = []
  for (const part of rest.split(MISTRAL)) {
    const at = part.indexOf(MISTRAL_ARGS)
    if (at < 0) return undefined
    const call = callOf(
      { name: part.slice(0, at).trim(), arguments: parse(part.slice(at + MISTRAL_ARGS.length).trim()) },
      known,
      true
    )
    if (call === undefined) return undefined
    calls.push(call)
  }
  return { start, calls }
}

/** A JSON call, or a list of calls, that is the whole text. */
const bareJson = (text: string, known: ReadonlySet<string>): { start: number; calls: Array<Found> } | undefined => {
  const body = text.trim()
  if (!/^[{[]/.test(body)) return undefined
  const found = callsOf(parse(body), known, true)
  return found === undefined ? undefined : { start: 0, calls: found }
}

/** Whether the end of `text` is inside a code fence left open, or a code span on its last line. */
const inCode = (text: string): boolean => {
  const fences = text.match(/^[ \t]*```/gm)?.length ?? 0
  if (fences % 2 === 1) return true
  const lastLine = text.slice(text.lastIndexOf("\n") + 1)
  return (lastLine.match(/`/g)?.length ?? 0) % 2 === 1
}

/** A tagged form: its calls, unless the tags are in code (an example the text shows). */
const tagged = (
  parser: (text: string, known: ReadonlySet<string>) => { start: number; calls: Array<Found> } | undefined
) =>
(text: string, known: ReadonlySet<string>) => {
  const found = parser(text, known)
  return found === undefined || inCode(text.slice(0, found.start)) ? undefined : found
}

const PARSERS = [tagged(hermes), tagged(mistral), bareJson]

/**
 * The tool calls `text` is, or ends with in a model's own tags, and the text before them;
 * undefined when it holds no well-formed call of a known tool in one of those forms.
 */
export const textToolCalls = (text: string, known: ReadonlySet<string>): TextCalls | undefined => {
  if (text.trim() === "" || known.size === 0) return undefined
  let found: { start: number; calls: Array<Found> } | undefined
  for (const parser of PARSERS) found ??= parser(text, known)
  if (found === undefined || found.calls.length === 0) return undefined
  const base = Math.random().toString(36).slice(2, 10)
  return {
    content: text.slice(0, found.start).trimEnd(),
    calls: found.calls.map((call, index) => ({
      id: `call_${base}_${index}`,
      type: "function" as const,
      function: { name: call.name, arguments: call.arguments }
    }))
  }
}

/** A call written in tags that cannot be read: where its tags start, the text of them, and why. */
export interface MalformedCall {
  readonly start: number
  readonly written: string
  readonly why: string
}

/** Why `body` is not JSON of a call (or a list of calls) of any tool, or undefined when it is. */
const unreadable = (body: string): string | undefined => {
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch (cause) {
    return `its JSON is not valid (${cause instanceof Error ? cause.message : String(cause)})`
  }
  const items = Array.isArray(value) ? value : [value]
  const call = (item: unknown) => {
    const fn = isRecord(item) && isRecord(item.function) ? item.function : item
    if (!isRecord(fn) || typeof fn.name !== "string") return false
    const raw = "arguments" in fn ? fn.arguments : fn.parameters
    return raw === undefined || isRecord(raw) || (typeof raw === "string" && isRecord(parse(raw)))
  }
  return items.length > 0 && items.every(call) ? undefined : "it is not a call: {\"name\": …, \"arguments\": {…}}"
}

/** The `<tool_call>` blocks from `start` to the end: the first that cannot be read, and why. */
const badHermes = (text: string, start: number): string | undefined => {
  let rest = text.slice(start)
  let first: string | undefined
  while (rest !== "") {
    if (!rest.startsWith(HERMES_OPEN)) return undefined // prose after the tags: not a call
    rest = rest.slice(HERMES_OPEN.length)
    const close = rest.indexOf(HERMES_CLOSE)
    first ??= unreadable((close < 0 ? rest : rest.slice(0, close)).trim())
    rest = close < 0 ? "" : rest.slice(close + HERMES_CLOSE.length).trimStart()
  }
  return first
}

/** `[TOOL_CALLS]` and what follows it to the end: why it cannot be read, if it cannot. */
const badMistral = (text: string, start: number): string | undefined => {
  const rest = text.slice(start + MISTRAL.length).trim()
  if (rest.startsWith("[") || rest.startsWith("{")) return unreadable(rest)
  for (const part of rest.split(MISTRAL)) {
    const at = part.indexOf(MISTRAL_ARGS)
    if (at < 0) return `${MISTRAL_ARGS} is missing`
    const args = part.slice(at + MISTRAL_ARGS.length).trim()
    if (!isRecord(parse(args))) return `its arguments are not a JSON object: ${args}`
  }
  return undefined
}

/**
 * A call the model wrote in its own tags (`<tool_call>`, `[TOOL_CALLS]`) that runs to the end
 * of the answer, outside code, yet cannot be read: JSON cut or broken, or not the shape of a
 * call. Undefined when there is none (a well-formed call of a tool mm does not have stays text).
 */
export const malformedTextCall = (text: string): MalformedCall | undefined => {
  for (const [marker, bad] of [[HERMES_OPEN, badHermes], [MISTRAL, badMistral]] as const) {
    const start = text.indexOf(marker)
    if (start < 0 || inCode(text.slice(0, start))) continue
    const why = bad(text, start)
    if (why !== undefined) return { start, written: text.slice(start).trim(), why }
  }
  return undefined
}

const MARKERS = [HERMES_OPEN, MISTRAL]
/** How many characters before a delta a marker it completes may start at. */
const MARKER_REACH = Math.max(...MARKERS.map((marker) => marker.length)) - 1

/** How an answer that is a bare JSON call (or a list of them) may begin: `{"`, `[{"`, or a part of it. */
const CALL_OPENING = /^\s*(?:\{\s*(?:"|$)|\[\s*(?:\{\s*(?:"|$)|$))/

/** The first marker in `text`, from `from` on. */
const firstMarker = (text: string, from: number): number | undefined => {
  let first: number | undefined
  for (const marker of MARKERS) {
    const at = text.indexOf(marker, from)
    if (at >= 0 && (first === undefined || at < first)) first = at
  }
  return first
}

/** Where a marker cut by the end of `text` starts, if one is. */
const partialMarker = (text: string): number | undefined => {
  for (const marker of MARKERS) {
    for (let k = Math.min(marker.length - 1, text.length); k > 0; k--) {
      if (text.endsWith(marker.slice(0, k))) return text.length - k
    }
  }
  return undefined
}

/**
 * While an answer streams, the text that may be the start of a call written as text is held
 * back (from a marker on, a partial marker at the end, or an answer opening like a JSON
 * call), so that a call is not shown as text before it runs. Text that cannot be a call is
 * shown at once; what is held and turns out not to be a call is shown in full at the end.
 *
 * Each delta is looked at alone, with the few characters before it a marker could start
 * in: all that is held is never searched again, which would be quadratic in the answer.
 */
export class HeldText {
  /** Whether anything but white space was shown yet (kept as a flag: trimming all that was shown on each delta is quadratic). */
  private shownText = false
  /** How many characters of the answer were shown. */
  private shownLength = 0
  private held = ""
  /**
   * Why `held` is held: a partial marker at most (`free`), a marker at its start (all that
   * follows is held), or an answer opening like a JSON call, surely (`call`, from its `"`
   * on) or perhaps (`opening`: blanks and brackets so far).
   */
  private mode: "free" | "marker" | "call" | "opening" = "free"
  /** The last characters held, where a marker the next delta completes may start. */
  private tail = ""
  /** While `opening`: what is held with each run of blanks made one space, as CALL_OPENING sees it alike. */
  private shape = ""

  /** Takes a delta; returns what may be shown now. */
  push(text: string): string {
    if (this.mode === "free") return this.pushFree(this.held + text)
    if (this.mode === "marker") {
      this.held += text
      return ""
    }
    const window = this.tail + text
    const marker = firstMarker(window, 0)
    if (marker !== undefined) {
      const all = this.held + text
      const at = all.length - window.length + marker
      this.held = all.slice(at)
      this.mode = "marker"
      return this.shown(all.slice(0, at))
    }
    if (this.mode === "opening") {
      const opening = CALL_OPENING.exec(this.shape + text)
      if (opening === null) return this.pushFree(this.held + text)
      if (opening[0].endsWith("\"")) this.mode = "call"
      else this.shape = (this.shape + text).replace(/\s+/g, " ")
    }
    this.held += text
    this.tail = window.slice(-MARKER_REACH)
    return ""
  }

  /** The text held back, to be shown after all (the answer held no call). */
  flush(): string {
    const out = this.held
    this.reset()
    return this.shown(out)
  }

  /**
   * The answer held calls and `content` is the text before them: what of it is still held,
   * to be shown now; the calls themselves are dropped.
   */
  flushBefore(content: string): string {
    this.reset()
    return this.shown(content.slice(this.shownLength))
  }

  private reset(): void {
    this.held = ""
    this.mode = "free"
    this.tail = ""
    this.shape = ""
  }

  private shown(out: string): string {
    this.shownText ||= out.trim() !== ""
    this.shownLength += out.length
    return out
  }

  /** `all` holds at most a partial marker before this delta: looks at it whole. */
  private pushFree(all: string): string {
    const marker = firstMarker(all, 0)
    if (marker !== undefined) {
      this.held = all.slice(marker)
      this.mode = "marker"
      return this.shown(all.slice(0, marker))
    }
    const opening = this.shownText ? null : CALL_OPENING.exec(all)
    if (opening !== null) {
      this.held = all
      this.mode = opening[0].endsWith("\"") ? "call" : "opening"
      this.shape = this.mode === "opening" ? all.replace(/\s+/g, " ") : ""
      this.tail = all.slice(-MARKER_REACH)
      return ""
    }
    const partial = partialMarker(all)
    this.held = partial === undefined ? "" : all.slice(partial)
    this.mode = "free"
    return this.shown(partial === undefined ? all : all.slice(0, partial))
  }
}
