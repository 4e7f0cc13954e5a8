/**
 * Tool calls a model wrote as text instead of `tool_calls`, which small open models do when
 * the server's chat template does not parse them:
 * - Hermes / Qwen: `<tool_call>{"name": …, "arguments": {…}}</tool_call>` (one or more);
 * - Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}]`, or `[TOOL_CALLS]name[ARGS]{…}`;
 * - a bare JSON call (`{"name": …, "arguments"|"parameters": {…}}`, or a list of them),
 *   possibly in a ```json fence, as the whole answer or its end.
 * Only a call naming a known tool counts; anything malformed stays text.
 */
import type { ToolCall } from "../domain/Session"

export interface TextCalls {
  /** The text before the calls: what stays as the answer. */
  readonly content: string
  readonly calls: ReadonlyArray<ToolCall>
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

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
  let rest = text.slice(start)
  while (rest.trim() !== "") {
    rest = rest.trimStart()
    if (!rest.startsWith(HERMES_OPEN)) return undefined
    rest = rest.slice(HERMES_OPEN.length)
    const close = rest.indexOf(HERMES_CLOSE)
    const body = close < 0 ? rest : rest.slice(0, close)
    const found = callsOf(parse(body.trim()), known, false)
    if (found === undefined) return undefined
    calls.push(...found)
    rest = close < 0 ? "" : rest.slice(close + HERMES_CLOSE.length)
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

const FENCE = /```(?:json)?[ \t]*\n([\s\S]*?)\n?```\s*$/

/** A JSON call (or list of calls) that is the whole text or its last lines, fenced or not. */
const bareJson = (text: string, known: ReadonlySet<string>): { start: number; calls: Array<Found> } | undefined => {
  const trimmed = text.trimEnd()
  const fenced = FENCE.exec(trimmed)
  if (fenced !== null) {
    const found = callsOf(parse(fenced[1].trim()), known, true)
    return found === undefined ? undefined : { start: fenced.index, calls: found }
  }
  if (!trimmed.endsWith("}") && !trimmed.endsWith("]")) return undefined
  // the first line starting a JSON value that runs to the end
  const starts = [...trimmed.matchAll(/(^|\n)[ \t]*([{[])/g)].slice(0, 200)
  for (const match of starts) {
    const at = match.index + match[0].length - 1
    const found = callsOf(parse(trimmed.slice(at)), known, true)
    if (found !== undefined) return { start: at, calls: found }
  }
  return undefined
}

/**
 * The tool calls at the end of `text`, and the text before them; undefined when the text
 * holds no well-formed call of a known tool there.
 */
export const textToolCalls = (text: string, known: ReadonlySet<string>): TextCalls | undefined => {
  if (text.trim() === "" || known.size === 0) return undefined
  const found = hermes(text, known) ?? mistral(text, known) ?? bareJson(text, known)
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

const MARKERS = [HERMES_OPEN, MISTRAL]

/**
 * While an answer streams, the text that may be the start of a call written as text is held
 * back (a marker, a partial marker at the end, or JSON opening the answer), so that a call
 * is not shown as text before it runs. What turns out not to be a call is shown at the end.
 */
export class HeldText {
  /** Whether anything but white space was shown yet (kept as a flag: trimming all that was shown on each delta is quadratic). */
  private shownText = false
  private held = ""

  /** Takes a delta; returns what may be shown now. */
  push(text: string): string {
    const all = this.held + text
    const at = this.holdFrom(all)
    const out = at === undefined ? all : all.slice(0, at)
    this.held = at === undefined ? "" : all.slice(at)
    this.shownText ||= out.trim() !== ""
    return out
  }

  /** The text held back, to be shown after all (the answer held no call). */
  flush(): string {
    const out = this.held
    this.held = ""
    this.shownText ||= out.trim() !== ""
    return out
  }

  private holdFrom(pending: string): number | undefined {
    let first: number | undefined
    for (const marker of MARKERS) {
      const at = pending.indexOf(marker)
      if (at >= 0 && (first === undefined || at < first)) first = at
    }
    if (first !== undefined) return first
    if (!this.shownText) {
      const start = pending.trimStart()
      if (start.startsWith("{") || start.startsWith("[") || start.startsWith("```")) return 0
    }
    for (const marker of MARKERS) {
      for (let k = Math.min(marker.length - 1, pending.length); k > 0; k--) {
        if (pending.endsWith(marker.slice(0, k))) return pending.length - k
      }
    }
    return undefined
  }
}
