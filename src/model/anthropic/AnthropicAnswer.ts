/**
 * An Anthropic Messages answer read from its stream of events (`message_start`, then each
 * content block's start, deltas and stop, then `message_delta` with the stop reason and
 * `message_stop`): text as it comes, thinking as mm's reasoning, tool calls assembled from
 * their JSON pieces, and the signed thinking blocks kept whole for the next request.
 */
import { GenerationError } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { answerCalls } from "../AnswerCalls"
import type { AnswerReader } from "../AnswerStream"
import { eventObject } from "../EventJson"
import type { FinishReason, ModelEvent, ProviderData, Usage } from "../ModelClient"
import { cutCallLine } from "../StopReason"
import { midAnswerError } from "./AnthropicFailures"

/** One content block as it is being written. */
interface OpenBlock {
  readonly type: string
  /** A tool call's id and name. */
  readonly id?: string
  readonly name?: string
  /** Text, thinking or a tool call's JSON input so far. */
  text: string
  signature: string
  /** A redacted thinking block's data, or the whole input of a tool call sent at its start. */
  readonly data?: string
}

/** The API's `stop_reason` in mm's words. */
export const finishOf = (reason: string | undefined, withCalls: boolean): FinishReason =>
  reason === "max_tokens"
    ? "length"
    : reason === "refusal"
    ? "content_filter"
    : reason === "tool_use" || withCalls
    ? "tool_calls"
    : "stop"

const count = (value: unknown): number | undefined => (typeof value === "number" ? value : undefined)

export class AnthropicAnswer implements AnswerReader {
  private contentSoFar = ""
  private reasoning = ""
  private reasoningSent = 0
  private byteCount = 0
  private stopReason: string | undefined
  private stopped = false
  private readonly blocks = new Map<number, OpenBlock>()
  private readonly usageSeen: Record<string, number> = {}

  /**
   * `redact` takes the known secrets out of the completed text and reasoning; `cutCall` words
   * a tool call whose input the output limit left incomplete.
   */
  constructor(
    private readonly model: string,
    private readonly redact: (text: string) => string = (text) => text,
    private readonly cutCall: (tool: string, usage: Usage | undefined) => string = (tool) =>
      cutCallLine("output", tool, undefined)
  ) {}

  absorb(data: string, eventName: string): string | GenerationError | undefined {
    const event = eventObject(data, "the Anthropic API sent an event")
    if (event instanceof GenerationError) return event
    const type = typeof event.type === "string" ? event.type : eventName
    switch (type) {
      case "error":
        return midAnswerError(data)
      case "message":
        return this.whole(event)
      case "message_start":
        if (isRecord(event.message)) this.addUsage(event.message.usage)
        return undefined
      case "content_block_start":
        this.open(count(event.index) ?? this.blocks.size, event.content_block)
        return undefined
      case "content_block_delta":
        return this.delta(count(event.index) ?? this.blocks.size - 1, event.delta)
      case "message_delta":
        if (isRecord(event.delta) && typeof event.delta.stop_reason === "string") {
          this.stopReason = event.delta.stop_reason
        }
        this.addUsage(event.usage)
        return undefined
      case "message_stop":
        this.stopped = true
        return undefined
      default:
        // ping, content_block_stop, and what later versions of the API add
        return undefined
    }
  }

  /** An answer sent as one JSON body (a server that ignored `stream: true`). */
  private whole(message: Record<string, unknown>): string | undefined {
    this.addUsage(message.usage)
    const content = Array.isArray(message.content) ? message.content : []
    let text = ""
    for (const [index, block] of content.entries()) {
      this.open(index, block)
      if (isRecord(block) && block.type === "text" && typeof block.text === "string") text += block.text
      if (isRecord(block) && block.type === "thinking" && typeof block.thinking === "string") {
        this.reasoning += block.thinking
      }
    }
    this.stopReason = typeof message.stop_reason === "string" ? message.stop_reason : "end_turn"
    this.stopped = true
    this.contentSoFar += text
    this.byteCount += Buffer.byteLength(text)
    return text === "" ? undefined : text
  }

