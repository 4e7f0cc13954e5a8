import * as Sse from "@effect/experimental/Sse"
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Context from "effect/Context"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

import { AppConfig, DEFAULT_CONTEXT_WINDOW } from "../config/Config"
import { GenerationError, type GenerationReason, rawText } from "../domain/Errors"
import type { ToolCall } from "../domain/Session"
import { makeStreamRedactor, redact, registerSecretVariable, resolveSecretRefs } from "../lib/Secrets"
import { type ChatRequest, ModelClient, type ModelEvent, type Usage } from "./ModelClient"
import { ThinkSplitter } from "./Reasoning"
import {
  checkOf,
  CONTEXT_PROBE_TIMEOUT_MS,
  contextWarning,
  kindOf,
  type ModelList,
  parseModelList,
  portOf,
  probeContext,
  probeOllamaLoaded,
  type ServedContext,
  type ServerCheck
} from "./ServerProbe"

/** How long `probe` waits for any HTTP answer. */
export const PROBE_TIMEOUT_MS = 1200

const SERVER_MESSAGE_MAX = 200
const CHUNK_SHOWN_MAX = 80

/** How much of an HTTP error body is read; the rest is never received. */
export const ERROR_BODY_READ_MAX = 64 * 1024
/** How much of any raw detail a failure keeps (it goes into the session's `errors[].raw`). */
export const RAW_KEPT_MAX = 4096

/** `text` within `max` UTF-8 bytes, its end replaced by a marker when cut. */
export const clipRaw = (text: string, max: number = RAW_KEPT_MAX): string => {
  if (text.length <= max / 4 || Buffer.byteLength(text) <= max) return text
  const marker = (cut: number) => ` … [${cut} bytes cut]`
  const total = Buffer.byteLength(text)
  let kept = Buffer.from(text.slice(0, max)).subarray(0, max - Buffer.byteLength(marker(total))).toString("utf8")
  // a character cut in two is dropped whole
  if (kept.endsWith("\ufffd")) kept = kept.slice(0, -1)
  return kept + marker(total - Buffer.byteLength(kept))
}

/** Every failure of a model call; a server that echoes the key shows `[redacted]` instead. */
const fail = (reason: GenerationReason, message: string, raw: string): GenerationError =>
  new GenerationError({ reason, message: redact(message.replace(/[\r\n]+/g, " ")), raw: clipRaw(redact(raw)) })

export const tooLargeError = (maxBytes: number): GenerationError =>
  fail(
    "too-large",
    `the answer passed model.maxAnswerBytes (${maxBytes} bytes) — the turn was given up`,
    `more than ${maxBytes} bytes of answer text streamed in one model call`
  )

/** `text` on one line, whitespace collapsed, cut to `max` characters. */
export const oneLine = (text: string, max: number = SERVER_MESSAGE_MAX): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const seconds = (s: number): string => (Number.isInteger(s) ? String(s) : String(Math.round(s * 1000) / 1000))

export const watchdogError = (timeoutSeconds: number): GenerationError =>
  fail(
    "watchdog",
    `no token from the model for ${seconds(timeoutSeconds)} s (watchdogTimeout) — the turn was given up`,
    `watchdog: no byte received for ${timeoutSeconds} s`
  )

const streamCut = (raw: string): GenerationError =>
  fail("stream-cut", "the model server closed the stream before the answer was complete", raw)

// ---------------------------------------------------------------------------------------
// Classifying failures

const errorCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; isRecord(current) && depth < 5; depth++) {
    const record = current
    if (typeof record.code === "string") return record.code
    const nested = Array.isArray(record.errors) ? record.errors[0] : undefined
    if (nested !== undefined && isRecord(nested) && typeof nested.code === "string") return nested.code
    current = record.cause
  }
  return undefined
}

const connectionTrouble: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset before any answer",
  UND_ERR_SOCKET: "connection reset before any answer",
  EPIPE: "connection reset before any answer",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  ECONNABORTED: "connection aborted",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed TLS certificate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate not trusted",
  ERR_SSL_WRONG_VERSION_NUMBER: "TLS spoken to a plain HTTP server",
  EPROTO: "TLS handshake failed"
}

const startHint = (url: string): string => {
  switch (portOf(url)) {
    case "11434":
      return " (e.g. `ollama serve`)"
    case "8080":
      return " (e.g. `llama-server -m MODEL.gguf --jinja`)"
    case "8000":
      return " (e.g. `vllm serve MODEL`)"
    case "1234":
      return " (e.g. `lms server start`)"
    default:
      return ""
  }
}

