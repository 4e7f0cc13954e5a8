/**
 * The model client over the OpenAI chat-completions protocol: `POST {url}/chat/completions`
 * streamed, asked again while the server is busy, and, in the background from start-up,
 * what the server says about itself (its models, the context window it serves).
 */
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as ExecutionStrategy from "effect/ExecutionStrategy"
import * as Exit from "effect/Exit"
import * as Ref from "effect/Ref"
import * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"

import { DEFAULT_CONTEXT_WINDOW } from "../../config/Config"
import { GenerationError } from "../../domain/Errors"
import type { WireMessage } from "../../domain/Session"
import { errorBody, type Reading } from "../AnswerStream"
import {
  afterAttempts,
  contextOverflow,
  fail,
  httpError,
  listedWithoutModel,
  looksLikeOllama,
  looksNotOpenAi,
  maybeMissingModel,
  notOpenAiLine
} from "../Failures"
import { type ChatRequest, ModelClient, type ModelEvent } from "../ModelClient"
import { type Busy, busyIfRetried, withRetries } from "../Retry"
import { cutBy, cutCallLine } from "../StopReason"
import { headerOf, makeWire, readAnswer, redactedStream, send, streamedPost } from "../Transport"
import { authorization, type Client, makeLearned, type ModelSettings } from "./ClientState"
import { Completion } from "./Completion"
import { ServerCache } from "./ServerCache"
import { failedStatus, kindOf } from "./ServerProbe"
import {
  afterAnswer,
  answeredAgain,
  askServer,
  check,
  checkOfListing,
  freshWindow,
  heard,
  learnOverflow,
  models,
  PROBE_TIMEOUT_MS,
  settled,
  settledIfAnswering,
  startFrom,
  takeTextToolsHint,
  takeWarning,
  turnBegins
} from "./ServerWatch"
import { refusesTools, withTextTools } from "./TextToolMode"

/** The context window in force: the configured one, unless the server serves fewer tokens. */
const effectiveWindow = (configured: number | undefined, served: number | undefined): number =>
  configured === undefined
    ? served ?? DEFAULT_CONTEXT_WINDOW
    : served === undefined
    ? configured
    : Math.min(configured, served)

// ---------------------------------------------------------------------------------------
// The request

/** A message as chat completions take it: what only another API understands is left out. */
const chatMessage = (message: WireMessage): WireMessage => {
  if (message.opaque === undefined) return message
  const { opaque: _, ...rest } = message
  return rest
}

/** How the body is asked for, beside the request itself. */
interface BodyOptions {
  readonly withUsage: boolean
  /** The tools described in the system prompt rather than sent as `tools`. */
  readonly asText: boolean
  /** llama-server's progress chunks while it reads the prompt (`return_progress`). */
  readonly progress: boolean
}

/**
 * Whether the server is known to be llama.cpp: its `/props` gave a window, or its model list
 * says `owned_by: llamacpp`. Only then is `return_progress` sent: a strict API (OpenAI's)
 * refuses a field it does not know.
 */
const knownLlamaCpp = (c: Client): Effect.Effect<boolean> =>
  Effect.map(
    Effect.zip(Ref.get(c.learned.served), Ref.get(c.learned.list)),
    ([served, list]) =>
      (served?.kind === "llama.cpp" && served.tokens !== undefined) || (list?.ownedBy.includes("llamacpp") ?? false)
  )

