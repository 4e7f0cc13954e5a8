import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as net from "node:net"

/** One scripted answer of the fake OpenAI-compatible server, used for the next request. */
export type Step =
  | {
    readonly kind?: "reply"
    /** Text sent as deltas, one chunk per array element (a string is split in a few chunks). */
    readonly text?: string | ReadonlyArray<string>
    readonly toolCalls?: ReadonlyArray<
      { readonly name: string; readonly arguments: string | object; readonly id?: string }
    >
    readonly usage?: { readonly prompt_tokens: number; readonly completion_tokens: number }
    /** Pause before each chunk, in milliseconds. */
    readonly chunkDelayMs?: number
    readonly finishReason?: string
    /**
     * A long prompt, as llama-server reads it: `chunks` steps `everyMs` apart before the answer.
     * A request that asked with `return_progress: true` gets a `prompt_progress` chunk at each
     * step (and its headers at once); any other gets nothing, headers included, until the end.
     */
    readonly promptProgress?: { readonly total: number; readonly chunks: number; readonly everyMs: number }
  }
  | {
    readonly kind: "status"
    readonly status: number
    readonly body: unknown
    readonly headers?: Readonly<Record<string, string>>
  }
  /** Send headers and the given text, then say nothing more (the watchdog must fire). */
  | { readonly kind: "stall"; readonly text?: string }
  /** Send the given text, then close the connection without a finish_reason. */
  | { readonly kind: "cut"; readonly text?: string }
  /** Send a data line that is not JSON. */
  | { readonly kind: "malformed" }
  /** Tool call arguments that are not JSON. */
  | { readonly kind: "bad-arguments" }
  /** Destroy the socket before answering anything. */
  | { readonly kind: "reset" }
  /** Read the request and never answer, not even the headers (the watchdog must fire). */
  | { readonly kind: "silent" }
  /**
   * Send exactly these chunks (SSE text written as is), one write each, then end as told:
   * `end` (default) ends the response, `destroy` cuts the socket, `hang` says nothing more.
   * A promise among the chunks holds the ones after it until it settles (the test says when).
   */
  | {
    readonly kind: "raw"
    readonly status?: number
    readonly headers?: Readonly<Record<string, string>>
    readonly chunks: ReadonlyArray<string | Promise<unknown>>
    readonly chunkDelayMs?: number
    readonly end?: "end" | "destroy" | "hang"
  }

/** A fixed answer to one route other than /chat/completions (`GET /props`, `POST /api/show`, `GET /v1/models`…). */
export interface Route {
  readonly status?: number
  /** JSON (an object) or text sent as is. */
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Wait this long before answering. */
  readonly delayMs?: number
}

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

export interface FakeModelServer {
  /** Base URL ending in /v1, as written in `model.url`. */
  readonly url: string
  readonly port: number
  readonly requests: Array<RecordedRequest>
  /** `METHOD /path` of each route of `routes` answered so far, in order. */
  readonly answered: Array<string>
  /** Requests to /chat/completions only. */
  readonly completions: () => Array<RecordedRequest>
  readonly push: (...steps: ReadonlyArray<Step>) => void
  /** When the script runs out: answer this step forever (default: a 500 saying so). */
  readonly setFallback: (step: Step | undefined) => void
  /** How many responses the client closed before the server had finished them (server cuts not counted). */
  readonly aborted: () => number
  /** Resolves true once `aborted()` exceeds `before` (default 0), false after `timeoutMs`. */
  readonly waitForAbort: (options?: { readonly before?: number; readonly timeoutMs?: number }) => Promise<boolean>
  /**
   * Loading a model, as llama-server is: while on, every request (routes, the model list, chat)
   * is answered `503 Loading model`; `headers` go with each such answer.
   */
  readonly setLoading: (on: boolean, headers?: Readonly<Record<string, string>>) => void
  /** `METHOD /path` of each request answered `503 Loading model`, in order. */
  readonly refusedLoading: Array<string>
  readonly close: () => Promise<void>
}

/** A real llama-server's refusal of a request over its window (`-c window`): a step to push. */
export const llamaOverflow = (prompt: number, window: number) => ({
  kind: "status" as const,
  status: 400,
  body: {
    error: {
      code: 400,
      message: `request (${prompt} tokens) exceeds the available context size (${window} tokens), try increasing it`,
      type: "exceed_context_size_error",
      n_prompt_tokens: prompt,
      n_ctx: window
    }
  }
})

/** What llama-server answers to every request while it loads its model. */
export const LOADING_BODY = { error: { code: 503, message: "Loading model", type: "unavailable_error" } }

