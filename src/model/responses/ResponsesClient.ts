/**
 * The model client over OpenAI's Responses API (`model.api: responses`): `POST {url}/responses`
 * streamed and stateless (the whole conversation each time, nothing stored by the server),
 * asked again while the server is busy, its answer read by AnswerStream like every API's.
 * Written on @effect/platform's HttpClient rather than @effect/ai-openai so that the
 * watchdog, the answer cap, the redaction and the retries hold as for chat completions.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

import { type AgentConfig, AppConfig } from "../../config/Config"
import { GenerationError, rawText } from "../../domain/Errors"
import { type SecretRegistry, Secrets } from "../../lib/Secrets"
import { errorBody, type Reading, streamedAnswer, wholeAnswer } from "../AnswerStream"
import { probeBody } from "../BodyRead"
import { listedModels, type ServerCheck } from "../chat/ServerProbe"
import {
  afterAttempts,
  fail,
  notOpenAiLine,
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
import { ResponsesAnswer } from "./ResponsesAnswer"
import { type Asked, refusal, refusesReasoning } from "./ResponsesFailures"
import { requestBody } from "./ResponsesRequest"

/** The window of a Responses model when model.contextWindow does not say (the smallest of OpenAI's current ones). */
export const RESPONSES_DEFAULT_WINDOW = 128_000

type ModelSettings = AgentConfig["model"]

/** How long `GET {url}/models` may take before the server is said not to answer. */
const CHECK_TIMEOUT_MS = 5000

/** What the client's parts share. */
export interface Client {
  readonly http: HttpClient.HttpClient
  readonly settings: ModelSettings
  readonly baseUrl: string
  readonly headers: Readonly<Record<string, string>>
  /** The variables `model.headers` names that are not set, each with its header. */
  readonly missing: ReadonlyArray<string>
  readonly secrets: SecretRegistry
  readonly watchdogSeconds: number
  readonly watchdogMs: number
  readonly timing: RetryTimingShape
  readonly window: number
  /**
   * Whether `reasoning` and `include` are sent: dropped for the rest of the run once the model
   * refuses them (one without reasoning); `told` once the user was told so.
   */
  readonly reasoning: Ref.Ref<{ readonly send: boolean; readonly told: boolean }>
}

/** The `authorization` header's value, or the failure of a variable that is not set. */
export const authorization = (c: Client): string | undefined | GenerationError => {
  if (c.missing.length > 0) return unsetHeaderVariables(c.missing)
  const name = c.settings.apiKeyEnv
  if (name === undefined) return undefined
  const key = process.env[name]?.trim()
  if (key === undefined || key === "") return unsetApiKey(name)
  return `Bearer ${key}`
}

const headerOf = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return typeof value === "string" ? value : undefined
}

