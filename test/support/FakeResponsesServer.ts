/**
 * A scripted fake of OpenAI's Responses API on 127.0.0.1, written from its public reference:
 * `POST /v1/responses` streams the events in the reference's order (`response.created`,
 * `response.in_progress`, per output item `response.output_item.added` … its deltas …
 * `response.output_item.done`, then `response.completed` or `response.incomplete` with the
 * usage), each `event: TYPE` with `{"type": TYPE, "sequence_number": N, …}`; errors come as
 * `{"error": {message, type, param, code}}`. It records every request it is sent.
 */
import { listen, type ListeningServer, readRequest, type RecordedRequest } from "./FakeApiServer"

export interface FakeUsage {
  readonly input_tokens: number
  readonly output_tokens: number
  readonly cached_tokens?: number
  readonly reasoning_tokens?: number
}

/** One scripted answer, used for the next request to /responses. */
export type ResponsesStep =
  | {
    readonly kind?: "reply"
    /** A reasoning item first: its summary streamed part by part, its encrypted content in `output_item.done`. */
    readonly reasoning?: { readonly summary: ReadonlyArray<string>; readonly encrypted: string }
    /** Text streamed as deltas, one per element (a string is one delta per word). */
    readonly text?: string | ReadonlyArray<string>
    readonly calls?: ReadonlyArray<
      { readonly name: string; readonly arguments: string | object; readonly callId?: string }
    >
    readonly usage?: FakeUsage
    /** Ends with `response.incomplete` for this reason instead of `response.completed`. */
    readonly incomplete?: "max_output_tokens" | "content_filter"
    /** Held before the closing event until it settles (the test says when). */
    readonly holdBeforeEnd?: Promise<unknown>
  }
  | {
    readonly kind: "status"
    readonly status: number
    readonly body: unknown
    readonly headers?: Record<string, string>
  }
  /** `response.failed` after `response.created`, with this error. */
  | { readonly kind: "failed"; readonly code: string; readonly message: string }
  /** A bare `error` event after `response.created`. */
  | { readonly kind: "error-event"; readonly code: string; readonly message: string }
  /** The whole response object as one JSON body (a server that ignores `stream: true`). */
  | { readonly kind: "whole"; readonly text: string; readonly usage?: FakeUsage }
  /** Headers, `response.created` and the text's first delta, then nothing more (the client must give up or cancel). */
  | { readonly kind: "stall"; readonly text?: string }

export type RecordedResponsesRequest = RecordedRequest

/** The server (its URL, `aborted`, `close`) and what it was sent. */
export interface FakeResponsesServer extends ListeningServer {
  readonly requests: Array<RecordedResponsesRequest>
  /** The requests to /responses only. */
  readonly posts: () => Array<RecordedResponsesRequest>
  readonly push: (...steps: ReadonlyArray<ResponsesStep>) => void
}

/** The usage object of a response, as the reference shapes it. */
const usageBody = (usage: FakeUsage) => ({
  input_tokens: usage.input_tokens,
  input_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
  output_tokens: usage.output_tokens,
  output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
  total_tokens: usage.input_tokens + usage.output_tokens
})

const words = (text: string): Array<string> => text.match(/\S+\s*|\s+/g) ?? [text]

let responseCounter = 0

