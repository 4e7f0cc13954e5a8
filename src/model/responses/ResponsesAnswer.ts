/**
 * A Responses answer read from its events (`response.output_text.delta`,
 * `response.function_call_arguments.delta`, `response.output_item.done`, `response.completed`…)
 * or from one whole response object: its text, its reasoning summary, its function calls by
 * output index, the reasoning items kept for the next request, its usage and how it ended.
 */
import { GenerationError } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { answerCalls } from "../AnswerCalls"
import type { AnswerReader } from "../AnswerStream"
import { eventObject } from "../EventJson"
import type { FinishReason, ModelEvent, Usage } from "../ModelClient"
import { eventFailure } from "./ResponsesFailures"

interface PendingCall {
  callId: string
  name: string
  arguments: string
}

/** Where an answer stands once the API said it is over. */
type Ending = { readonly status: "completed" } | { readonly status: "incomplete"; readonly reason: string }

const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** `usage` of a response in mm's words. */
export const usageOf = (usage: unknown): Usage | undefined => {
  if (!isRecord(usage) || typeof usage.input_tokens !== "number") return undefined
  const details = usage.input_tokens_details
  const cached = isRecord(details) && typeof details.cached_tokens === "number" && details.cached_tokens > 0
    ? details.cached_tokens
    : undefined
  return {
    promptTokens: usage.input_tokens,
    completionTokens: typeof usage.output_tokens === "number" ? usage.output_tokens : 0,
    ...(cached === undefined ? {} : { cachedTokens: cached })
  }
}

/** The answer so far, one event at a time. */
export class ResponsesAnswer implements AnswerReader {
  private said = ""
  /** How much of `said` was handed out to be shown (the rest came only in the closing response). */
  private shown = 0
  private reasoning = ""
  private reasoningSent = 0
  private byteCount = 0
  private ending: Ending | undefined = undefined
  private usage: Usage | undefined = undefined
  private readonly calls = new Map<number, PendingCall>()
  /** The reasoning items as `response.output_item.done` gave them, by output index. */
  private readonly reasoningItems = new Map<number, Record<string, unknown>>()
  /** The summary part being written (`item_id:summary_index`), to put a blank line between parts. */
  private summaryPart: string | undefined = undefined

  /**
   * `model` is the one asked (its reasoning items are kept under it); `redact` takes the known
   * secrets out of the completed text; `cutCall` words a call an output limit left incomplete.
   */
  constructor(
    private readonly model: string,
    private readonly redact: (text: string) => string,
    private readonly cutCall: (tool: string, usage: Usage | undefined) => string
  ) {}

  absorb(data: string, eventName: string): string | GenerationError | undefined {
    const event = eventObject(data, "the model server sent an event")
    if (event instanceof GenerationError) return event
    const type = typeof event.type === "string" ? event.type : eventName
    // a server that ignored `stream: true` answers with the whole response object
    if (type === "message" && event.object === "response") return this.whole(event, data)
    return this.onEvent(type, event, data)
  }

  private onEvent(type: string, event: Record<string, unknown>, data: string): string | GenerationError | undefined {
    switch (type) {
      case "response.output_text.delta":
      case "response.refusal.delta": {
        const delta = text(event.delta)
        this.said += delta
        this.shown = this.said.length
        this.byteCount += Buffer.byteLength(delta)
        return delta === "" ? undefined : delta
      }
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        this.think(`${text(event.item_id)}:${String(event.summary_index ?? event.content_index ?? 0)}`, event.delta)
        return undefined
      case "response.output_item.added":
      case "response.output_item.done":
        this.item(event.output_index, event.item)
        return undefined
      case "response.function_call_arguments.delta": {
        const call = this.callAt(event.output_index)
        const delta = text(event.delta)
        if (call !== undefined) call.arguments += delta
        this.byteCount += Buffer.byteLength(delta)
        return undefined
      }
      case "response.function_call_arguments.done": {
        const call = this.callAt(event.output_index)
        if (call !== undefined && typeof event.arguments === "string") call.arguments = event.arguments
        return undefined
      }
      case "response.completed":
      case "response.incomplete":
        return this.end(event.response)
      case "response.failed":
      case "error":
        return eventFailure(event, data)
      default:
        return undefined
    }
  }

  /** Reasoning text streamed for the part `part`, a blank line before each new part. */
  private think(part: string, delta: unknown): void {
    const more = text(delta)
    if (more === "") return
    if (this.summaryPart !== undefined && this.summaryPart !== part && this.reasoning !== "") this.reasoning += "\n\n"
    this.summaryPart = part
    this.reasoning += more
    this.byteCount += Buffer.byteLength(more)
  }

  private callAt(index: unknown): PendingCall | undefined {
    return typeof index === "number" ? this.calls.get(index) : undefined
  }