/** Sends the request and waits for the headers; the watchdog counts this wait too. */
const send = (
  c: Client,
  request: ChatRequest,
  auth: string | undefined,
  withReasoning: boolean
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> => {
  const httpRequest = HttpClientRequest.post(`${c.baseUrl}/responses`).pipe(
    HttpClientRequest.setHeaders(c.headers),
    HttpClientRequest.setHeader("accept", "text/event-stream"),
    HttpClientRequest.bodyText(requestBody(c.settings, request, withReasoning), "application/json")
  )
  return c.http.execute(
    auth === undefined ? httpRequest : HttpClientRequest.setHeader(httpRequest, "authorization", auth)
  )
    .pipe(
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
}

/**
 * The request sent and answered with a success, or its refusal worded (`Busy` when worth
 * asking again). A model that refuses the reasoning asked of it is asked again without it.
 */
const open = (
  c: Client,
  request: ChatRequest,
  auth: string | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
  Effect.gen(function*() {
    const withReasoning = (yield* Ref.get(c.reasoning)).send
    const response = yield* send(c, request, auth, withReasoning)
    const type = headerOf(response, "content-type") ?? ""
    if (response.status < 300 && !/html/i.test(type)) return response
    const body = yield* errorBody(response, c.watchdogMs)
    if (withReasoning && refusesReasoning(response.status, body)) {
      yield* Ref.set(c.reasoning, { send: false, told: false })
      return yield* open(c, request, auth)
    }
    if (/html/i.test(type) && response.status < 500) {
      return yield* Effect.fail(fail("http", notOpenAiLine(c.baseUrl, type), `HTTP ${response.status}: ${body}`))
    }
    const asked: Asked = {
      url: c.baseUrl,
      model: request.model ?? c.settings.name,
      apiKeyEnv: c.settings.apiKeyEnv,
      window: c.window
    }
    return yield* Effect.fail(refusal(asked, response.status, body, headerOf(response, "retry-after")))
  })

/** Whether an event's data is the last of the answer (`type` comes first in OpenAI's events). */
const isLast = (data: string): boolean => /^\s*\{\s*"type"\s*:\s*"response\.(completed|incomplete|failed)"/.test(data)

/** The answer's events: SSE, or one JSON body from a server that ignored `stream: true`. */
const answer = (
  c: Client,
  model: string,
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<ModelEvent, GenerationError> => {
  const reading: Reading = {
    begin: () =>
      new ResponsesAnswer(
        model,
        c.secrets.redact,
        (tool, usage) => cutCallLine(cutBy(usage, c.window), tool, c.settings.maxTokens)
      ),
    maxAnswerBytes: c.settings.maxAnswerBytes,
    secrets: c.secrets,
    watchdogSeconds: c.watchdogSeconds,
    watchdogMs: c.watchdogMs,
    afterAnswer: Effect.void,
    isLast
  }
  return (headerOf(response, "content-type") ?? "").includes("application/json")
    ? wholeAnswer(response, reading)
    : streamedAnswer(response, reading)
}

/** The line saying that the model refused reasoning, once, when it did. */
const reasoningNotice = (c: Client): Effect.Effect<ModelEvent | undefined> =>
  Ref.modify(c.reasoning, (state) =>
    state.send || state.told ? [undefined, state] : [
      {
        _tag: "Notice",
        text:
          `model "${c.settings.name}" takes no reasoning parameters: asking without them (set model.thinking: off to skip this)`
      },
      { ...state, told: true }
    ])

/** `ModelClient.stream`: the request opened (asked again while the server is busy), then its answer. */
const opening = (c: Client) =>
  Effect.fn("ModelClient.stream", {
    attributes: { model: c.settings.name, url: c.baseUrl, api: "responses" },
    captureStackTrace: false
  })(function*(request: ChatRequest) {
    const auth = authorization(c)
    if (auth instanceof GenerationError) return yield* Effect.fail(auth)
    const model = request.model ?? c.settings.name
    return withRetries(
      Effect.flatMap(open(c, request, auth), (response) =>
        Effect.map(reasoningNotice(c), (notice) =>
          notice === undefined
            ? answer(c, model, response)
            : Stream.concat(Stream.make(notice), answer(c, model, response)))),
      c.timing,
      (error, attempt, earlier) => Effect.succeed(afterAttempts(error, attempt, earlier))
    )
  })

/**
 * `GET {url}/models` with the key: whether the API answers, the models it lists and whether
 * model.name is among them. Never fails; bounded in time.
 */
const serverCheck = (c: Client): Effect.Effect<ServerCheck> => {
  const auth = authorization(c)
  const request = HttpClientRequest.setHeaders(
    HttpClientRequest.get(`${c.baseUrl}/models`),
    typeof auth === "string" ? { ...c.headers, authorization: auth } : c.headers
  )
  const nothing: ServerCheck = { answering: false, models: undefined, missing: false }
  return HttpClient.withScope(c.http).execute(request).pipe(
    Effect.flatMap((response) =>
      Effect.map(probeBody(response), (text): ServerCheck => {
        let listed: ReadonlyArray<string> | undefined
        try {
          listed = response.status < 300 ? listedModels(JSON.parse(text)) : undefined
        } catch {
          listed = undefined
        }
        if (listed === undefined) return { ...nothing, reached: true }
        return { answering: true, models: listed, missing: !listed.includes(c.settings.name) }
      })
    ),
    Effect.scoped,
    Effect.timeout(CHECK_TIMEOUT_MS),
    Effect.catchAllCause(() => Effect.succeed(nothing)),
    Effect.withSpan("ModelClient.check", { captureStackTrace: false })
  )
}

/** What leaves the client holds no known secret: its failures and its notices are redacted. */
const redactedStream = (
  secrets: SecretRegistry,
  events: Stream.Stream<ModelEvent, GenerationError>
): Stream.Stream<ModelEvent, GenerationError> =>
  events.pipe(
    Stream.map((event) =>
      event._tag === "Retrying" || event._tag === "Notice" ? { ...event, text: secrets.redact(event.text) } : event
    ),
    Stream.mapError(redactedError(secrets.redact))
  )

/** `model.headers`, each `${NAME}` read from the environment once and kept secret. */
const resolveHeaders = (
  headers: ModelSettings["headers"],
  secrets: SecretRegistry
): { readonly extra: Record<string, string>; readonly missing: Array<string> } => {
  const extra: Record<string, string> = {}
  const missing: Array<string> = []
  for (const [name, value] of Object.entries(headers ?? {})) {
    const resolved = secrets.resolveRefs(value)
    extra[name.toLowerCase()] = resolved.value
    missing.push(...resolved.missing.map((variable) => `${variable} (model.headers.${name})`))
  }
  return { extra, missing }
}

export const makeResponsesClient = Effect.gen(function*() {
  const { config } = yield* AppConfig
  const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const settings = config.model
  const baseUrl = settings.url.replace(/\/+$/, "")
  const secrets = yield* Secrets
  if (settings.apiKeyEnv !== undefined) secrets.registerVariable(settings.apiKeyEnv)
  const headers = resolveHeaders(settings.headers, secrets)
  const c: Client = {
    http,
    settings,
    baseUrl,
    headers: headers.extra,
    missing: headers.missing,
    secrets,
    watchdogSeconds: config.watchdogTimeout,
    watchdogMs: Math.max(1, Math.round(config.watchdogTimeout * 1000)),
    timing: yield* RetryTiming,
    window: settings.contextWindow ?? RESPONSES_DEFAULT_WINDOW,
    reasoning: yield* Ref.make({ send: settings.thinking !== "off", told: settings.thinking === "off" })
  }
  const stream = opening(c)
  const check = serverCheck(c)
  const window = Effect.succeed(c.window)
  return ModelClient.of({
    stream: (request) => redactedStream(secrets, Stream.unwrap(stream(request))),
    probe: Effect.map(check, (found) => found.answering || found.reached === true),
    models: Effect.map(check, (found) => found.models ?? []),
    check,
    known: undefined,
    contextWindow: window,
    freshWindow: window,
    settledWindow: window,
    vision: Effect.succeed(settings.vision !== false),
    toolsAsText: Effect.succeed(false),
    takeWarning: Effect.succeed(undefined),
    askServer: Effect.void,
    url: baseUrl,
    model: settings.name,
    api: "responses"
  })
})
