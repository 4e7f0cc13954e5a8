/**
 * What the model client learns about its server, in the background from start-up and as it
 * answers: its model list (for the banner), the context window it serves and what its chat
 * template can take. A server still loading its model (`503`) is asked again until it answers;
 * one that was lost and answers again is asked again too (it may have been restarted smaller).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { type Client, type Listing, probeHeaders } from "./ClientState"
import { looksNotOpenAi, notOpenAiLine, type Overflow } from "./Failures"
import type { ModelEvent } from "./ModelClient"
import {
  checkOf,
  CONTEXT_PROBE_TIMEOUT_MS,
  contextWarning,
  modelIds,
  parseModelList,
  probeContext,
  probeOllamaLoaded,
  type ServedContext,
  type ServerCheck
} from "./ServerProbe"
import { textToolsHint } from "./TextToolMode"

/** How long the banner waits for what the server says about itself. */
export const PROBE_TIMEOUT_MS = 1200

/** How many times a server that answers `503` (loading its model) is asked again, in the background. */
export const LOADING_TRIES = 60

/** What the server serves is known: the window, the warning when it is too small, its template's limits. */
export const learn = (c: Client, found: ServedContext): Effect.Effect<void> =>
  Effect.all([
    Ref.set(c.learned.served, found),
    Ref.set(c.learned.warning, contextWarning(found, c.model, c.settings.contextWindow)),
    found.noToolTemplate === true
      ? Ref.update(c.learned.textTools, (why) => why ?? "template")
      : Effect.void
  ], { discard: true })

/** The window an overflow reported: the server's own word on what it serves now. */
export const learnOverflow = (c: Client, overflow: Overflow): Effect.Effect<void> =>
  Effect.flatMap(Ref.get(c.learned.served), (served) =>
    learn(c, {
      ...(served ?? { kind: "llama.cpp", askAgainAfterAnswer: false }),
      tokens: overflow.window,
      askAgainAfterAnswer: false
    }))

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** `GET {url}/models`: for the banner, for a missing model's failure, and vLLM's window. */
const listModels = (c: Client): Effect.Effect<Listing> =>
  HttpClient.withScope(c.http)
    .execute(HttpClientRequest.setHeaders(HttpClientRequest.get(`${c.baseUrl}/models`), probeHeaders(c)))
    .pipe(
      Effect.flatMap((response) =>
        Effect.map(response.text, (text): Listing => {
          if (response.status === 503) return { answered: true, list: undefined, loading: true }
          const type = typeof response.headers["content-type"] === "string" ? response.headers["content-type"] : ""
          if (looksNotOpenAi(response.status, type, text)) {
            return { answered: true, list: undefined, notOpenAi: notOpenAiLine(c.baseUrl, type) }
          }
          return {
            answered: true,
            list: response.status === 200 ? parseModelList(parseJson(text), c.model) : undefined
          }
        })
      ),
      Effect.scoped,
      Effect.timeout(CONTEXT_PROBE_TIMEOUT_MS),
      Effect.orElseSucceed((): Listing => ({ answered: false, list: undefined }))
    )

const notAnswering = (): ServerCheck => ({ answering: false, models: undefined, missing: false })

/** What the banner says of a listing. */
export const checkOfListing = (c: Client, found: Listing): ServerCheck => {
  if (!found.answered) return notAnswering()
  if (found.list !== undefined) return checkOf(c.baseUrl, c.model, found.list)
  return {
    ...notAnswering(),
    reached: true,
    ...(found.loading === true ? { loading: true } : {}),
    ...(found.notOpenAi !== undefined ? { notOpenAi: found.notOpenAi } : {})
  }
}