  private open(index: number, start: unknown): void {
    if (!isRecord(start) || typeof start.type !== "string") return
    const input = start.type === "tool_use" && isRecord(start.input) && Object.keys(start.input).length > 0
      ? JSON.stringify(start.input)
      : undefined
    this.blocks.set(index, {
      type: start.type,
      ...(typeof start.id === "string" ? { id: start.id } : {}),
      ...(typeof start.name === "string" ? { name: start.name } : {}),
      text: start.type === "thinking" && typeof start.thinking === "string" ? start.thinking : "",
      signature: typeof start.signature === "string" ? start.signature : "",
      ...(typeof start.data === "string" ? { data: start.data } : input === undefined ? {} : { data: input })
    })
  }

  private delta(index: number, delta: unknown): string | undefined {
    const block = this.blocks.get(index)
    if (!isRecord(delta) || block === undefined) return undefined
    switch (delta.type) {
      case "text_delta": {
        if (typeof delta.text !== "string" || delta.text === "") return undefined
        this.contentSoFar += delta.text
        this.byteCount += Buffer.byteLength(delta.text)
        return delta.text
      }
      case "thinking_delta":
        if (typeof delta.thinking === "string") {
          block.text += delta.thinking
          this.reasoning += delta.thinking
          this.byteCount += Buffer.byteLength(delta.thinking)
        }
        return undefined
      case "signature_delta":
        if (typeof delta.signature === "string") block.signature += delta.signature
        return undefined
      case "input_json_delta":
        if (typeof delta.partial_json === "string") {
          block.text += delta.partial_json
          this.byteCount += Buffer.byteLength(delta.partial_json)
        }
        return undefined
      default:
        return undefined
    }
  }

  private addUsage(usage: unknown): void {
    if (!isRecord(usage)) return
    for (const [field, value] of Object.entries(usage)) {
      if (typeof value === "number") this.usageSeen[field] = value
    }
  }

  /** The usage in mm's words: the whole prompt is what was read, written and sent fresh. */
  get usage(): Usage | undefined {
    const seen = this.usageSeen
    if (seen.input_tokens === undefined && seen.output_tokens === undefined) return undefined
    const read = seen.cache_read_input_tokens ?? 0
    const written = seen.cache_creation_input_tokens ?? 0
    return {
      promptTokens: (seen.input_tokens ?? 0) + read + written,
      completionTokens: seen.output_tokens ?? 0,
      ...(read > 0 ? { cachedTokens: read } : {}),
      ...(written > 0 ? { cacheWriteTokens: written } : {})
    }
  }

  takeReasoning(): string {
    const fresh = this.reasoning.slice(this.reasoningSent)
    this.reasoningSent = this.reasoning.length
    return fresh
  }

  endContent(): string {
    return ""
  }

  get content(): string {
    return this.contentSoFar
  }

  get bytes(): number {
    return this.byteCount
  }

  get finished(): boolean {
    return this.stopped || this.stopReason !== undefined
  }

  /** The thinking blocks, as the API wants them back: whole, with their signatures. */
  private thinking(): ProviderData | undefined {
    const items: Array<Record<string, unknown>> = []
    for (const [, block] of [...this.blocks.entries()].sort(([a], [b]) => a - b)) {
      if (block.type === "thinking") items.push({ type: "thinking", thinking: block.text, signature: block.signature })
      if (block.type === "redacted_thinking") items.push({ type: "redacted_thinking", data: block.data ?? "" })
    }
    return items.length === 0 ? undefined : { api: "anthropic", model: this.model, items }
  }

  complete(): ModelEvent | GenerationError {
    const written = [...this.blocks.entries()].sort(([a], [b]) => a - b).flatMap(([index, block]) =>
      block.type === "tool_use"
        ? [{
          index,
          id: block.id ?? `toolu_mm_${index}`,
          name: block.name ?? "",
          arguments: block.text.trim() === "" ? block.data ?? "" : block.text
        }]
        : []
    )
    const calls = answerCalls(written, this.stopReason === "max_tokens", (tool) => this.cutCall(tool, this.usage))
    if (calls instanceof GenerationError) return calls
    const { toolCalls, cutCalls } = calls
    const opaque = this.thinking()
    return {
      _tag: "Completed",
      content: this.redact(this.contentSoFar),
      reasoning: this.redact(this.reasoning),
      toolCalls,
      finishReason: finishOf(this.stopReason, toolCalls.length > 0),
      usage: this.usage,
      ...(opaque === undefined ? {} : { opaque }),
      ...(cutCalls.length === 0 ? {} : { cutCalls })
    }
  }
}