/** A failure before any byte of the answer: the server is not there, or not answering. */
export const transportError = (baseUrl: string, error: HttpClientError.RequestError): GenerationError => {
  const raw = `${error.request.method} ${error.request.url}: ${rawText(error.cause ?? error)}`
  if (error.reason === "InvalidUrl") {
    return fail("unreachable", `model.url is not a valid URL: ${JSON.stringify(baseUrl)}`, raw)
  }
  const code = errorCode(error.cause)
  const why = code === undefined ? oneLine(rawText(error.cause ?? error), 80) : connectionTrouble[code] ?? code
  return fail(
    "unreachable",
    `cannot reach the model server at ${baseUrl} (${why}) — is it running?${startHint(baseUrl)}`,
    raw
  )
}

/** The human part of an error body: `{error: {message}}`, `{error}`, `{message}`, `{detail}` or the text itself. */
export const serverMessage = (body: string): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    // a body cut short (see ERROR_BODY_READ_MAX) may still name its message near the start
    const message = /^\s*\{\s*"error"\s*:\s*\{\s*"message"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(body)
    if (message !== null) {
      try {
        return oneLine(JSON.parse(message[1]) as string)
      } catch {
        // not a JSON string after all
      }
    }
    return oneLine(body.replace(/<[^>]*>/g, " "))
  }
  if (isRecord(parsed)) {
    const error = parsed.error
    if (isRecord(error) && typeof error.message === "string") return oneLine(error.message)
    if (typeof error === "string") return oneLine(error)
    if (typeof parsed.message === "string") return oneLine(parsed.message)
    if (typeof parsed.detail === "string") return oneLine(parsed.detail)
  }
  return oneLine(body)
}