const splitText = (text: string): Array<string> => {
  if (text.length <= 4) return [text]
  const parts: Array<string> = []
  const size = Math.max(1, Math.ceil(text.length / 3))
  for (let i = 0; i < text.length; i += size) parts.push(text.slice(i, i + size))
  return parts
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

let callCounter = 0

export const startFakeModelServer = async (
  options: {
    readonly steps?: ReadonlyArray<Step>
    readonly ollama?: boolean
    readonly models?: ReadonlyArray<string>
    /**
     * Answers to other routes, by `METHOD /path` (checked first, so `GET /v1/models` may be
     * replaced too). A list is answered in order, its last answer repeated (a server loading, then up).
     */
    readonly routes?: Readonly<Record<string, Route | ReadonlyArray<Route>>>
    /** Where to listen (default: a free port); the tutorial's transcripts are taken on Ollama's 11434. */
    readonly port?: number
    /** Start loading a model (see `setLoading`). */
    readonly loading?: boolean
  } = {}
): Promise<FakeModelServer> => {
  const queue: Array<Step> = [...(options.steps ?? [])]
  const requests: Array<RecordedRequest> = []
  const answered: Array<string> = []
  const sockets = new Set<import("node:net").Socket>()
  let fallback: Step | undefined
  let aborted = 0
  let closing = false
  let loading: Readonly<Record<string, string>> | undefined = options.loading === true ? {} : undefined
  const refusedLoading: Array<string> = []
  const cutByServer = new WeakSet<http.ServerResponse>()

  const server = http.createServer(async (req, res) => {
    res.on("close", () => {
      if (!res.writableEnded && !cutByServer.has(res) && !closing) aborted++
    })
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const raw = Buffer.concat(chunks).toString("utf8")
    let body: any = undefined
    try {
      body = raw === "" ? undefined : JSON.parse(raw)
    } catch {
      body = raw
    }
    const path = (req.url ?? "/").split("?")[0]
    requests.push({ method: req.method ?? "GET", path, headers: req.headers, body })
    if (options.ollama === true) res.setHeader("Server", "ollama")

    const key = `${req.method} ${path}`
    if (loading !== undefined) {
      res.writeHead(503, { "content-type": "application/json", ...loading })
      res.end(JSON.stringify(LOADING_BODY))
      refusedLoading.push(key)
      return
    }
    const listed = options.routes?.[key]
    const seen = answered.filter((done) => done === key).length
    const route: Route | undefined = Array.isArray(listed)
      ? (listed as ReadonlyArray<Route>)[Math.min(seen, listed.length - 1)]
      : (listed as Route | undefined)
    if (route !== undefined) {
      if (route.delayMs !== undefined) await sleep(route.delayMs)
      if (res.destroyed) return
      res.writeHead(route.status ?? 200, { "content-type": "application/json", ...route.headers })
      res.end(typeof route.body === "string" ? route.body : JSON.stringify(route.body))
      answered.push(`${req.method} ${path}`)
      return
    }
    if (req.method === "GET" && (path === "/v1/models" || path === "/models")) {
      res.writeHead(200, { "content-type": "application/json" })
      const owner = options.ollama === true ? { owned_by: "library" } : {}
      res.end(
        JSON.stringify({
          object: "list",
          data: (options.models ?? ["fake-model"]).map((id) => ({ id, object: "model", ...owner }))
        })
      )
      return
    }
    if (req.method === "GET" && path === "/") {
      res.writeHead(200, { "content-type": "text/plain" })
      res.end(options.ollama === true ? "Ollama is running" : "ok")
      return
    }
    if (req.method !== "POST" || !(path === "/v1/chat/completions" || path === "/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }))
      return
    }

    const step = queue.shift() ?? fallback
    if (step === undefined) {
      res.writeHead(500, { "content-type": "application/json" })
      res.end(JSON.stringify({ error: { message: "fake server: the script has no step left for this request" } }))
      return
    }
    if (step.kind === "status") {
      res.writeHead(step.status, { "content-type": "application/json", ...step.headers })
      res.end(typeof step.body === "string" ? step.body : JSON.stringify(step.body))
      return
    }
    if (step.kind === "reset") {
      cutByServer.add(res)
      req.socket.destroy()
      return
    }
    if (step.kind === "silent") return // never answers; closed by the client or by close()
    if (step.kind === "raw") {
      res.writeHead(step.status ?? 200, { "content-type": "text/event-stream", ...step.headers })
      for (const chunk of step.chunks) {
        if (typeof chunk !== "string") {
          await chunk
          continue
        }
        if (step.chunkDelayMs !== undefined) await sleep(step.chunkDelayMs)
        if (res.destroyed || res.writableEnded) return
        res.write(chunk)
      }
      if (step.end === "destroy") {
        cutByServer.add(res)
        setTimeout(() => req.socket.destroy(), 20)
      } else if (step.end !== "hang") res.end()
      return
    }

    const reading = step.kind === undefined || step.kind === "reply" ? step.promptProgress : undefined
    const progressAsked = reading !== undefined && body?.return_progress === true
    if (reading !== undefined && !progressAsked) await sleep(reading.chunks * reading.everyMs)
    if (res.destroyed) return
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
    const id = `chatcmpl-${++callCounter}`
    const send = (delta: object, finish: string | null = null, extra: object = {}) =>
      res.write(
        `data: ${
          JSON.stringify({
            id,
            object: "chat.completion.chunk",
            created: 0,
            model: body?.model ?? "fake",
            choices: [{ index: 0, delta, finish_reason: finish }],
            ...extra
          })
        }\n\n`
      )
    const alive = () => !res.destroyed && !res.writableEnded

    if (step.kind === "stall") {
      send({ role: "assistant", content: "" })
      if (step.text !== undefined) send({ content: step.text })
      return // never ends; closed by the client or by close()
    }
    if (step.kind === "cut") {
      send({ role: "assistant", content: "" })
      if (step.text !== undefined) send({ content: step.text })
      cutByServer.add(res)
      setTimeout(() => req.socket.destroy(), 20)
      return
    }
    if (step.kind === "malformed") {
      send({ role: "assistant", content: "" })
      res.write("data: {this is not json\n\n")
      res.end()
      return
    }
    if (step.kind === "bad-arguments") {
      send({ role: "assistant", content: null })
      send({
        tool_calls: [{
          index: 0,
          id: "call_bad",
          type: "function",
          function: { name: "bash", arguments: "{\"command\": " }
        }]
      })
      send({}, "tool_calls")
      res.write("data: [DONE]\n\n")
      res.end()
      return
    }

    if (reading !== undefined && progressAsked) {
      // llama-server's shape: an empty assistant delta with the progress beside the choices
      for (let done = 1; done <= reading.chunks; done++) {
        const processed = Math.round((reading.total * done) / reading.chunks)
        send({ role: "assistant", content: null }, null, {
          prompt_progress: { total: reading.total, cache: 0, processed, time_ms: done * reading.everyMs }
        })
        await sleep(reading.everyMs)
        if (!alive()) return
      }
    }
    const texts = step.text === undefined ? [] : typeof step.text === "string" ? splitText(step.text) : step.text
    send({ role: "assistant", content: "" })
    for (const text of texts) {
      if (step.chunkDelayMs !== undefined) await sleep(step.chunkDelayMs)
      if (!alive()) return
      send({ content: text })
    }
    const calls = step.toolCalls ?? []
    for (const [index, call] of calls.entries()) {
      if (step.chunkDelayMs !== undefined) await sleep(step.chunkDelayMs)
      if (!alive()) return
      const args = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
      const half = Math.floor(args.length / 2)
      send({
        tool_calls: [
          {
            index,
            id: call.id ?? `call_${callCounter}_${index}`,
            type: "function",
            function: { name: call.name, arguments: args.slice(0, half) }
          }
        ]
      })
      send({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] })
    }
    if (!alive()) return
    send({}, step.finishReason ?? (calls.length > 0 ? "tool_calls" : "stop"))
    if (step.usage !== undefined) {
      res.write(
        `data: ${
          JSON.stringify({
            id,
            object: "chat.completion.chunk",
            choices: [],
            usage: { ...step.usage, total_tokens: step.usage.prompt_tokens + step.usage.completion_tokens }
          })
        }\n\n`
      )
    }
    res.write("data: [DONE]\n\n")
    res.end()
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    answered,
    completions: () => requests.filter((r) => r.path.endsWith("/chat/completions")),
    push: (...steps) => queue.push(...steps),
    setFallback: (step) => {
      fallback = step
    },
    aborted: () => aborted,
    waitForAbort: async ({ before = 0, timeoutMs = 2000 } = {}) => {
      const deadline = Date.now() + timeoutMs
      while (aborted <= before) {
        if (Date.now() > deadline) return false
        await sleep(10)
      }
      return true
    },
    setLoading: (on, headers = {}) => {
      loading = on ? headers : undefined
    },
    refusedLoading,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}

/** A port on 127.0.0.1 that nothing listens on any more: a model server that is not running. */
export const closedPort = async (): Promise<number> => {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  await new Promise((resolve) => server.close(resolve))
  return port
}

/** The tool results the model was sent in the last request, by call id. */
export const lastToolResults = (server: FakeModelServer): Record<string, string> =>
  Object.fromEntries(
    server.completions().at(-1)!.body.messages
      .filter((m: { role: string }) => m.role === "tool")
      .map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content])
  )