  /** An output item begun or finished: a function call takes its slot, a reasoning item is kept. */
  private item(index: unknown, item: unknown): void {
    if (!isRecord(item) || typeof index !== "number") return
    if (item.type === "function_call") {
      const call = this.calls.get(index) ?? { callId: "", name: "", arguments: "" }
      if (typeof item.call_id === "string" && item.call_id !== "") call.callId = item.call_id
      if (typeof item.name === "string" && item.name !== "") call.name = item.name
      if (typeof item.arguments === "string" && item.arguments !== "") call.arguments = item.arguments
      this.calls.set(index, call)
    } else if (item.type === "reasoning" && typeof item.encrypted_content === "string") {
      // only a reasoning item with its encrypted content can go back on a stateless request
      this.reasoningItems.set(index, item)
    }
  }

  /** `response.completed` / `response.incomplete`: how it ended, its usage, and any output not streamed. */
  private end(response: unknown): undefined {
    if (!isRecord(response)) {
      this.ending = { status: "completed" }
      return undefined
    }
    this.usage = usageOf(response.usage) ?? this.usage
    const details = response.incomplete_details
    this.ending = response.status === "incomplete"
      ? { status: "incomplete", reason: isRecord(details) ? text(details.reason) : "" }
      : { status: "completed" }
    if (Array.isArray(response.output)) this.outputNotStreamed(response.output)
    return undefined
  }

  /** The output items of the closing response that no event brought (a server that streams little). */
  private outputNotStreamed(output: ReadonlyArray<unknown>): void {
    const streamedText = this.said !== ""
    for (const [index, item] of output.entries()) {
      if (!isRecord(item)) continue
      if (item.type === "message" && !streamedText && Array.isArray(item.content)) {
        for (const part of item.content) {
          if (isRecord(part) && (part.type === "output_text" || part.type === "refusal")) {
            this.said += text(part.text) + text(part.refusal)
          }
        }
      } else if (item.type === "function_call" && !this.calls.has(index)) this.item(index, item)
      else if (item.type === "reasoning" && !this.reasoningItems.has(index)) this.item(index, item)
    }
  }

  /** A whole response object: everything in it at once; the text is returned to show. */
  private whole(response: Record<string, unknown>, data: string): string | GenerationError | undefined {
    if (response.status === "failed") return eventFailure({ type: "response.failed", response }, data)
    this.end(response)
    this.byteCount += Buffer.byteLength(this.said)
    this.shown = this.said.length
    return this.said === "" ? undefined : this.said
  }

  takeReasoning(): string {
    const fresh = this.reasoning.slice(this.reasoningSent)
    this.reasoningSent = this.reasoning.length
    return fresh
  }

  /** Text that came only in the closing response, not as deltas: shown once the answer ends. */
  endContent(): string {
    const rest = this.said.slice(this.shown)
    this.shown = this.said.length
    return rest
  }

  get content(): string {
    return this.said
  }

  get bytes(): number {
    return this.byteCount
  }

  get finished(): boolean {
    return this.ending !== undefined
  }

  private finishReason(withCalls: boolean): FinishReason {
    if (this.ending?.status === "incomplete") {
      if (this.ending.reason === "content_filter") return "content_filter"
      return "length"
    }
    return withCalls ? "tool_calls" : "stop"
  }

  complete(): ModelEvent | GenerationError {
    const cut = this.ending?.status === "incomplete" && this.ending.reason !== "content_filter"
    const written = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({
      index,
      id: call.callId === "" ? `call_${index}` : call.callId,
      name: call.name,
      arguments: call.arguments
    }))
    const calls = answerCalls(written, cut, (tool) => this.cutCall(tool, this.usage))
    if (calls instanceof GenerationError) return calls
    const { toolCalls, cutCalls } = calls
    const items = [...this.reasoningItems.entries()].sort(([a], [b]) => a - b).map(([, item]) => this.kept(item))
    return {
      _tag: "Completed",
      content: this.redact(this.said),
      reasoning: this.redact(this.reasoning),
      toolCalls,
      finishReason: this.finishReason(toolCalls.length > 0),
      usage: this.usage,
      ...(items.length === 0 ? {} : { opaque: { api: "responses", model: this.model, items } }),
      ...(cutCalls.length === 0 ? {} : { cutCalls })
    }
  }

  /** A reasoning item as the session keeps it: its summary redacted; the encrypted content as sent. */
  private kept(item: Record<string, unknown>): Record<string, unknown> {
    if (!Array.isArray(item.summary)) return item
    return {
      ...item,
      summary: item.summary.map((part) =>
        isRecord(part) && typeof part.text === "string" ? { ...part, text: this.redact(part.text) } : part
      )
    }
  }
}