const MODEL_MISSING =
  /\bmodel\b.*\b(not found|does not exist|doesn't exist|not exist|is not available|not available|unknown|no such)\b|model_not_found|try pulling it/i

export const looksLikeOllama = (baseUrl: string, serverHeader: string | undefined, body: string): boolean =>
  portOf(baseUrl) === "11434" ||
  (serverHeader !== undefined && /ollama/i.test(serverHeader)) ||
  /try pulling it|ollama/i.test(body)

export interface HttpAnswer {
  readonly status: number
  readonly body: string
  readonly serverHeader: string | undefined
}

/** An HTTP 4xx/5xx turned into one line, telling a missing model from other refusals. */
export const httpError = (
  context: { readonly baseUrl: string; readonly model: string; readonly apiKeyEnv: string | undefined },
  answer: HttpAnswer
): GenerationError => {
  const { baseUrl, model } = context
  const said = serverMessage(answer.body)
  const raw = `HTTP ${answer.status} from ${baseUrl}/chat/completions: ${answer.body}`
  const modelMissing = MODEL_MISSING.test(said) || MODEL_MISSING.test(answer.body)
  if (answer.status === 404 || modelMissing) {
    const ollama = looksLikeOllama(baseUrl, answer.serverHeader, answer.body)
    const head = `model "${model}" is not available on ${baseUrl}`
    if (modelMissing) {
      return fail(
        "model-not-found",
        ollama ? `${head} — run \`ollama pull ${model}\`` : `${head} (${said}) — check model.name`,
        raw
      )
    }
    const detail = said === "" ? "HTTP 404" : `HTTP 404: ${said}`
    return fail(
      "model-not-found",
      `${head} (${detail}) — check model.name, and that model.url is the API base (often ending in /v1)`,
      raw
    )
  }
  const hint = answer.status === 401 || answer.status === 403
    ? context.apiKeyEnv === undefined
      ? " — does this server need a key? set model.apiKeyEnv to the variable holding it"
      : ` — check the key in $${context.apiKeyEnv}`
    : ""
  return fail("http", `model server answered HTTP ${answer.status}${said === "" ? "" : `: ${said}`}${hint}`, raw)
}

// ---------------------------------------------------------------------------------------
// Assembling the streamed answer

interface PendingCall {
  id: string | undefined
  name: string
  arguments: string
}

/** The answer so far: the text, the tool calls by index, how it finished. */
export class Completion {
  content = ""
  /** The reasoning so far; `takeReasoning` hands out what arrived since it was last called. */
  reasoning = ""
  private reasoningSent = 0
  private readonly think = new ThinkSplitter()
  finishReason: string | undefined = undefined
  usage: Usage | undefined = undefined
  done = false
  /** UTF-8 bytes of text and tool-call arguments received so far (held against model.maxAnswerBytes). */
  bytes = 0
  private readonly calls = new Map<number, PendingCall>()
  /** A server's index reused for another call, and the slot that call really has. */
  private readonly aliases = new Map<number, number>()
  private lastIndex = -1
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
    let chunk: unknown
    try {
      chunk = JSON.parse(data)
    } catch (cause) {
      return fail(
        "malformed",
        `the model server sent a chunk that is not JSON: ${oneLine(data, CHUNK_SHOWN_MAX)}`,
        `${rawText(cause)} in data: ${data}`
      )
    }
    if (!isRecord(chunk)) {
      return fail(
        "malformed",
        `the model server sent a chunk that is not an object: ${oneLine(data, CHUNK_SHOWN_MAX)}`,
        data
      )
    }
    if ((chunk.error !== undefined && chunk.error !== null) || eventName === "error") {
      const said = serverMessage(data)
      return fail("http", `the model server reported an error mid-answer: ${said === "" ? "(no message)" : said}`, data)
    }
    const usage = chunk.usage
    if (isRecord(usage) && typeof usage.prompt_tokens === "number") {
      this.usage = {
        promptTokens: usage.prompt_tokens,
        completionTokens: typeof usage.completion_tokens === "number" ? usage.completion_tokens : 0
      }
    }
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
        this.bytes += Buffer.byteLength(thought)
      }
      if (typeof delta.content === "string" && delta.content !== "") {
        this.bytes += Buffer.byteLength(delta.content)
        const split = this.think.push(delta.content)
        this.reasoning += split.reasoning
        this.content += split.text
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
      const call = this.slotFor(whole ? position : delta.index, id, named)
      if (call.id === undefined) call.id = id
      if (!isRecord(fn)) continue
      if (call.name === "" && typeof fn.name === "string") call.name = fn.name
      const added = typeof fn.arguments === "string"
        ? fn.arguments
        : isRecord(fn.arguments)
        ? JSON.stringify(fn.arguments)
        : ""
      call.arguments += added
      this.bytes += Buffer.byteLength(added)
    }
  }

  /**
   * By `index` when the server gives one; otherwise by id, otherwise the call being written.
   * A new id with a name (or a name without index or id) where a named call already stands
   * starts another call: some servers send every whole call at index 0.
   */
  private slotFor(index: unknown, id: string | undefined, named: boolean): PendingCall {
    let key: number
    if (typeof index === "number") {
      key = this.aliases.get(index) ?? index
      const there = this.calls.get(key)
      if (
        named && there !== undefined && id !== undefined && there.id !== undefined && there.id !== id &&
        there.name !== ""
      ) {
        const known = [...this.calls.entries()].find(([, call]) => call.id === id)
        key = known !== undefined ? known[0] : Math.max(this.lastIndex, ...this.calls.keys()) + 1
        this.aliases.set(index, key)
      }
    } else if (id !== undefined) {
      const known = [...this.calls.entries()].find(([, call]) => call.id === id)
      key = known !== undefined ? known[0] : this.lastIndex + 1
    } else {
      key = Math.max(this.lastIndex, 0)
      if (named && this.calls.get(key)?.name) key = this.lastIndex + 1
    }
    let call = this.calls.get(key)
    if (call === undefined) {
      call = { id: undefined, name: "", arguments: "" }
      this.calls.set(key, call)
    }
    if (key > this.lastIndex) this.lastIndex = key
    return call
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
    this.content += split.text
    return split.text
  }

  get finished(): boolean {
    return this.done || this.finishReason !== undefined
  }

  /** The closing event, once every tool call has a name and JSON arguments. */
  complete(): ModelEvent | GenerationError {
    const toolCalls: Array<ToolCall> = []
    for (const [index, call] of [...this.calls.entries()].sort(([a], [b]) => a - b)) {
      if (call.name === "") {
        return fail("malformed", `the model sent tool call #${index} without a name`, JSON.stringify(call))
      }
      const args = call.arguments.trim() === "" ? "{}" : call.arguments
      try {
        JSON.parse(args)
      } catch (cause) {
        return fail(
          "malformed",
          `the model gave tool "${oneLine(call.name, 40)}" arguments that are not JSON: ${
            oneLine(args, CHUNK_SHOWN_MAX)
          }`,
          `${rawText(cause)} in arguments of ${call.name}: ${args}`
        )
      }
      toolCalls.push({
        id: call.id ?? `call_${this.idBase}_${index}`,
        type: "function",
        function: { name: call.name, arguments: args }
      })
    }
    return {
      _tag: "Completed",
      content: redact(this.content),
      reasoning: redact(this.reasoning),
      toolCalls,
      finishReason: this.finishReason ?? (toolCalls.length > 0 ? "tool_calls" : "stop"),
      usage: this.usage
    }
  }
}