/** The listing, asked again while the server is loading its model. */
const listUntilLoaded = (c: Client): Effect.Effect<Listing> =>
  Effect.gen(function*() {
    for (let attempt = 1;; attempt++) {
      const found = yield* listModels(c)
      yield* Ref.set(c.learned.checked, checkOfListing(c, found))
      yield* Deferred.succeed(c.learned.listing, found)
      if (found.loading !== true || attempt >= LOADING_TRIES) return found
      yield* Ref.set(c.learned.lost, true)
      yield* Effect.sleep(Math.min(c.timing.baseMs * attempt, 5000))
    }
  })

/**
 * What the server says about itself: its model list, then the context window it serves.
 * The first probe runs from start-up; later ones after the server was lost and came back.
 */
export const probeServer = (c: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (yield* Ref.getAndSet(c.learned.probing, true)) return
    const { answered, list, loading } = yield* listUntilLoaded(c)
    const maxModelLen = list?.maxModelLen
    // vLLM says it in the list itself
    if (maxModelLen !== undefined) yield* learn(c, { kind: "vllm", tokens: maxModelLen, askAgainAfterAnswer: false })
    if (!answered || loading === true) return
    yield* learn(c, yield* probeContext(c.http, { baseUrl: c.baseUrl, model: c.model, list, headers: probeHeaders(c) }))
  }).pipe(
    Effect.ensuring(
      Effect.zipRight(Ref.set(c.learned.probing, false), Deferred.succeed(c.learned.probed, undefined))
    )
  )

/** The server answered: if it had been lost, what it serves is asked again in the background. */
export const answeredAgain = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.getAndSet(c.learned.lost, false),
    (lost) => lost ? Effect.asVoid(Effect.forkIn(probeServer(c), c.scope)) : Effect.void
  )

/** Ollama had not loaded the model at start-up: once it has answered, `/api/ps` knows the context. */
export const afterAnswer = (c: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    const served = yield* Ref.get(c.learned.served)
    if (served?.askAgainAfterAnswer !== true || (yield* Ref.getAndSet(c.learned.askedAgain, true))) return
    yield* Effect.forkIn(
      Effect.flatMap(
        probeOllamaLoaded(c.http, { baseUrl: c.baseUrl, model: c.model, headers: probeHeaders(c) }),
        (tokens) => tokens === undefined ? Effect.void : learn(c, { ...served, tokens, askAgainAfterAnswer: false })
      ),
      c.scope
    )
  })

/** `ModelClient.check`: what the start-up listing said, waited for a moment at most. */
export const check = (c: Client): Effect.Effect<ServerCheck> =>
  Deferred.await(c.learned.listing).pipe(
    Effect.map((found) => checkOfListing(c, found)),
    Effect.timeout(PROBE_TIMEOUT_MS),
    Effect.orElseSucceed(notAnswering),
    Effect.withSpan("ModelClient.probe", { captureStackTrace: false })
  )

/** The first probe of the window, waited for a moment at most (the banner shows what it found). */
export const settled = (c: Client): Effect.Effect<void> =>
  Deferred.await(c.learned.probed).pipe(Effect.timeout(PROBE_TIMEOUT_MS), Effect.ignore)

/** `ModelClient.models`: the server's list, asked now. */
export const models = (c: Client): Effect.Effect<ReadonlyArray<string>> =>
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
export const takeWarning = (c: Client): Effect.Effect<string | undefined> =>
  Effect.flatMap(Ref.get(c.learned.warning), (warning) =>
    warning === undefined
      ? Effect.succeed(undefined)
      : Ref.modify(c.learned.warned, (warned) => [warned ? undefined : warning, true]))

/** The notice that this server's tools go as text, handed out once. */
export const takeTextToolsHint = (c: Client): Effect.Effect<ModelEvent | undefined> =>
  Effect.flatMap(Ref.get(c.learned.textTools), (why) =>
    why === undefined
      ? Effect.succeed(undefined)
      : Ref.modify(c.learned.hinted, (hinted): [ModelEvent | undefined, boolean] => [
        hinted ? undefined : { _tag: "Notice", text: textToolsHint(why), textTools: true },
        true
      ]))
