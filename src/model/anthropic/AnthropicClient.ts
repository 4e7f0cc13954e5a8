/**
 * The model client over Anthropic's Messages API: `POST {url}/messages` streamed, with the key
 * in `x-api-key`, asked again while the API is busy (429, 529 overloaded), read by
 * AnswerStream (watchdog, answer cap, redaction) with this API's own reader. The API says
 * nothing of the window a model serves: model.contextWindow, else 200,000 tokens.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import { AppConfig, type LoadedConfig } from "../../config/Config"
import { GenerationError, rawText } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { type SecretRegistry, Secrets } from "../../lib/Secrets"
import { errorBody, type Reading, streamedAnswer, wholeAnswer } from "../AnswerStream"
import {
  afterAttempts,
  redactedError,
  streamCut,
  transportError,
  unsetApiKey,
  unsetHeaderVariables,
  watchdogError
} from "../Failures"
import { type ChatRequest, ModelClient, type ModelEvent } from "../ModelClient"
import { type Busy, busyIfReset, RetryTiming, type RetryTimingShape, withRetries } from "../Retry"
import { cutBy, cutCallLine } from "../StopReason"
import { AnthropicAnswer } from "./AnthropicAnswer"
import { refusal } from "./AnthropicFailures"
import { messagesBody } from "./AnthropicRequest"

/** The version of the Messages API mm speaks. */
export const ANTHROPIC_VERSION = "2023-06-01"
/** The window when model.contextWindow is not written: every current Claude model's. */
export const ANTHROPIC_WINDOW = 200_000
/** How long the model list is waited for. */
const LIST_TIMEOUT_MS = 5000

interface Client {
  readonly http: HttpClient.HttpClient
  readonly settings: LoadedConfig["config"]["model"]
  readonly baseUrl: string
  readonly secrets: SecretRegistry
  /** model.headers with their `${NAME}` read, and the variables named but not set. */
  readonly extra: Readonly<Record<string, string>>
  readonly missing: ReadonlyArray<string>
  readonly watchdogSeconds: number
  readonly watchdogMs: number
  readonly timing: RetryTimingShape
}

/** The headers of every request: the key (when model.apiKeyEnv names one), the version, model.headers. */
const headersOf = (c: Client): Record<string, string> | GenerationError => {
  if (c.missing.length > 0) return unsetHeaderVariables(c.missing)
  const variable = c.settings.apiKeyEnv
  const key = variable === undefined ? undefined : process.env[variable]?.trim()
  if (variable !== undefined && (key === undefined || key === "")) return unsetApiKey(variable)
  return {
    "anthropic-version": ANTHROPIC_VERSION,
    ...c.extra,
    ...(key === undefined ? {} : { "x-api-key": key })
  }
}

const headerOf = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return typeof value === "string" ? value : undefined
}