// ---------------------------------------------------------------------------------------
// The client

/** The ids of a `/models` answer: OpenAI's `{data: [{id}]}`, or Ollama's `{models: [{name}]}`. */
export const modelIds = (body: unknown): ReadonlyArray<string> => {
  if (!isRecord(body)) return []
  const list = Array.isArray(body.data) ? body.data : Array.isArray(body.models) ? body.models : []
  const ids = list.flatMap((entry: unknown) =>
    isRecord(entry) && typeof entry.id === "string"
      ? [entry.id]
      : isRecord(entry) && typeof entry.name === "string"
      ? [entry.name]
      : []
  )
  return [...new Set(ids)]
}

const headerOf = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return typeof value === "string" ? value : undefined
}

/** How mm waits before asking a busy server again (tests shorten it). */
export class RetryTiming extends Context.Reference<RetryTiming>()("mm/RetryTiming", {
  defaultValue: () => ({ baseMs: 1000, maxRetries: 3, capMs: 60_000 })
}) {}

/** Statuses that mean "busy, ask again later". */
const RETRIED_STATUSES = new Set([429, 502, 503, 504])
const RESET_CODES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"])

/** A failure worth another try: the server was busy, or dropped the connection before answering. */
class Busy {
  readonly _tag = "Busy"
  constructor(
    readonly error: GenerationError,
    readonly label: string,
    readonly retryAfterMs: number | undefined
  ) {}
}

/** `Retry-After` in milliseconds: seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterMs = (value: string | undefined, now: number = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The wait before attempt `n + 1`: `Retry-After` when the server said it, else exponential with jitter; capped. */
export const retryDelayMs = (
  attempt: number,
  retryAfter: number | undefined,
  timing: { readonly baseMs: number; readonly capMs: number },
  random: number = Math.random()
): number =>
  Math.min(timing.capMs, Math.round(retryAfter ?? timing.baseMs * 2 ** (attempt - 1) * (0.75 + random * 0.5)))

