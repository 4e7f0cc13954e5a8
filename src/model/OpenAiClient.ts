/**
 * The model client over the OpenAI chat-completions protocol: `POST {url}/chat/completions`
 * streamed, asked again while the server is busy, and, in the background from start-up,
 * what the server says about itself (its models, the context window it serves).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientError from "@effect/platform/HttpClientError"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

import { type AgentConfig, AppConfig, DEFAULT_CONTEXT_WINDOW } from "../config/Config"
import { GenerationError, rawText } from "../domain/Errors"
import { type SecretRegistry, Secrets } from "../lib/Secrets"
import { errorBody, type Reading, streamedAnswer, wholeAnswer } from "./AnswerStream"
import {
  afterAttempts,
  httpError,
  listedWithoutModel,
  looksLikeOllama,
  maybeMissingModel,
  redactedError,
  streamCut,
  transportError,
  unsetApiKey,
  unsetHeaderVariables,
  watchdogError
} from "./Failures"
import { type ChatRequest, ModelClient, type ModelEvent } from "./ModelClient"
import { type Busy, busyIfReset, busyIfRetried, RetryTiming, type RetryTimingShape, withRetries } from "./Retry"
import {
  checkOf,
  CONTEXT_PROBE_TIMEOUT_MS,
  contextWarning,
  kindOf,
  modelIds,
  type ModelList,
  parseModelList,
  probeContext,
  probeOllamaLoaded,
  type ServedContext,
  type ServerCheck
} from "./ServerProbe"

/** How long `probe` waits for any HTTP answer. */
export const PROBE_TIMEOUT_MS = 1200

/** The context window in force: the configured one, unless the server serves fewer tokens. */
export const effectiveWindow = (configured: number | undefined, served: number | undefined): number =>
  configured === undefined
    ? served ?? DEFAULT_CONTEXT_WINDOW
    : served === undefined
    ? configured
    : Math.min(configured, served)

type ModelSettings = AgentConfig["model"]

/** `model.headers`, each `${NAME}` in a value read from the environment once, and kept secret. */
interface Headers {
  readonly extra: Readonly<Record<string, string>>
  /** The variables named but not set, each with the header that wanted it. */
  readonly missing: ReadonlyArray<string>
}

const resolveHeaders = (headers: ModelSettings["headers"], secrets: SecretRegistry): Headers => {
  const extra: Record<string, string> = {}
  const missing: Array<string> = []
  for (const [name, value] of Object.entries(headers ?? {})) {
    const resolved = secrets.resolveRefs(value)
    extra[name.toLowerCase()] = resolved.value
    missing.push(...resolved.missing.map((variable) => `${variable} (model.headers.${name})`))
  }
  return { extra, missing }
}

/** What `GET {url}/models` said at start-up; `answered` is false when nothing answered in time. */
interface Listing {
  readonly answered: boolean
  readonly list: ModelList | undefined
}

/** What the client learns while it runs. */
interface Learned {
  /** Dropped for good if the server refuses it (a few strict servers reject unknown fields). */
  readonly askForUsage: Ref.Ref<boolean>
  readonly listing: Deferred.Deferred<Listing>
  readonly checked: Ref.Ref<ServerCheck | undefined>
  readonly served: Ref.Ref<ServedContext | undefined>
  /** The line about a too small context window, and whether it was handed out yet. */
  readonly warning: Ref.Ref<string | undefined>
  readonly warned: Ref.Ref<boolean>
  /** Whether Ollama was asked again for the context once it had loaded the model. */
  readonly askedAgain: Ref.Ref<boolean>
}

const makeLearned: Effect.Effect<Learned> = Effect.all({
  askForUsage: Ref.make(true),
  listing: Deferred.make<Listing>(),
  checked: Ref.make<ServerCheck | undefined>(undefined),
  served: Ref.make<ServedContext | undefined>(undefined),
  warning: Ref.make<string | undefined>(undefined),
  warned: Ref.make(false),
  askedAgain: Ref.make(false)
})

/** Everything the client's parts share: its settings, ready to use, and what it has learned. */
interface Client {
  readonly http: HttpClient.HttpClient
  readonly settings: ModelSettings
  readonly baseUrl: string
  readonly model: string
  readonly apiKeyEnv: string | undefined
  readonly completionsUrl: string
  readonly headers: Headers
  /** The program's secrets: the key and header values are registered there, and all that leaves is redacted. */
  readonly secrets: SecretRegistry
  readonly watchdogSeconds: number
  readonly watchdogMs: number
  readonly timing: RetryTimingShape
  readonly learned: Learned
  /** The layer's scope: the background probes run in it. */
  readonly scope: Scope.Scope
}