/** The request sent and its headers awaited (the watchdog counts this wait), or why not. */
const send = (
  c: Client,
  request: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
  c.http.execute(request).pipe(
    Effect.timeoutFail({ duration: c.watchdogMs, onTimeout: () => watchdogError(c.watchdogSeconds) }),
    Effect.catchIf(
      (error): error is HttpClientError.RequestError => error._tag === "RequestError",
      (error) => Effect.fail(busyIfReset(transportError(c.baseUrl, error), error.cause))
    ),
    Effect.catchIf(
      (error): error is HttpClientError.ResponseError => error._tag === "ResponseError",
      (error) => Effect.fail(streamCut(rawText(error)))
    )
  )

/** The answer's events: SSE, or one JSON body from a server that ignored `stream: true`. */
const answer = (
  c: Client,
  model: string,
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<ModelEvent, GenerationError> => {
  const window = c.settings.contextWindow ?? ANTHROPIC_WINDOW
  const reading: Reading = {
    begin: () =>
      new AnthropicAnswer(
        model,
        c.secrets.redact,
        (tool, usage) => cutCallLine(cutBy(usage, window), tool, c.settings.maxTokens)
      ),
    maxAnswerBytes: c.settings.maxAnswerBytes,
    secrets: c.secrets,
    watchdogSeconds: c.watchdogSeconds,
    watchdogMs: c.watchdogMs,
    afterAnswer: Effect.void,
    isLast: (data) => data.length < 100 && /^\s*\{\s*"type"\s*:\s*"message_stop"/.test(data)
  }
  return (headerOf(response, "content-type") ?? "").includes("application/json")
    ? wholeAnswer(response, reading)
    : streamedAnswer(response, reading)
}

/** One attempt: the request sent, then its answer, or the refusal in one line. */
const attempt = (
  c: Client,
  request: ChatRequest,
  headers: Record<string, string>
): Effect.Effect<Stream.Stream<ModelEvent, GenerationError>, GenerationError | Busy> =>
  Effect.gen(function*() {
    const httpRequest = HttpClientRequest.post(`${c.baseUrl}/messages`).pipe(
      HttpClientRequest.setHeaders(headers),
      HttpClientRequest.setHeader("accept", "text/event-stream"),
      HttpClientRequest.bodyText(messagesBody(c.settings, request), "application/json")
    )
    const response = yield* send(c, httpRequest)
    if (response.status < 300) return answer(c, request.model ?? c.settings.name, response)
    const body = yield* errorBody(response, c.watchdogMs)
    return yield* Effect.fail(
      refusal(
        { baseUrl: c.baseUrl, model: request.model ?? c.settings.name, apiKeyEnv: c.settings.apiKeyEnv },
        { status: response.status, body, retryAfter: headerOf(response, "retry-after") }
      )
    )
  })

/** `ModelClient.stream`: asked again while the API is busy; what leaves holds no known secret. */
const streaming = (c: Client) =>
  Effect.fn("ModelClient.stream", { attributes: { model: c.settings.name, url: c.baseUrl }, captureStackTrace: false })(
    function*(request: ChatRequest) {
      const headers = headersOf(c)
      if (headers instanceof GenerationError) return yield* Effect.fail(headers)
      return withRetries(
        attempt(c, request, headers),
        c.timing,
        (error, n, earlier) => Effect.succeed(afterAttempts(error, n, earlier))
      )
    }
  )

/** The ids `GET {url}/models` lists (one page of up to 1,000), undefined when it gave none. Never fails. */
const listModels = (c: Client): Effect.Effect<{ readonly reached: boolean; readonly ids?: ReadonlyArray<string> }> => {
  const headers = headersOf(c)
  return c.http.execute(
    HttpClientRequest.get(`${c.baseUrl}/models`, { urlParams: { limit: "1000" } }).pipe(
      HttpClientRequest.setHeaders(headers instanceof GenerationError ? c.extra : headers)
    )
  ).pipe(
    Effect.flatMap((response) =>
      response.status >= 300
        ? Effect.succeed({ reached: true })
        : Effect.map(response.json, (body) => {
          const data = isRecord(body) && Array.isArray(body.data) ? body.data : undefined
          const ids = data?.flatMap((item) => isRecord(item) && typeof item.id === "string" ? [item.id] : [])
          return ids === undefined ? { reached: true } : { reached: true, ids }
        })
    ),
    Effect.scoped,
    Effect.timeout(LIST_TIMEOUT_MS),
    Effect.orElseSucceed(() => ({ reached: false }))
  )
}

/**
 * Whether a listed model is the one asked for. The list names dated ids only
 * (`claude-sonnet-4-20250514`), so an alias is never said to be missing: only a dated name.
 */
const listed = (ids: ReadonlyArray<string>, name: string): boolean =>
  !/-\d{8}$/.test(name) || ids.some((id) => id === name)

export const makeAnthropicClient = Effect.gen(function*() {
  const { config } = yield* AppConfig
  const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const secrets = yield* Secrets
  const settings = config.model
  if (settings.apiKeyEnv !== undefined) secrets.registerVariable(settings.apiKeyEnv)
  const extra: Record<string, string> = {}
  const missing: Array<string> = []
  for (const [name, value] of Object.entries(settings.headers ?? {})) {
    const resolved = secrets.resolveRefs(value)
    extra[name.toLowerCase()] = resolved.value
    missing.push(...resolved.missing.map((variable) => `${variable} (model.headers.${name})`))
  }
  const c: Client = {
    http,
    settings,
    baseUrl: settings.url.replace(/\/+$/, ""),
    secrets,
    extra,
    missing,
    watchdogSeconds: config.watchdogTimeout,
    watchdogMs: Math.max(1, Math.round(config.watchdogTimeout * 1000)),
    timing: yield* RetryTiming
  }
  const stream = streaming(c)
  const check = Effect.map(listModels(c), ({ reached, ids }) => ({
    answering: ids !== undefined,
    reached,
    models: ids,
    missing: ids !== undefined && !listed(ids, settings.name)
  }))
  const window = Effect.succeed(settings.contextWindow ?? ANTHROPIC_WINDOW)
  return ModelClient.of({
    stream: (request) =>
      Stream.unwrap(stream(request)).pipe(
        Stream.map((event) =>
          event._tag === "Retrying" || event._tag === "Notice" ? { ...event, text: secrets.redact(event.text) } : event
        ),
        Stream.mapError(redactedError(secrets.redact))
      ),
    probe: Effect.map(listModels(c), ({ reached }) => reached),
    models: Effect.map(listModels(c), ({ ids }) => ids ?? []),
    check,
    known: undefined,
    contextWindow: window,
    freshWindow: window,
    settledWindow: window,
    vision: Effect.succeed(settings.vision ?? true),
    toolsAsText: Effect.succeed(false),
    takeWarning: Effect.succeed(undefined),
    askServer: Effect.void,
    url: c.baseUrl,
    model: settings.name,
    api: "anthropic"
  })
})
