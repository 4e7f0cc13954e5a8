/**
 * The model client over OpenAI's Responses API (`model.api: responses`): `POST {url}/responses`
 * streamed and stateless (the whole conversation each time, nothing stored by the server),
 * asked again while the server is busy, its answer read by AnswerStream like every API's.
 * Written on @effect/platform's HttpClient rather than @effect/ai-openai so that the
 * watchdog, the answer cap, the redaction and the retries hold as for chat completions.
 */
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

import { GenerationError } from "../../domain/Errors"
import { errorBody, type Reading } from "../AnswerStream"
import { afterAttempts, fail, notOpenAiLine } from "../Failures"
import { checkOf, hostedClient, listModels } from "../HostedClient"
import { type ChatRequest, ModelClient, type ModelEvent } from "../ModelClient"
import { type Busy, withRetries } from "../Retry"
import { listedModels } from "../ServerWords"
import { cutBy, cutCallLine } from "../StopReason"
import { apiKey, headerOf, makeWire, readAnswer, send, streamedPost, type Wire } from "../Transport"
import { ResponsesAnswer } from "./ResponsesAnswer"
import { type Asked, refusal, refusesReasoning } from "./ResponsesFailures"
import { requestBody } from "./ResponsesRequest"

/** The window of a Responses model when model.contextWindow does not say (the smallest of OpenAI's current ones). */
export const RESPONSES_DEFAULT_WINDOW = 128_000

/** What the client's parts share. */
export interface Client extends Wire {
  readonly window: number
  /**
   * Whether `reasoning` and `include` are sent: dropped for the rest of the run once the model
   * refuses them (one without reasoning); `told` once the user was told so.
   */
  readonly reasoning: Ref.Ref<{ readonly send: boolean; readonly told: boolean }>
}

/** The `authorization` header's value (the key as a bearer token), or the failure of a variable that is not set. */
export const authorization = (c: Client): string | undefined | GenerationError => {
  const key = apiKey(c.settings.apiKeyEnv, c.headers)
  return typeof key === "string" ? `Bearer ${key}` : key
}

/** The request to `POST {url}/responses`, with or without the reasoning parameters. */
const responsesRequest = (
  c: Client,
  request: ChatRequest,
  auth: string | undefined,
  withReasoning: boolean
): HttpClientRequest.HttpClientRequest =>
  streamedPost(`${c.baseUrl}/responses`, c.headers.extra, requestBody(c.settings, request, withReasoning), auth)

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
    const response = yield* send(c, responsesRequest(c, request, auth, withReasoning))
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
  return readAnswer(response, reading)
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

/** `GET {url}/models` with the key when it is set. */
const listRequest = (c: Client): HttpClientRequest.HttpClientRequest => {
  const auth = authorization(c)
  return HttpClientRequest.setHeaders(
    HttpClientRequest.get(`${c.baseUrl}/models`),
    typeof auth === "string" ? { ...c.headers.extra, authorization: auth } : c.headers.extra
  )
}

export const makeResponsesClient = Effect.gen(function*() {
  const wire = yield* makeWire
  const { settings } = wire
  const c: Client = {
    ...wire,
    window: settings.contextWindow ?? RESPONSES_DEFAULT_WINDOW,
    reasoning: yield* Ref.make({ send: settings.thinking !== "off", told: settings.thinking === "off" })
  }
  const stream = opening(c)
  return ModelClient.of(hostedClient({
    api: "responses",
    settings,
    baseUrl: c.baseUrl,
    secrets: c.secrets,
    window: c.window,
    stream: (request) => Stream.unwrap(stream(request)),
    check: Effect.map(
      listModels(c.http, listRequest(c), listedModels),
      (found) => checkOf(found, (ids) => ids.includes(settings.name))
    )
  }))
})