// ---------------------------------------------------------------------------------------
// The request

/** The `authorization` header's value, or the failure of a variable that is not set. */
const authorization = (c: Client): string | undefined | GenerationError => {
  if (c.headers.missing.length > 0) return unsetHeaderVariables(c.headers.missing)
  if (c.apiKeyEnv === undefined) return undefined
  const key = process.env[c.apiKeyEnv]?.trim()
  if (key === undefined || key === "") return unsetApiKey(c.apiKeyEnv)
  return `Bearer ${key}`
}

/** The headers of the questions about the server: the extra ones, and the key when there is one. */
const probeHeaders = (c: Client): Readonly<Record<string, string>> => {
  const auth = authorization(c)
  return typeof auth === "string" ? { ...c.headers.extra, authorization: auth } : c.headers.extra
}

const requestBody = (settings: ModelSettings, request: ChatRequest, withUsage: boolean): string => {
  const { temperature, maxTokens, extraBody } = settings
  return JSON.stringify({
    ...extraBody,
    model: request.model ?? settings.name,
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
}

const chatRequest = (
  c: Client,
  request: ChatRequest,
  withUsage: boolean,
  auth: string | undefined
): HttpClientRequest.HttpClientRequest => {
  const httpRequest = HttpClientRequest.post(c.completionsUrl).pipe(
    HttpClientRequest.setHeaders(c.headers.extra),
    HttpClientRequest.setHeader("accept", "text/event-stream"),
    HttpClientRequest.bodyText(requestBody(c.settings, request, withUsage), "application/json")
  )
  return auth === undefined ? httpRequest : HttpClientRequest.setHeader(httpRequest, "authorization", auth)
}

const headerOf = (response: HttpClientResponse.HttpClientResponse, name: string): string | undefined => {
  const value = response.headers[name]
  return typeof value === "string" ? value : undefined
}

/** Sends the request and waits for the headers; the watchdog counts this wait too. */
const send = (
  c: Client,
  httpRequest: HttpClientRequest.HttpClientRequest
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
  c.http.execute(httpRequest).pipe(
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

/** The request sent and answered with a success; a refusal of `stream_options` is asked again without it. */
const open = (
  c: Client,
  request: ChatRequest,
  auth: string | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
  Effect.gen(function*() {
    const withUsage = yield* Ref.get(c.learned.askForUsage)
    const response = yield* send(c, chatRequest(c, request, withUsage, auth))
    if (response.status < 300) return response
    const body = yield* errorBody(response, c.watchdogMs)
    if (withUsage && (response.status === 400 || response.status === 422) && /stream_options/.test(body)) {
      yield* Ref.set(c.learned.askForUsage, false)
      return yield* open(c, request, auth)
    }
    const error = httpError(c, { status: response.status, body, serverHeader: headerOf(response, "server") })
    return yield* Effect.fail(busyIfRetried(error, response.status, () => headerOf(response, "retry-after")))
  })

/** The answer's events: SSE, or one JSON body from a server that ignored `stream: true`. */
const answer = (
  c: Client,
  response: HttpClientResponse.HttpClientResponse
): Stream.Stream<ModelEvent, GenerationError> => {
  const reading: Reading = {
    maxAnswerBytes: c.settings.maxAnswerBytes,
    secrets: c.secrets,
    watchdogSeconds: c.watchdogSeconds,
    watchdogMs: c.watchdogMs,
    afterAnswer: afterAnswer(c)
  }
  return (headerOf(response, "content-type") ?? "").includes("application/json")
    ? wholeAnswer(response, reading)
    : streamedAnswer(response, reading)
}

/** `ModelClient.stream`: the request opened (asked again while the server is busy), then its answer. */
const opening = (c: Client) =>
  Effect.fn("ModelClient.stream", { attributes: { model: c.model, url: c.baseUrl }, captureStackTrace: false })(
    function*(request: ChatRequest) {
      const auth = authorization(c)
      if (auth instanceof GenerationError) return yield* Effect.fail(auth)
      return withRetries(
        Effect.map(open(c, request, auth), (response) => answer(c, response)),
        c.timing,
        (error, attempt, earlier) =>
          Effect.map(explainMissingModel(c, error), (explained) => afterAttempts(explained, attempt, earlier))
      )
    }
  )

/** A refusal from a server whose list lacks the model: say so, with the models it has. */
const explainMissingModel = (c: Client, error: GenerationError): Effect.Effect<GenerationError> =>
  !maybeMissingModel(error)
    ? Effect.succeed(error)
    // the list asked for at start-up may still be on its way
    : Deferred.await(c.learned.listing).pipe(
      Effect.timeout(PROBE_TIMEOUT_MS),
      Effect.orElseSucceed(() => undefined),
      Effect.zipRight(Ref.get(c.learned.checked)),
      Effect.map((checked) => {
        if (checked?.missing !== true || checked.models === undefined) return error
        const ollama = kindOf(c.baseUrl, undefined) === "ollama" || looksLikeOllama(c.baseUrl, undefined, error.raw)
        return listedWithoutModel(c, checked.models, error, ollama)
      })
    )

// ---------------------------------------------------------------------------------------
// What the server says about itself

/** What the server serves is known: the window, and the warning when it is too small. */
const learn = (c: Client, found: ServedContext): Effect.Effect<void> =>
  Effect.zipRight(
    Ref.set(c.learned.served, found),
    Ref.set(c.learned.warning, contextWarning(found, c.model, c.settings.contextWindow))
  )

/** `GET {url}/models` at start-up: for the banner, for a missing model's failure, and vLLM's window. */
const listModels = (c: Client): Effect.Effect<void> =>
  HttpClient.withScope(c.http)
    .execute(HttpClientRequest.setHeaders(HttpClientRequest.get(`${c.baseUrl}/models`), probeHeaders(c)))
    .pipe(
      Effect.flatMap((response) =>
        Effect.map(response.status === 200 ? response.text : Effect.succeed(""), (text): Listing => {
          let body: unknown
          try {
            body = JSON.parse(text)
          } catch {
            body = undefined
          }
          return { answered: true, list: parseModelList(body, c.model) }
        })
      ),
      Effect.scoped,
      Effect.timeout(CONTEXT_PROBE_TIMEOUT_MS),
      Effect.orElseSucceed((): Listing => ({ answered: false, list: undefined })),
      Effect.tap((found) =>
        Effect.gen(function*() {
          yield* Ref.set(c.learned.checked, found.answered ? checkOf(c.baseUrl, c.model, found.list) : undefined)
          // vLLM says it in the list itself: known as soon as the banner is
          const maxModelLen = found.list?.maxModelLen
          if (maxModelLen !== undefined) {
            yield* learn(c, { kind: "vllm", tokens: maxModelLen, askAgainAfterAnswer: false })
          }
        })
      ),
      Effect.flatMap((found) => Deferred.succeed(c.learned.listing, found))
    )

/**
 * What the server says about itself, asked once from start-up in the background: its
 * model list (for the banner), then the context window it really serves.
 */
const probeServer = (c: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* listModels(c)
    const { answered, list } = yield* Deferred.await(c.learned.listing)
    if (!answered) return
    yield* learn(c, yield* probeContext(c.http, { baseUrl: c.baseUrl, model: c.model, list, headers: probeHeaders(c) }))
  })

/** Ollama had not loaded the model at start-up: once it has answered, `/api/ps` knows the context. */
const afterAnswer = (c: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    const served = yield* Ref.get(c.learned.served)
    if (served?.askAgainAfterAnswer !== true || (yield* Ref.getAndSet(c.learned.askedAgain, true))) return
    const kind = served.kind
    yield* Effect.forkIn(
      Effect.flatMap(
        probeOllamaLoaded(c.http, { baseUrl: c.baseUrl, model: c.model, headers: probeHeaders(c) }),
        (tokens) => tokens === undefined ? Effect.void : learn(c, { kind, tokens, askAgainAfterAnswer: false })
      ),
      c.scope
    )
  })

const notAnswering = (): ServerCheck => ({ answering: false, models: undefined, missing: false })

/** `ModelClient.check`: what the start-up listing said, waited for a moment at most. */
const check = (c: Client): Effect.Effect<ServerCheck> =>
  Deferred.await(c.learned.listing).pipe(
    Effect.map(({ answered, list }): ServerCheck => answered ? checkOf(c.baseUrl, c.model, list) : notAnswering()),
    Effect.timeout(PROBE_TIMEOUT_MS),
    Effect.orElseSucceed(notAnswering),
    Effect.withSpan("ModelClient.probe", { captureStackTrace: false })
  )

/** `ModelClient.models`: the server's list, asked now. */
const models = (c: Client): Effect.Effect<ReadonlyArray<string>> =>
  Effect.suspend(() => {
    const request = HttpClientRequest.setHeaders(HttpClientRequest.get(`${c.baseUrl}/models`), probeHeaders(c))
    return HttpClient.withScope(c.http).execute(request).pipe(
      Effect.flatMap((response) => (response.status < 300 ? response.json : Effect.succeed(undefined))),
      Effect.scoped
    )
  }).pipe(
    Effect.map(modelIds),
    Effect.timeout(PROBE_TIMEOUT_MS * 2),
    Effect.catchAllCause(() => Effect.succeed<ReadonlyArray<string>>([])),
    Effect.withSpan("ModelClient.models", { captureStackTrace: false })
  )

/** `ModelClient.takeWarning`: the warning, handed out once. */
const takeWarning = (c: Client): Effect.Effect<string | undefined> =>
  Effect.flatMap(Ref.get(c.learned.warning), (warning) =>
    warning === undefined
      ? Effect.succeed(undefined)
      : Ref.modify(c.learned.warned, (warned) => [warned ? undefined : warning, true]))

/** What leaves the client holds no known secret: its failures and its notices are redacted. */
const redactedStream = (
  secrets: SecretRegistry,
  events: Stream.Stream<ModelEvent, GenerationError>
): Stream.Stream<ModelEvent, GenerationError> =>
  events.pipe(
    Stream.map((event) => (event._tag === "Retrying" ? { ...event, text: secrets.redact(event.text) } : event)),
    Stream.mapError(redactedError(secrets.redact))
  )

// ---------------------------------------------------------------------------------------
// The service

export const make = Effect.gen(function*() {
  const { config } = yield* AppConfig
  // the client's own span costs about a millisecond of first-token latency; `ModelClient.stream` has one
  const http = (yield* HttpClient.HttpClient).pipe(HttpClient.withTracerDisabledWhen(() => true))
  const settings = config.model
  const baseUrl = settings.url.replace(/\/+$/, "")
  const secrets = yield* Secrets
  if (settings.apiKeyEnv !== undefined) secrets.registerVariable(settings.apiKeyEnv)
  const c: Client = {
    http,
    settings,
    baseUrl,
    model: settings.name,
    apiKeyEnv: settings.apiKeyEnv,
    completionsUrl: `${baseUrl}/chat/completions`,
    headers: resolveHeaders(settings.headers, secrets),
    secrets,
    watchdogSeconds: config.watchdogTimeout,
    watchdogMs: Math.max(1, Math.round(config.watchdogTimeout * 1000)),
    timing: yield* RetryTiming,
    learned: yield* makeLearned,
    scope: yield* Effect.scope
  }
  yield* Effect.forkIn(probeServer(c), c.scope)
  const stream = opening(c)
  const checked = check(c)
  return ModelClient.of({
    stream: (request) => redactedStream(secrets, Stream.unwrap(stream(request))),
    probe: Effect.map(checked, (found) => found.answering),
    models: models(c),
    check: checked,
    contextWindow: Effect.map(
      Ref.get(c.learned.served),
      (served) => effectiveWindow(settings.contextWindow, served?.tokens)
    ),
    takeWarning: takeWarning(c),
    url: baseUrl,
    model: c.model
  })
})

/** The model client over any `HttpClient` (tests may bring their own). */
export const OpenAiClientLive: Layer.Layer<ModelClient, never, AppConfig | Secrets | HttpClient.HttpClient> = Layer
  .scoped(
    ModelClient,
    make
  )

/**
 * On Node's own `http` module rather than undici: undici adds ~1 MB to the bundle and ~35 ms
 * to every start, for a few tenths of a millisecond of first-token latency. Each answer gets
 * its own connection, so a stale keep-alive socket is never mistaken for a dead server.
 */
export const OpenAiClientNode: Layer.Layer<ModelClient, never, AppConfig | Secrets> = OpenAiClientLive.pipe(
  Layer.provide(NodeHttpClient.layer)
)
