/**
 * A scripted fake of Anthropic's Messages API on 127.0.0.1, written from its public reference:
 * `POST /v1/messages` streamed as `message_start`, each content block's
 * `content_block_start` / deltas / `content_block_stop`, a `ping`, then `message_delta` (stop
 * reason, output tokens) and `message_stop`; refusals as `{"type":"error","error":{…}}`;
 * `GET /v1/models` as a page of `{data: [{type: "model", id, …}]}`. Every request is recorded.
 */
import { listen, type ListeningServer, readRequest, type RecordedRequest } from "./FakeApiServer"

export interface FakeUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cache_read_input_tokens?: number
  readonly cache_creation_input_tokens?: number
}

/** One scripted answer, used for the next `POST /v1/messages`. */
export type AnthropicStep =
  | {
    readonly kind?: "reply"
    /** Thinking first, streamed in pieces, then its signature (or a redacted block's data). */
    readonly thinking?: { readonly text: string; readonly signature: string }
    readonly redactedThinking?: string
    /** Text, one delta per element. */
    readonly text?: string | ReadonlyArray<string>
    readonly toolUses?: ReadonlyArray<{ readonly name: string; readonly input: object; readonly id?: string }>
    readonly stopReason?: string
    readonly usage?: FakeUsage
    /** Pause before each delta, in milliseconds. */
    readonly chunkDelayMs?: number
  }
  /** A refusal: the status, Anthropic's error type and message, extra headers. */
  | {
    readonly kind: "error"
    readonly status: number
    readonly type: string
    readonly message: string
    readonly headers?: Readonly<Record<string, string>>
  }
  /** Some text, then an `error` event in the stream (the API overloaded mid-answer). */
  | { readonly kind: "error-event"; readonly text?: string; readonly type: string; readonly message: string }
  /** `message_start` and the given text, then nothing more: the client must give up or cancel. */
  | { readonly kind: "stall"; readonly text?: string }

export type RecordedAnthropicRequest = RecordedRequest

/** The server (its URL, `aborted`, `close`) and what it was sent. */
export interface FakeAnthropicServer extends ListeningServer {
  readonly requests: Array<RecordedAnthropicRequest>
  /** The `POST /v1/messages` requests only. */
  readonly messages: () => Array<RecordedAnthropicRequest>
  readonly push: (...steps: ReadonlyArray<AnthropicStep>) => void
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let messageCounter = 0

export const startFakeAnthropicServer = async (
  options: { readonly steps?: ReadonlyArray<AnthropicStep>; readonly models?: ReadonlyArray<string> } = {}
): Promise<FakeAnthropicServer> => {
  const queue: Array<AnthropicStep> = [...(options.steps ?? [])]
  const requests: Array<RecordedAnthropicRequest> = []
  const server = await listen(async (req, res) => {
    const request = await readRequest(req)
    requests.push(request)
    const { body, path } = request
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers })
      res.end(JSON.stringify(value))
    }
    const errorBody = (type: string, message: string) => ({ type: "error", error: { type, message } })

    if (req.method === "GET" && path === "/v1/models") {
      return json(200, {
        data: (options.models ?? ["claude-fake-20250101"]).map((id) => ({
          type: "model",
          id,
          display_name: id,
          created_at: "2025-01-01T00:00:00Z"
        })),
        has_more: false,
        first_id: null,
        last_id: null
      })
    }
    if (req.method !== "POST" || path !== "/v1/messages") {
      return json(404, errorBody("not_found_error", `no route ${req.method} ${path}`))
    }
    if (req.headers["anthropic-version"] !== "2023-06-01") {
      return json(400, errorBody("invalid_request_error", "anthropic-version header is required"))
    }
    const step = queue.shift()
    if (step === undefined) return json(500, errorBody("api_error", "fake server: no step left for this request"))
    if (step.kind === "error") return json(step.status, errorBody(step.type, step.message), { ...step.headers })

    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    const send = (event: string, data: object) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
    const alive = () => !res.destroyed && !res.writableEnded
    const usage = step.kind === undefined || step.kind === "reply"
      ? step.usage ?? { input_tokens: 10, output_tokens: 5 }
      : { input_tokens: 10, output_tokens: 1 }
    send("message_start", {
      type: "message_start",
      message: {
        id: `msg_fake_${++messageCounter}`,
        type: "message",
        role: "assistant",
        content: [],
        model: body?.model ?? "claude-fake",
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input_tokens,
          cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
          cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
          output_tokens: 1
        }
      }
    })
    if (step.kind === "stall" || step.kind === "error-event") {
      if (step.text !== undefined) {
        send("content_block_start", {
          type: "content_block_start",
          index: 0,
          content_block: { type: "text", text: "" }
        })
        send("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: step.text }
        })
      }
      if (step.kind === "error-event") {
        send("error", errorBody(step.type, step.message))
        res.end()
      }
      return
    }
    let index = 0
    const pause = async () => {
      if (step.chunkDelayMs !== undefined) await sleep(step.chunkDelayMs)
      return alive()
    }
    const block = async (start: object, deltas: ReadonlyArray<object>) => {
      send("content_block_start", { type: "content_block_start", index, content_block: start })
      for (const delta of deltas) {
        if (!(await pause())) return false
        send("content_block_delta", { type: "content_block_delta", index, delta })
      }
      send("content_block_stop", { type: "content_block_stop", index })
      index++
      return true
    }
    if (step.thinking !== undefined) {
      const words = step.thinking.text.split(/(?<= )/)
      const ok = await block({ type: "thinking", thinking: "", signature: "" }, [
        ...words.map((thinking) => ({ type: "thinking_delta", thinking })),
        { type: "signature_delta", signature: step.thinking.signature }
      ])
      if (!ok) return
    }
    if (step.redactedThinking !== undefined) {
      await block({ type: "redacted_thinking", data: step.redactedThinking }, [])
    }
    send("ping", { type: "ping" })
    const texts = step.text === undefined ? [] : typeof step.text === "string" ? [step.text] : step.text
    if (texts.length > 0) {
      const ok = await block({ type: "text", text: "" }, texts.map((text) => ({ type: "text_delta", text })))
      if (!ok) return
    }
    for (const [n, use] of (step.toolUses ?? []).entries()) {
      const input = JSON.stringify(use.input)
      const half = Math.floor(input.length / 2)
      const ok = await block(
        { type: "tool_use", id: use.id ?? `toolu_fake_${messageCounter}_${n}`, name: use.name, input: {} },
        [
          { type: "input_json_delta", partial_json: "" },
          { type: "input_json_delta", partial_json: input.slice(0, half) },
          { type: "input_json_delta", partial_json: input.slice(half) }
        ]
      )
      if (!ok) return
    }
    const stop = step.stopReason ?? ((step.toolUses ?? []).length > 0 ? "tool_use" : "end_turn")
    send("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: usage.output_tokens }
    })
    send("message_stop", { type: "message_stop" })
    res.end()
  })
  return {
    url: server.url,
    requests,
    messages: () => requests.filter((r) => r.method === "POST" && r.path === "/v1/messages"),
    push: (...steps) => queue.push(...steps),
    aborted: server.aborted,
    close: server.close
  }
}