/** The body. `model.extraBody` may turn `return_progress` off; mm's own fields win over the rest of it. */
const requestBody = (settings: ModelSettings, asked: ChatRequest, options: BodyOptions): string => {
  const { temperature, maxTokens, extraBody } = settings
  const { asText, progress, withUsage } = options
  const request = asText && asked.tools.length > 0
    ? { ...asked, messages: withTextTools(asked.messages, asked.tools), tools: [] }
    : asked
  return JSON.stringify({
    ...(progress ? { return_progress: true } : {}),
    ...extraBody,
    model: request.model ?? settings.name,
    messages: request.messages.map(chatMessage),
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
  auth: string | undefined,
  options: BodyOptions
): HttpClientRequest.HttpClientRequest =>
  streamedPost(c.completionsUrl, c.headers.extra, requestBody(c.settings, request, options), auth)

/**
 * The request sent and answered with a success. A refusal of `stream_options` is asked again
 * without it; a refusal of `tools` (llama-server without `--jinja`), with the tools as text.
 */
const open = (
  c: Client,
  request: ChatRequest,
  auth: string | undefined
): Effect.Effect<HttpClientResponse.HttpClientResponse, GenerationError | Busy> =>
  Effect.gen(function*() {
    if (request.newTurn === true) yield* turnBegins(c)
    const withUsage = yield* Ref.get(c.learned.askForUsage)
    const asText = (yield* Ref.get(c.learned.textTools)) !== undefined
    const progress = yield* knownLlamaCpp(c)
    const response = yield* send(
      c,
      chatRequest(c, request, auth, { withUsage, asText, progress }),
      // a server out of reach is asked about itself again once it answers
      Ref.set(c.learned.lost, true)
    )
    // the request went out first: what the server says about itself is asked now, beside the answer
    yield* Ref.set(c.learned.reached, true)
    yield* askServer(c)
    const type = headerOf(response, "content-type") ?? ""
    if (response.status < 300 && !/html/i.test(type)) {
      yield* answeredAgain(c)
      return response
    }
    const body = yield* errorBody(response, c.watchdogMs)
    // a refusal of this request (not a load, a key, a proxy) is an answer too: the server is back
    if (!failedStatus(response.status)) yield* answeredAgain(c)
    if (looksNotOpenAi(response.status, type, body) && response.status !== 502 && response.status !== 503) {
      return yield* Effect.fail(fail("http", notOpenAiLine(c.baseUrl, type), `HTTP ${response.status}: ${body}`))
    }
    if (withUsage && (response.status === 400 || response.status === 422) && /stream_options/.test(body)) {
      yield* Ref.set(c.learned.askForUsage, false)
      return yield* open(c, request, auth)
    }
    if (!asText && request.tools.length > 0 && refusesTools(response.status, body)) {
      yield* Ref.set(c.learned.textTools, "jinja")
      return yield* open(c, request, auth)
    }
    const overflow = contextOverflow(body)
    if (overflow !== undefined) yield* learnOverflow(c, overflow)
    if (response.status === 503) yield* Ref.set(c.learned.lost, true)
    const error = httpError(c, { status: response.status, body, serverHeader: headerOf(response, "server") })
    return yield* Effect.fail(busyIfRetried(error, response.status, () => headerOf(response, "retry-after")))
  })

/** The answer's events: SSE, or one JSON body from a server that ignored `stream: true`. */
const answer = (
  c: Client,
  response: HttpClientResponse.HttpClientResponse,
  window: number
): Stream.Stream<ModelEvent, GenerationError> => {
  const reading: Reading = {
    begin: () =>
      new Completion(c.secrets.redact, (tool, usage) => cutCallLine(cutBy(usage, window), tool, c.settings.maxTokens)),
    maxAnswerBytes: c.settings.maxAnswerBytes,
    secrets: c.secrets,
    watchdogSeconds: c.watchdogSeconds,
    watchdogMs: c.watchdogMs,
    afterAnswer: afterAnswer(c),
    isLast: (data) => data.length <= 8 && data.trim() === "[DONE]"
  }
  return readAnswer(response, reading)
}

/** The window in force now: the configured one, unless the server serves fewer tokens. */
const windowNow = (c: Client): Effect.Effect<number> =>
  Effect.map(Ref.get(c.learned.served), (served) => effectiveWindow(c.settings.contextWindow, served?.tokens))

/** The answer, after the notice that the tools now go as text when it is news. */
const answerWithHint = (
  c: Client,
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<Stream.Stream<ModelEvent, GenerationError>> =>
  Effect.map(
    Effect.zip(takeTextToolsHint(c), windowNow(c)),
    ([hint, window]) =>
      hint === undefined ? answer(c, response, window) : Stream.concat(Stream.make(hint), answer(c, response, window))
  )

/** `ModelClient.stream`: the request opened (asked again while the server is busy), then its answer. */
const opening = (c: Client) =>
  Effect.fn("ModelClient.stream", { attributes: { model: c.model, url: c.baseUrl }, captureStackTrace: false })(
    function*(request: ChatRequest) {
      const auth = authorization(c)
      if (auth instanceof GenerationError) return yield* Effect.fail(auth)
      return withRetries(
        Effect.flatMap(open(c, request, auth), (response) => answerWithHint(c, response)),
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
    // the list may still be on its way (or, known from the cache, not asked yet)
    : Effect.zipRight(askServer(c), Deferred.await(c.learned.listing)).pipe(
      Effect.timeout(PROBE_TIMEOUT_MS),
      Effect.orElseSucceed(() => undefined),
      Effect.zipRight(Ref.get(c.learned.checked)),
      Effect.map((checked) => {
        if (checked?.missing !== true || checked.models === undefined) return error
        const ollama = kindOf(c.baseUrl, undefined) === "ollama" || looksLikeOllama(c.baseUrl, undefined, error.raw)
        return listedWithoutModel(c, checked.models, error, ollama)
      })
    )

/**
 * An answer whose usage is beyond the window in force: the server serves more than mm knows
 * (it was restarted larger, or answered for another slot), so what it serves is asked again.
 */
const usageBeyond = (c: Client) => (event: ModelEvent): Effect.Effect<void> =>
  event._tag !== "Completed" || event.usage === undefined
    ? Effect.void
    : Effect.flatMap(
      windowNow(c),
      (window) =>
        event.usage !== undefined && event.usage.promptTokens + event.usage.completionTokens > window &&
          c.settings.contextWindow === undefined
          ? Effect.zipRight(Ref.set(c.learned.lost, true), answeredAgain(c))
          : Effect.void
    )

/**
 * The answer's end waits a moment for this run's own word on the window (asked beside the
 * request), so that its usage is told against what the server serves now, not a cached guess.
 */
const afterHeard = (c: Client) => (event: ModelEvent): Effect.Effect<ModelEvent> =>
  event._tag === "Completed" ? Effect.as(heard(c), event) : Effect.succeed(event)

// ---------------------------------------------------------------------------------------
// The service

export const makeChatClient = Effect.gen(function*() {
  const wire = yield* makeWire
  const { baseUrl, secrets, settings } = wire
  const cache = yield* ServerCache
  const memo = yield* cache.read(baseUrl, settings.name)
  const c: Client = {
    ...wire,
    model: settings.name,
    apiKeyEnv: settings.apiKeyEnv,
    completionsUrl: `${baseUrl}/chat/completions`,
    learned: yield* makeLearned(memo),
    cache,
    // the background questions' own scope, closed after the finalizer below has waited for them
    scope: yield* Scope.fork(yield* Effect.scope, ExecutionStrategy.sequential)
  }
  if (memo !== undefined) yield* startFrom(c, memo)
  // a run that ends while the server is still being asked waits for the answer a moment, so
  // that the next run finds it in the cache
  yield* Effect.addFinalizer((exit) => Exit.isSuccess(exit) ? settledIfAnswering(c) : Effect.void)
  const stream = opening(c)
  const checked = check(c)
  return ModelClient.of({
    stream: (request) =>
      redactedStream(
        secrets,
        Stream.unwrap(stream(request)).pipe(Stream.mapEffect(afterHeard(c)), Stream.tap(usageBeyond(c)))
      ),
    probe: Effect.map(checked, (found) => found.answering || found.reached === true),
    models: models(c),
    check: checked,
    known: memo === undefined ? undefined : checkOfListing(c, { answered: true, list: memo.list }),
    contextWindow: windowNow(c),
    freshWindow: freshWindow(c, windowNow(c)),
    settledWindow: Effect.zipRight(
      settled(c),
      Effect.flatMap(
        Ref.get(c.learned.checked),
        (checked) => checked?.loading === true ? Effect.succeed(undefined) : windowNow(c)
      )
    ),
    vision: Effect.map(Ref.get(c.learned.served), (served) => served?.vision),
    toolsAsText: Effect.map(Ref.get(c.learned.textTools), (why) => why !== undefined),
    takeWarning: takeWarning(c),
    askServer: askServer(c),
    url: baseUrl,
    model: c.model,
    api: "chat"
  })
})
