/** The answer as it streams in: text, reasoning and tool calls assembled from their deltas. */
import { GenerationError } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { answerCalls } from "../AnswerCalls"
import type { AnswerReader } from "../AnswerStream"
import { eventObject } from "../EventJson"
import { fail, serverMessage } from "../Failures"
import type { FinishReason, ModelEvent, Usage } from "../ModelClient"
import { cutCallLine } from "../StopReason"
import { ThinkSplitter } from "./Reasoning"

interface PendingCall {
  id: string | undefined
  name: string
  arguments: string
}

/** A server's `finish_reason` in mm's words: a missing or unknown one is "stop", or "tool_calls" with calls. */
const finishOf = (reason: string | undefined, withCalls: boolean): FinishReason =>
  reason === "length" || reason === "content_filter"
    ? reason
    : reason === "tool_calls" || reason === "function_call" || withCalls
    ? "tool_calls"
    : "stop"

/** The answer so far: the text, the tool calls by index, how it finished. */
export class Completion implements AnswerReader {
  private contentSoFar = ""
  /** The reasoning so far; `takeReasoning` hands out what arrived since it was last called. */
  private reasoning = ""
  private reasoningSent = 0
  private readonly think = new ThinkSplitter()
  private finishReason: string | undefined = undefined
  private usage: Usage | undefined = undefined
  private done = false
  private byteCount = 0
  private readonly calls = new Map<number, PendingCall>()
  /** A server's index reused for another call, and the slot that call really has. */
  private readonly aliases = new Map<number, number>()
  /**
   * The slot of each call id: the first slot made that has it. Kept beside `calls` (with the
   * order slots were made in) so that a delta finds its call without a scan of them all.
   */
  private readonly slotOfId = new Map<string, number>()
  private readonly madeAt = new Map<number, number>()

  /**
   * `redact` takes the known secrets out of the completed content and reasoning; `cutCall`
   * words a tool call whose arguments a `finish_reason: length` left incomplete.
   */
  constructor(
    private readonly redact: (text: string) => string = (text) => text,
    private readonly cutCall: (tool: string, usage: Usage | undefined) => string = (tool) =>
      cutCallLine("output", tool, undefined)
  ) {}
  private lastIndex = -1
  /** llama-server's latest word on reading the prompt, not handed out yet. */
  private progress: { readonly processed: number; readonly total: number } | undefined = undefined
  /** Ids given to calls the server sent without one: the same for the whole answer. */
  private readonly idBase = Math.random().toString(36).slice(2, 10)

  /**
   * Absorbs one `data:` payload; returns the text to show now, or a failure.
   * Plain `JSON.parse` and narrowing: this runs once per token.
   */
  absorb(data: string, eventName: string): string | GenerationError | undefined {
    if (data.length <= 8 && data.trim() === "[DONE]") {
      this.done = true
      return undefined
    }
    const chunk = eventObject(data, "the model server sent a chunk")
    if (chunk instanceof GenerationError) return chunk
    if ((chunk.error !== undefined && chunk.error !== null) || eventName === "error") {
      const said = serverMessage(data)
      return fail("http", `the model server reported an error mid-answer: ${said === "" ? "(no message)" : said}`, data)
    }
    const usage = chunk.usage
    if (isRecord(usage) && typeof usage.prompt_tokens === "number") {
      const details = usage.prompt_tokens_details
      const cached = isRecord(details) && typeof details.cached_tokens === "number" && details.cached_tokens > 0
        ? details.cached_tokens
        : undefined
      this.usage = {
        promptTokens: usage.prompt_tokens,
        completionTokens: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0,
        ...(cached === undefined ? {} : { cachedTokens: cached })
      }
    }
    this.absorbProgress(chunk.prompt_progress)
    const choices = chunk.choices
    if (!Array.isArray(choices) || choices.length === 0) return undefined
    const choice: unknown = choices[0]
    if (!isRecord(choice)) return undefined
    let text: string | undefined
    const delta = isRecord(choice.delta) ? choice.delta : isRecord(choice.message) ? choice.message : undefined
    if (delta !== undefined) {
      const thought = typeof delta.reasoning_content === "string" ? delta.reasoning_content : delta.reasoning
      if (typeof thought === "string") {
        this.reasoning += thought
        this.byteCount += Buffer.byteLength(thought)
      }
      if (typeof delta.content === "string" && delta.content !== "") {
        this.byteCount += Buffer.byteLength(delta.content)
        const split = this.think.push(delta.content)
        this.reasoning += split.reasoning
        this.contentSoFar += split.text
        if (split.text !== "") text = split.text
      }
      if (Array.isArray(delta.tool_calls)) this.absorbToolCalls(delta.tool_calls, delta === choice.message)
    }
    if (typeof choice.finish_reason === "string" && choice.finish_reason !== "") {
      this.finishReason = choice.finish_reason
    }
    return text
  }

