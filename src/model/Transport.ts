/**
 * What every API's client does alike on the wire: model.headers and the key read from the
 * environment, the request sent within the watchdog (a dropped connection worded, and said to
 * be busy when the server reset it), the answer read as SSE or one JSON body, and what leaves
 * redacted. Each adapter keeps its own URL, body, key header and refusals.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import { type AgentConfig, AppConfig } from "../config/Config"
import { type GenerationError, rawText } from "../domain/Errors"
import { type SecretRegistry, Secrets } from "../lib/Secrets"
import { type Reading, streamedAnswer, wholeAnswer } from "./AnswerStream"
import { redactedError, streamCut, transportError, unsetApiKey, unsetHeaderVariables, watchdogError } from "./Failures"
import type { ModelEvent } from "./ModelClient"
import { type Busy, busyIfReset, RetryTiming, type RetryTimingShape } from "./Retry"

/** `model.headers`, each `${NAME}` in a value read from the environment once, and kept secret. */
export interface Headers {
  readonly extra: Readonly<Record<string, string>>
  /** The variables named but not set, each with the header that wanted it. */
  readonly missing: ReadonlyArray<string>
}

export const resolveHeaders = (headers: AgentConfig["model"]["headers"], secrets: SecretRegistry): Headers => {
  const extra: Record<string, string> = {}
  const missing: Array<string> = []
  for (const [name, value] of Object.entries(headers ?? {})) {
    const resolved = secrets.resolveRefs(value)
    extra[name.toLowerCase()] = resolved.value
    missing.push(...resolved.missing.map((variable) => `${variable} (model.headers.${name})`))
  }
  return { extra, missing }
}

/**
 * The key model.apiKeyEnv names (undefined when it names none), or the failure of a variable
 * that is not set: one of model.headers' first, then the key's. Each API puts it in its own header.
 */
export const apiKey = (apiKeyEnv: string | undefined, headers: Headers): string | undefined | GenerationError => {
  if (headers.missing.length > 0) return unsetHeaderVariables(headers.missing)
  if (apiKeyEnv === undefined) return undefined
  const key = process.env[apiKeyEnv]?.trim()
  if (key === undefined || key === "") return unsetApiKey(apiKeyEnv)
  return key
}

export const headerOf = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return typeof value === "string" ? value : undefined
}

/** Where requests go and how long a silence may last. */
export interface Link {
  readonly http: HttpClient.HttpClient
  readonly baseUrl: string
  readonly watchdogSeconds: number
  readonly watchdogMs: number
}

/** What every API's client starts from: where and how to send, model.headers read, the retries' timing. */
export interface Wire extends Link {
  readonly settings: AgentConfig["model"]
  /** The program's secrets: the key and header values are registered there, and all that leaves is redacted. */
  readonly secrets: SecretRegistry
  readonly headers: Headers
  readonly timing: RetryTimingShape
}

export const makeWire = Effect.gen(function*() {
  const { config } = yield* AppConfig
  // the HTTP client's own span costs about a millisecond of first-token latency; `ModelClient.stream` has one
  const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const secrets = yield* Secrets
  const settings = config.model
  if (settings.apiKeyEnv !== undefined) secrets.registerVariable(settings.apiKeyEnv)
  return {
    http,
    settings,
    baseUrl: settings.url.replace(/\/+$/, ""),
    secrets,
    headers: resolveHeaders(settings.headers, secrets),
    watchdogSeconds: config.watchdogTimeout,
    watchdogMs: Math.max(1, Math.round(config.watchdogTimeout * 1000)),
    timing: yield* RetryTiming
  }
})

/** A POST of a JSON body whose answer is streamed: `headers`, then `authorization` when there is one. */
export const streamedPost = (
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  authorization?: string
): HttpClientRequest.HttpClientRequest => {
  const request = HttpClientRequest.post(url).pipe(
    HttpClientRequest.setHeaders(headers),
    HttpClientRequest.setHeader("accept", "text/event-stream"),
    HttpClientRequest.bodyText(body, "application/json")
  )
  return authorization === undefined ? request : HttpClientRequest.setHeader(request, "authorization", authorization)
}

/**
 * Sends the request and waits for its headers; the watchdog counts this wait too. `onLost`
 * runs when the server could not be reached (chat then asks about it again once it answers).
 */
export const send = (
  link: Link,
  request: HttpClientRequest.HttpClientRequest,
  onLost: Effect.Effect<void> = Effect.void
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
  link.http.execute(request).pipe(
    Effect.timeoutFail({ duration: link.watchdogMs, onTimeout: () => watchdogError(link.watchdogSeconds) }),
    Effect.catchIf(
      (error): error is HttpClientError.RequestError => error._tag === "RequestError",
      (error) => Effect.zipRight(onLost, Effect.fail(busyIfReset(transportError(link.baseUrl, error), error.cause)))
    ),
    Effect.catchIf(
      (error): error is HttpClientError.ResponseError => error._tag === "ResponseError",
      (error) => Effect.fail(streamCut(rawText(error)))
    )
  )

/** The answer's events: SSE, or one JSON body from a server that ignored `stream: true`. */
export const readAnswer = (
  response: HttpClientResponse.HttpClientResponse,
  reading: Reading
): Stream.Stream<ModelEvent, GenerationError> =>
  (headerOf(response, "content-type") ?? "").includes("application/json")
    ? wholeAnswer(response, reading)
    : streamedAnswer(response, reading)

/** What leaves a client holds no known secret: its failures and its notices are redacted. */
export const redactedStream = (
  secrets: SecretRegistry,
  events: Stream.Stream<ModelEvent, GenerationError>
): Stream.Stream<ModelEvent, GenerationError> =>
  events.pipe(
    Stream.map((event) =>
      event._tag === "Retrying" || event._tag === "Notice" ? { ...event, text: secrets.redact(event.text) } : event
    ),
    Stream.mapError(redactedError(secrets.redact))
  )
