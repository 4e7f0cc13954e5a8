/**
 * The model client over Anthropic's Messages API: `POST {url}/messages` streamed, with the key
 * in `x-api-key`, asked again while the API is busy (429, 529 overloaded), read by
 * AnswerStream (watchdog, answer cap, redaction) with this API's own reader. The API says
 * nothing of the window a model serves: model.contextWindow, else 200,000 tokens.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import { GenerationError } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { errorBody, type Reading } from "../AnswerStream"
import { afterAttempts } from "../Failures"
import { checkOf, hostedClient, listModels } from "../HostedClient"
import { type ChatRequest, ModelClient, type ModelEvent } from "../ModelClient"
import { type Busy, withRetries } from "../Retry"
import { cutBy, cutCallLine } from "../StopReason"
import { apiKey, headerOf, makeWire, readAnswer, send, streamedPost, type Wire } from "../Transport"
import { AnthropicAnswer } from "./AnthropicAnswer"
import { refusal } from "./AnthropicFailures"
import { messagesBody } from "./AnthropicRequest"

/** The version of the Messages API mm speaks. */
export const ANTHROPIC_VERSION = "2023-06-01"
/** The window when model.contextWindow is not written: every current Claude model's. */
export const ANTHROPIC_WINDOW = 200_000

type Client = Wire

/**
 * The headers of every request: the key (when model.apiKeyEnv names one) in `x-api-key`, not
 * as a bearer token, the version, model.headers.
 */
const headersOf = (c: Client): Record<string, string> | GenerationError => {
  const key = apiKey(c.settings.apiKeyEnv, c.headers)
  if (key instanceof GenerationError) return key
  return {
    "anthropic-version": ANTHROPIC_VERSION,
    ...c.headers.extra,
    ...(key === undefined ? {} : { "x-api-key": key })
  }
}

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
  return readAnswer(response, reading)
}

/** One attempt: the request sent, then its answer, or the refusal in one line. */
const attempt = (
  c: Client,
  request: ChatRequest,
  headers: Record<string, string>
): Effect.Effect<Stream.Stream<ModelEvent, GenerationError>, GenerationError | Busy> =>
  Effect.gen(function*() {
    const httpRequest = streamedPost(`${c.baseUrl}/messages`, headers, messagesBody(c.settings, request))
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

/** The ids of an answer of `GET {url}/models`: `data[].id`. */
const idsOf = (body: unknown): ReadonlyArray<string> | undefined => {
  const data = isRecord(body) && Array.isArray(body.data) ? body.data : undefined
  return data?.flatMap((item) => isRecord(item) && typeof item.id === "string" ? [item.id] : [])
}

/** `GET {url}/models` (one page of up to 1,000) with the key when it is set. */
const listRequest = (c: Client): HttpClientRequest.HttpClientRequest => {
  const headers = headersOf(c)
  return HttpClientRequest.get(`${c.baseUrl}/models`, { urlParams: { limit: "1000" } }).pipe(
    HttpClientRequest.setHeaders(headers instanceof GenerationError ? c.headers.extra : headers)
  )
}

/**
 * Whether a listed model is the one asked for. The list names dated ids only
 * (`claude-sonnet-4-20250514`), so an alias is never said to be missing: only a dated name.
 */
const listed = (ids: ReadonlyArray<string>, name: string): boolean =>
  !/-\d{8}$/.test(name) || ids.some((id) => id === name)

export const makeAnthropicClient = Effect.gen(function*() {
  const c: Client = yield* makeWire
  const { settings } = c
  const stream = streaming(c)
  return ModelClient.of(hostedClient({
    api: "anthropic",
    settings,
    baseUrl: c.baseUrl,
    secrets: c.secrets,
    window: settings.contextWindow ?? ANTHROPIC_WINDOW,
    stream: (request) => Stream.unwrap(stream(request)),
    check: Effect.map(
      listModels(c.http, listRequest(c), idsOf),
      (found) => checkOf(found, (ids) => listed(ids, settings.name))
    )
  }))
})