/** The events of one scripted reply, in the reference's order; `write` sends one. */
const reply = async (
  step: Extract<ResponsesStep, { kind?: "reply" }>,
  model: string,
  write: (type: string, fields: object) => boolean
): Promise<void> => {
  const n = ++responseCounter
  const base = { id: `resp_${n}`, object: "response", created_at: 0, model, output: [] as Array<object> }
  write("response.created", { response: { ...base, status: "in_progress" } })
  write("response.in_progress", { response: { ...base, status: "in_progress" } })
  const output: Array<object> = []
  if (step.reasoning !== undefined) {
    const index = output.length
    const id = `rs_${n}`
    write("response.output_item.added", { output_index: index, item: { type: "reasoning", id, summary: [] } })
    for (const [part, summary] of step.reasoning.summary.entries()) {
      const at = { item_id: id, output_index: index, summary_index: part }
      write("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } })
      for (const delta of words(summary)) write("response.reasoning_summary_text.delta", { ...at, delta })
      write("response.reasoning_summary_text.done", { ...at, text: summary })
      write("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text: summary } })
    }
    const item = {
      type: "reasoning",
      id,
      summary: step.reasoning.summary.map((text) => ({ type: "summary_text", text })),
      encrypted_content: step.reasoning.encrypted
    }
    write("response.output_item.done", { output_index: index, item })
    output.push(item)
  }
  if (step.text !== undefined) {
    const index = output.length
    const id = `msg_${n}`
    const deltas = typeof step.text === "string" ? words(step.text) : step.text
    const text = deltas.join("")
    write("response.output_item.added", {
      output_index: index,
      item: { type: "message", id, status: "in_progress", role: "assistant", content: [] }
    })
    const at = { item_id: id, output_index: index, content_index: 0 }
    write("response.content_part.added", { ...at, part: { type: "output_text", text: "", annotations: [] } })
    for (const delta of deltas) write("response.output_text.delta", { ...at, delta, logprobs: [] })
    write("response.output_text.done", { ...at, text })
    const part = { type: "output_text", text, annotations: [] }
    write("response.content_part.done", { ...at, part })
    const item = { type: "message", id, status: "completed", role: "assistant", content: [part] }
    write("response.output_item.done", { output_index: index, item })
    output.push(item)
  }
  for (const [i, call] of (step.calls ?? []).entries()) {
    const index = output.length
    const id = `fc_${n}_${i}`
    const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
    const item = { type: "function_call", id, call_id: call.callId ?? `call_${n}_${i}`, name: call.name }
    write("response.output_item.added", {
      output_index: index,
      item: { ...item, arguments: "", status: "in_progress" }
    })
    const half = Math.floor(args.length / 2)
    for (const delta of [args.slice(0, half), args.slice(half)]) {
      write("response.function_call_arguments.delta", { item_id: id, output_index: index, delta })
    }
    write("response.function_call_arguments.done", { item_id: id, output_index: index, arguments: args })
    const done = { ...item, arguments: args, status: "completed" }
    write("response.output_item.done", { output_index: index, item: done })
    output.push(done)
  }
  if (step.holdBeforeEnd !== undefined) await step.holdBeforeEnd
  const usage = usageBody(step.usage ?? { input_tokens: 10, output_tokens: 5 })
  if (step.incomplete !== undefined) {
    write("response.incomplete", {
      response: { ...base, status: "incomplete", incomplete_details: { reason: step.incomplete }, output, usage }
    })
  } else {
    write("response.completed", { response: { ...base, status: "completed", output, usage } })
  }
}

export const startFakeResponsesServer = async (
  options: { readonly steps?: ReadonlyArray<ResponsesStep>; readonly models?: ReadonlyArray<string> } = {}
): Promise<FakeResponsesServer> => {
  const queue: Array<ResponsesStep> = [...(options.steps ?? [])]
  const requests: Array<RecordedResponsesRequest> = []
  const server = await listen(async (req, res) => {
    const request = await readRequest(req)
    requests.push(request)
    const { body, path } = request
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { "content-type": "application/json", ...headers })
      res.end(typeof value === "string" ? value : JSON.stringify(value))
    }
    if (req.method === "GET" && path === "/v1/models") {
      return json(200, {
        object: "list",
        data: (options.models ?? ["fake-model"]).map((id) => ({ id, object: "model", owned_by: "fake" }))
      })
    }
    if (req.method !== "POST" || path !== "/v1/responses") {
      return json(404, { error: { message: `no route ${req.method} ${path}`, type: "invalid_request_error" } })
    }
    const step = queue.shift()
    if (step === undefined) {
      return json(500, { error: { message: "fake server: no step left for this request", type: "server_error" } })
    }
    if (step.kind === "status") return json(step.status, step.body, step.headers)
    if (step.kind === "whole") {
      const part = { type: "output_text", text: step.text, annotations: [] }
      return json(200, {
        id: "resp_whole",
        object: "response",
        created_at: 0,
        model: body?.model ?? "fake-model",
        status: "completed",
        output: [{ type: "message", id: "msg_whole", status: "completed", role: "assistant", content: [part] }],
        usage: usageBody(step.usage ?? { input_tokens: 10, output_tokens: 5 })
      })
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    let sequence = 0
    const write = (type: string, fields: object): boolean =>
      !res.destroyed &&
      res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...fields })}\n\n`)
    const model = typeof body?.model === "string" ? body.model : "fake-model"
    if (step.kind === "stall") {
      write("response.created", { response: { id: "resp_stall", object: "response", model, status: "in_progress" } })
      if (step.text !== undefined) {
        const at = { item_id: "msg_stall", output_index: 0, content_index: 0 }
        write("response.output_item.added", {
          output_index: 0,
          item: { type: "message", id: "msg_stall", content: [] }
        })
        write("response.output_text.delta", { ...at, delta: step.text, logprobs: [] })
      }
      return
    }
    if (step.kind === "failed") {
      const response = { id: "resp_failed", object: "response", model, status: "in_progress" }
      write("response.created", { response })
      write("response.failed", {
        response: { ...response, status: "failed", error: { code: step.code, message: step.message } }
      })
      return res.end()
    }
    if (step.kind === "error-event") {
      write("response.created", { response: { id: "resp_error", object: "response", model, status: "in_progress" } })
      write("error", { code: step.code, message: step.message, param: null })
      return res.end()
    }
    await reply(step, model, write)
    res.end()
  })
  return {
    url: server.url,
    requests,
    posts: () => requests.filter((r) => r.path === "/v1/responses"),
    push: (...steps) => queue.push(...steps),
    aborted: server.aborted,
    close: server.close
  }
}

/** An agent.yaml (its lines) for a fake Responses server at `url`, the key in `keyEnv`, sessions kept. */
export const responsesYaml = (url: string, keyEnv: string): Array<string> => [
  "model:",
  "  api: responses",
  `  url: ${url}`,
  "  name: fake-model",
  `  apiKeyEnv: ${keyEnv}`,
  "watchdogTimeout: 5",
  "permissions: allow",
  "sessions:",
  "  enabled: true"
]