const waitWords = (
  ms: number
): string => (ms >= 1000 || ms === 0 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`)

const MODELS_SHOWN = 8

/** `a, b, c` (the first few of a long list). */
export const modelNames = (models: ReadonlyArray<string>): string =>
  models.length <= MODELS_SHOWN
    ? models.join(", ")
    : `${models.slice(0, MODELS_SHOWN).join(", ")}, … (${models.length} in all)`

/** The context window in force: the configured one, unless the server serves fewer tokens. */
export const effectiveWindow = (configured: number | undefined, served: number | undefined): number =>
  configured === undefined
    ? served ?? DEFAULT_CONTEXT_WINDOW
    : served === undefined
    ? configured
    : Math.min(configured, served)

export const make = Effect.gen(function*() {
  const { config } = yield* AppConfig
  // the client's own span costs about a millisecond of first-token latency; `ModelClient.stream` has one
  const client = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const baseUrl = config.model.url.replace(/\/+$/, "")
  const model = config.model.name
  const apiKeyEnv = config.model.apiKeyEnv
  const maxAnswerBytes = config.model.maxAnswerBytes
  if (apiKeyEnv !== undefined) registerSecretVariable(apiKeyEnv)
  const watchdogSeconds = config.watchdogTimeout
  const watchdogMs = Math.max(1, Math.round(watchdogSeconds * 1000))
  const context = { baseUrl, model, apiKeyEnv }
  const completionsUrl = `${baseUrl}/chat/completions`
  /** Dropped for good if the server refuses it (a few strict servers reject unknown fields). */
  let askForUsage = true
  const timing = yield* RetryTiming
  const { temperature, maxTokens, extraBody } = config.model
  // `${NAME}` in a header value is read from the environment once, and kept secret
  const extraHeaders: Record<string, string> = {}
  const missingHeaderVariables: Array<string> = []
  for (const [name, value] of Object.entries(config.model.headers ?? {})) {
    const resolved = resolveSecretRefs(value)
    extraHeaders[name.toLowerCase()] = resolved.value
    missingHeaderVariables.push(...resolved.missing.map((variable) => `${variable} (model.headers.${name})`))
  }

  const authorization = (): string | undefined | GenerationError => {
    if (missingHeaderVariables.length > 0) {
      return fail(
        "http",
        `agent.yaml names the environment variable ${
          missingHeaderVariables[0]
        }, but it is not set — export it before starting mm`,
        `unset environment variables: ${missingHeaderVariables.join(", ")}`
      )
    }
    if (apiKeyEnv === undefined) return undefined
    const key = process.env[apiKeyEnv]?.trim()
    if (key === undefined || key === "") {
      return fail(
        "http",
        `model.apiKeyEnv names ${apiKeyEnv}, but that environment variable is not set — export it before starting mm`,
        `environment variable ${apiKeyEnv} is unset or empty`
      )
    }
    return `Bearer ${key}`
  }

  const requestBody = (request: ChatRequest, withUsage: boolean): string =>
    JSON.stringify({
      ...extraBody,
      model: request.model ?? model,
      messages: request.messages,
      stream: true,
      ...(withUsage ? { stream_options: { include_usage: true } } : {}),
      ...(temperature !== undefined ? { temperature } : {}),
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
      ...(request.tools.length > 0
        ? {
          tools: request.tools.map((tool) => ({
            type: "function",
            function: { name: tool.name, description: tool.description, parameters: tool.parameters }
          }))
        }
        : {})
    })

  /**
   * At most `max` bytes of a body, as text; the rest is never read (the connection is
   * dropped). `whole` says whether that was the entire body.
   */
  const readBody = (
    response: HttpClientResponse.HttpClientResponse,
    max: number
  ): Effect.Effect<{ readonly text: string; readonly whole: boolean }> =>
    response.stream.pipe(
      Stream.runFoldWhile(
        { chunks: [] as Array<Uint8Array>, size: 0 },
        (acc) => acc.size <= max,
        (acc, chunk) => {
          acc.chunks.push(chunk)
          acc.size += chunk.byteLength
          return acc
        }
      ),
      Effect.map(({ chunks, size }) => ({
        text: Buffer.concat(chunks).subarray(0, max).toString("utf8"),
        whole: size <= max
      })),
      Effect.timeout(watchdogMs),
      Effect.orElseSucceed(() => ({ text: "", whole: true }))
    )

  /** An error body, read up to ERROR_BODY_READ_MAX bytes. */
  const errorBody = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
    Effect.map(
      readBody(response, ERROR_BODY_READ_MAX),
      ({ text, whole }) => whole ? text : `${text} … [body cut after ${ERROR_BODY_READ_MAX} bytes]`
    )

  /** Sends the request and waits for the headers; the watchdog counts this wait too. */
  const open = (
    request: ChatRequest,
    auth: string | undefined
  ): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
    Effect.gen(function*() {
      const withUsage = askForUsage
      let httpRequest = HttpClientRequest.post(completionsUrl).pipe(
        HttpClientRequest.setHeaders(extraHeaders),
        HttpClientRequest.setHeader("accept", "text/event-stream"),
        HttpClientRequest.bodyText(requestBody(request, withUsage), "application/json")
      )
      if (auth !== undefined) httpRequest = HttpClientRequest.setHeader(httpRequest, "authorization", auth)
      const response = yield* client.execute(httpRequest).pipe(
        Effect.timeoutFail({ duration: watchdogMs, onTimeout: () => watchdogError(watchdogSeconds) }),
        Effect.catchIf(
          (error): error is HttpClientError.RequestError => error._tag === "RequestError",
          (error) => {
            const failure = transportError(baseUrl, error)
            const code = errorCode(error.cause)
            return Effect.fail(
              code !== undefined && RESET_CODES.has(code)
                ? new Busy(failure, "connection reset by the server", undefined)
                : failure
            )
          }
        ),
        Effect.catchIf(
          (error): error is HttpClientError.ResponseError => error._tag === "ResponseError",
          (error) => Effect.fail(streamCut(rawText(error)))
        )
      )
      if (response.status < 300) return response
      const body = yield* errorBody(response)
      if (withUsage && (response.status === 400 || response.status === 422) && /stream_options/.test(body)) {
        askForUsage = false
        return yield* open(request, auth)
      }
      const error = httpError(context, { status: response.status, body, serverHeader: headerOf(response, "server") })
      if (RETRIED_STATUSES.has(response.status)) {
        return yield* Effect.fail(
          new Busy(error, `server busy (${response.status})`, retryAfterMs(headerOf(response, "retry-after")))
        )
      }
      return yield* Effect.fail(error)
    })

  /**
   * `open`, asked again while the server is busy: up to `maxRetries` more times, each wait
   * announced by a `Retrying` event. Only ever before the first byte of an answer.
   */
  const opened = (
    request: ChatRequest,
    auth: string | undefined,
    attempt: number,
    earlier: ReadonlyArray<string>
  ): Stream.Stream<ModelEvent, GenerationError> =>
    Stream.unwrap(
      open(request, auth).pipe(
        Effect.map((response) =>
          (headerOf(response, "content-type") ?? "").includes("application/json")
            ? wholeAnswer(response)
            : events(response)
        ),
        Effect.catchAll((failure) => {
          const error = failure instanceof Busy ? failure.error : failure
          if (!(failure instanceof Busy) || attempt > timing.maxRetries) {
            return Effect.flip(finalError(error, attempt, earlier))
          }
          const waitMs = retryDelayMs(attempt, failure.retryAfterMs, timing)
          const notice: ModelEvent = { _tag: "Retrying", text: `${failure.label} — retrying in ${waitWords(waitMs)}` }
          return Effect.succeed(
            Stream.make(notice).pipe(
              Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep(waitMs)))),
              Stream.concat(opened(request, auth, attempt + 1, [...earlier, `attempt ${attempt}: ${error.raw}`]))
            )
          )
        })
      )
    )

  /** The failure as the user reads it: a missing model named with the ones there are, every attempt in `raw`. */
  const finalError = (
    error: GenerationError,
    attempt: number,
    earlier: ReadonlyArray<string>
  ): Effect.Effect<GenerationError> =>
    Effect.map(explainMissingModel(error), (explained) =>
      earlier.length === 0
        ? explained
        : new GenerationError({
          reason: explained.reason,
          message: explained.message,
          raw: [...earlier, `attempt ${attempt}: ${error.raw}`].join("\n")
        }))

  /** A server that ignored `stream: true` and sent the whole completion as one JSON body. */
  const wholeAnswer = (response: HttpClientResponse.HttpClientResponse): Stream.Stream<ModelEvent, GenerationError> =>
    Stream.unwrap(
      Effect.map(readBody(response, maxAnswerBytes), ({ text: body, whole }) => {
        if (!whole) return Stream.fail(tooLargeError(maxAnswerBytes))
        const completion = new Completion()
        const text = completion.absorb(body, "message")
        if (text instanceof GenerationError) return Stream.fail(text)
        if (!completion.finished && completion.content === "") {
          return Stream.fail(streamCut(`a JSON body without an answer: ${body}`))
        }
        const rest = completion.endContent()
        const done = completion.complete()
        if (done instanceof GenerationError) return Stream.fail(done)
        const thought = redact(completion.takeReasoning())
        const said = redact((text ?? "") + rest)
        const events: Array<ModelEvent> = [
          ...(thought === "" ? [] : [{ _tag: "ReasoningDelta", text: thought } as const]),
          ...(said === "" ? [] : [{ _tag: "TextDelta", text: said } as const]),
          done
        ]
        return Stream.concat(Stream.fromIterable(events), Stream.drain(Stream.fromEffect(afterAnswer)))
      })
    )

  const events = (response: HttpClientResponse.HttpClientResponse): Stream.Stream<ModelEvent, GenerationError> =>
    Stream.suspend(() => {
      const completion = new Completion()
      const redactor = makeStreamRedactor()
      const thoughtRedactor = makeStreamRedactor()
      const absorbAll = (chunk: Chunk.Chunk<Sse.Event>): Effect.Effect<Chunk.Chunk<ModelEvent>, GenerationError> => {
        const out: Array<ModelEvent> = []
        for (const event of chunk) {
          // an event whose data is empty carries nothing, as the SSE format says
          if (event.data.trim() === "") continue
          const text = completion.absorb(event.data, event.event)
          if (text instanceof GenerationError) return Effect.fail(text)
          const thought = thoughtRedactor.push(completion.takeReasoning())
          if (thought !== "") out.push({ _tag: "ReasoningDelta", text: thought })
          const shown = text === undefined ? "" : redactor.push(text)
          if (shown !== "") out.push({ _tag: "TextDelta", text: shown })
        }
        if (completion.bytes > maxAnswerBytes) return Effect.fail(tooLargeError(maxAnswerBytes))
        return Effect.succeed(Chunk.unsafeFromArray(out))
      }
      const closing = Stream.suspend(() => {
        if (!completion.finished) return Stream.fail(streamCut("the stream ended without finish_reason or [DONE]"))
        const heldText = completion.endContent()
        const done = completion.complete()
        if (done instanceof GenerationError) return Stream.fail(done)
        const thought = thoughtRedactor.push(completion.takeReasoning()) + thoughtRedactor.flush()
        const rest = redactor.push(heldText) + redactor.flush()
        const held: Array<ModelEvent> = [
          ...(thought === "" ? [] : [{ _tag: "ReasoningDelta", text: thought } as const]),
          ...(rest === "" ? [] : [{ _tag: "TextDelta", text: rest } as const])
        ]
        return Stream.concat(Stream.fromIterable([...held, done]), Stream.drain(Stream.fromEffect(afterAnswer)))
      })
      return response.stream.pipe(
        Stream.timeoutFail(() => watchdogError(watchdogSeconds), watchdogMs),
        Stream.decodeText(),
        Stream.mapChunks(oneLinePerPiece),
        Stream.pipeThroughChannel(Sse.makeChannel()),
        Stream.takeUntil((event) => event.data.length <= 8 && event.data.trim() === "[DONE]"),
        Stream.mapChunksEffect(absorbAll),
        Stream.catchAll((error) =>
          error._tag === "GenerationError"
            ? Stream.fail(error)
            : completion.finished
            ? Stream.empty // the answer was whole; only the goodbye was lost
            : Stream.fail(streamCut(rawText(error)))
        ),
        Stream.catchSomeCause((cause) =>
          Option.map(
            Cause.dieOption(cause).pipe(Option.filter((defect) => defect instanceof Sse.SseError)),
            (defect) =>
              Stream.fail(fail("malformed", "the model server sent an event too large to read", rawText(defect)))
          )
        ),
        Stream.concat(closing)
      )
    })

  const stream = (request: ChatRequest): Stream.Stream<ModelEvent, GenerationError> =>
    Stream.unwrap(
      Effect.suspend(() => {
        const auth = authorization()
        if (auth instanceof GenerationError) return Effect.fail(auth)
        return Effect.succeed(opened(request, auth, 1, []))
      }).pipe(Effect.withSpan("ModelClient.stream", { attributes: { model, url: baseUrl }, captureStackTrace: false }))
    )

  // What the server says about itself, asked once from start-up in the background: its
  // model list (for the banner), then the context window it really serves.
  const probeHeaders = (): Record<string, string> => {
    const auth = authorization()
    return typeof auth === "string" ? { ...extraHeaders, authorization: auth } : extraHeaders
  }
  const listing = yield* Deferred.make<{ readonly answered: boolean; readonly list: ModelList | undefined }>()
  let checked: ServerCheck | undefined
  let served: ServedContext | undefined
  let warning: string | undefined
  let warned = false
  let askedAgain = false
  const configured = config.model.contextWindow
  const learn = (found: ServedContext) =>
    Effect.sync(() => {
      served = found
      warning = contextWarning(found, model, configured)
    })

  const listModels = HttpClient.withScope(client)
    .execute(HttpClientRequest.setHeaders(HttpClientRequest.get(`${baseUrl}/models`), probeHeaders()))
    .pipe(
      Effect.flatMap((response) =>
        Effect.map(response.status === 200 ? response.text : Effect.succeed(""), (text) => {
          let body: unknown
          try {
            body = JSON.parse(text)
          } catch {
            body = undefined
          }
          return { answered: true, list: parseModelList(body, model) }
        })
      ),
      Effect.scoped,
      Effect.timeout(CONTEXT_PROBE_TIMEOUT_MS),
      Effect.orElseSucceed(() => ({ answered: false, list: undefined })),
      Effect.tap((found) =>
        Effect.sync(() => {
          checked = found.answered ? checkOf(baseUrl, model, found.list) : undefined
          // vLLM says it in the list itself: known as soon as the banner is
          const maxModelLen = found.list?.maxModelLen
          if (maxModelLen !== undefined) {
            served = { kind: "vllm", tokens: maxModelLen, askAgainAfterAnswer: false }
            warning = contextWarning(served, model, configured)
          }
        })
      ),
      Effect.flatMap((found) => Deferred.succeed(listing, found))
    )
  const probeServer = Effect.gen(function*() {
    yield* listModels
    const { answered, list } = yield* Deferred.await(listing)
    if (!answered) return
    yield* learn(yield* probeContext(client, { baseUrl, model, list, headers: probeHeaders() }))
  })
  const layerScope = yield* Effect.scope
  yield* Effect.forkIn(probeServer, layerScope)

  /** Ollama had not loaded the model at start-up: once it has answered, `/api/ps` knows the context. */
  const afterAnswer: Effect.Effect<void> = Effect.suspend(() => {
    if (served?.askAgainAfterAnswer !== true || askedAgain) return Effect.void
    askedAgain = true
    const kind = served.kind
    return Effect.asVoid(
      Effect.forkIn(
        Effect.flatMap(
          probeOllamaLoaded(client, { baseUrl, model, headers: probeHeaders() }),
          (tokens) => tokens === undefined ? Effect.void : learn({ kind, tokens, askAgainAfterAnswer: false })
        ),
        layerScope
      )
    )
  })

  const check: Effect.Effect<ServerCheck> = Deferred.await(listing).pipe(
    Effect.map(({ answered, list }): ServerCheck =>
      answered ? checkOf(baseUrl, model, list) : { answering: false, models: undefined, missing: false }
    ),
    Effect.timeout(PROBE_TIMEOUT_MS),
    Effect.orElseSucceed((): ServerCheck => ({ answering: false, models: undefined, missing: false })),
    Effect.withSpan("ModelClient.probe", { captureStackTrace: false })
  )

  const models: Effect.Effect<ReadonlyArray<string>> = Effect.suspend(() => {
    const request = HttpClientRequest.setHeaders(HttpClientRequest.get(`${baseUrl}/models`), probeHeaders())
    return HttpClient.withScope(client).execute(request).pipe(
      Effect.flatMap((response) => (response.status < 300 ? response.json : Effect.succeed(undefined))),
      Effect.scoped
    )
  }).pipe(
    Effect.map(modelIds),
    Effect.timeout(PROBE_TIMEOUT_MS * 2),
    Effect.catchAllCause(() => Effect.succeed<ReadonlyArray<string>>([])),
    Effect.withSpan("ModelClient.models", { captureStackTrace: false })
  )

  /** A refusal from a server whose list lacks the model: say so, with the models it has. */
  const explainMissingModel = (error: GenerationError): Effect.Effect<GenerationError> =>
    error.reason !== "model-not-found" && !/^model server answered HTTP (400|404|422)\b/.test(error.message)
      ? Effect.succeed(error)
      // the list asked for at start-up may still be on its way
      : Deferred.await(listing).pipe(
        Effect.timeout(PROBE_TIMEOUT_MS),
        Effect.orElseSucceed(() => undefined),
        Effect.map(() => withModels(error))
      )

  const withModels = (error: GenerationError): GenerationError => {
    if (checked?.missing !== true || checked.models === undefined) return error
    const ollama = kindOf(baseUrl, undefined) === "ollama" || looksLikeOllama(baseUrl, undefined, error.raw)
    return new GenerationError({
      reason: "model-not-found",
      message: `model "${model}" is not available on ${baseUrl} — available: ${modelNames(checked.models)}${
        ollama ? ` — or run \`ollama pull ${model}\`` : " — check model.name"
      }`,
      raw: error.raw
    })
  }

  return ModelClient.of({
    stream,
    probe: Effect.map(check, (c) => c.answering),
    models,
    check,
    contextWindow: Effect.sync(() => effectiveWindow(configured, served?.tokens)),
    takeWarning: Effect.sync(() => {
      if (warned || warning === undefined) return undefined
      warned = true
      return warning
    }),
    url: baseUrl,
    model
  })
})

/** The model client over any `HttpClient` (tests may bring their own). */
/**
 * Cuts decoded text after each line feed, so that the SSE parser gets at most one line per piece:
 * it scans each line of a piece from the piece's start, which is quadratic when a fast server's
 * burst brings hundreds of events in one network chunk (100 KB of 7-character deltas took seconds).
 */
const oneLinePerPiece = (chunk: Chunk.Chunk<string>): Chunk.Chunk<string> => {
  const pieces: Array<string> = []
  for (const text of chunk) {
    let from = 0
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", from)) {
      pieces.push(text.slice(from, at + 1))
      from = at + 1
    }
    if (from < text.length) pieces.push(text.slice(from))
  }
  return Chunk.unsafeFromArray(pieces)
}

export const OpenAiClientLive: Layer.Layer<ModelClient, never, AppConfig | HttpClient.HttpClient> = Layer.scoped(
  ModelClient,
  make
)

/**
 * On Node's own `http` module rather than undici: undici adds ~1 MB to the bundle and ~35 ms
 * to every start, for a few tenths of a millisecond of first-token latency. Each answer gets
 * its own connection, so a stale keep-alive socket is never mistaken for a dead server.
 */
export const OpenAiClientNode: Layer.Layer<ModelClient, never, AppConfig> = OpenAiClientLive.pipe(
  Layer.provide(NodeHttpClient.layer)
)