  private absorbToolCalls(deltas: ReadonlyArray<unknown>, whole: boolean): void {
    for (const [position, delta] of deltas.entries()) {
      if (!isRecord(delta)) continue
      const id = typeof delta.id === "string" && delta.id !== "" ? delta.id : undefined
      const fn = delta.function
      const named = isRecord(fn) && typeof fn.name === "string" && fn.name !== ""
      const key = this.slotFor(whole ? position : delta.index, id, named)
      const call = this.calls.get(key) as PendingCall
      if (call.id === undefined && id !== undefined) this.giveId(key, call, id)
      if (!isRecord(fn)) continue
      if (call.name === "" && typeof fn.name === "string") call.name = fn.name
      const added = typeof fn.arguments === "string"
        ? fn.arguments
        : isRecord(fn.arguments)
        ? JSON.stringify(fn.arguments)
        : ""
      call.arguments += added
      this.byteCount += Buffer.byteLength(added)
    }
  }

  /**
   * By `index` when the server gives one; otherwise by id, otherwise the call being written.
   * A new id with a name (or a name without index or id) where a named call already stands
   * starts another call: some servers send every whole call at index 0.
   */
  private slotFor(index: unknown, id: string | undefined, named: boolean): number {
    let key: number
    if (typeof index === "number") {
      key = this.aliases.get(index) ?? index
      const there = this.calls.get(key)
      if (
        named && there !== undefined && id !== undefined && there.id !== undefined && there.id !== id &&
        there.name !== ""
      ) {
        // `lastIndex` is the largest slot there is
        key = this.slotOfId.get(id) ?? this.lastIndex + 1
        this.aliases.set(index, key)
      }
    } else if (id !== undefined) {
      key = this.slotOfId.get(id) ?? this.lastIndex + 1
    } else {
      key = Math.max(this.lastIndex, 0)
      if (named && this.calls.get(key)?.name) key = this.lastIndex + 1
    }
    if (!this.calls.has(key)) {
      this.madeAt.set(key, this.calls.size)
      this.calls.set(key, { id: undefined, name: "", arguments: "" })
    }
    if (key > this.lastIndex) this.lastIndex = key
    return key
  }

  /** The call in slot `key` gets its id; an id two slots share finds the one made first. */
  private giveId(key: number, call: PendingCall, id: string): void {
    call.id = id
    const other = this.slotOfId.get(id)
    if (other === undefined || (this.madeAt.get(key) ?? 0) < (this.madeAt.get(other) ?? 0)) this.slotOfId.set(id, key)
  }

  /**
   * llama-server's `prompt_progress` (asked with `return_progress`): `processed` counts the
   * tokens read from its cache too, out of `total`. It says nothing of the answer.
   */
  private absorbProgress(progress: unknown): void {
    if (!isRecord(progress)) return
    const { processed, total } = progress
    if (typeof processed !== "number" || typeof total !== "number" || !(total > 0) || !(processed >= 0)) return
    this.progress = { processed: Math.min(processed, total), total }
  }

  /** How far the server has read the prompt, when it said so since the last call. */
  takeProgress(): { readonly processed: number; readonly total: number } | undefined {
    const progress = this.progress
    this.progress = undefined
    return progress
  }

  /** Reasoning that arrived since the last call. */
  takeReasoning(): string {
    const fresh = this.reasoning.slice(this.reasoningSent)
    this.reasoningSent = this.reasoning.length
    return fresh
  }

  /** At the end of the content: text or reasoning held back while a `<think>` tag could still be forming. */
  endContent(): string {
    const split = this.think.end()
    this.reasoning += split.reasoning
    this.contentSoFar += split.text
    return split.text
  }

  /** The answer's text so far. */
  get content(): string {
    return this.contentSoFar
  }

  /** UTF-8 bytes of text and tool-call arguments received so far (held against model.maxAnswerBytes). */
  get bytes(): number {
    return this.byteCount
  }

  get finished(): boolean {
    return this.done || this.finishReason !== undefined
  }

  /**
   * The closing event, once every tool call has a name and JSON arguments. Under
   * `finish_reason: length`, a call whose arguments the limit cut is left out with its line
   * when complete calls come before it; alone, it fails the answer.
   */
  complete(): ModelEvent | GenerationError {
    const written = [...this.calls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({
      index,
      id: call.id ?? `call_${this.idBase}_${index}`,
      name: call.name,
      arguments: call.arguments
    }))
    const calls = answerCalls(written, this.finishReason === "length", (tool) => this.cutCall(tool, this.usage))
    if (calls instanceof GenerationError) return calls
    const { toolCalls, cutCalls } = calls
    return {
      _tag: "Completed",
      content: this.redact(this.contentSoFar),
      reasoning: this.redact(this.reasoning),
      toolCalls,
      finishReason: finishOf(this.finishReason, toolCalls.length > 0),
      usage: this.usage,
      ...(cutCalls.length === 0 ? {} : { cutCalls })
    }
  }
}
