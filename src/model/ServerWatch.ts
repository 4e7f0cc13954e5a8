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
import type { ServerMemo } from "./ServerCache"
import {
  checkOf,
  CONTEXT_PROBE_TIMEOUT_MS,
  contextWarning,
  modelIds,
  type ModelList,
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

/** What is known of the server now, kept for the next runs (in the background of this one). */
const remember = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.zip(Ref.get(c.learned.served), Ref.get(c.learned.list)),
    ([served, list]) => served === undefined ? Effect.void : c.cache.write(c.baseUrl, c.model, { list, served })
  )

/** The window an overflow reported: the server's own word on what it serves now. */
export const learnOverflow = (c: Client, overflow: Overflow): Effect.Effect<void> =>
  Effect.flatMap(Ref.get(c.learned.served), (served) =>
    Effect.zipRight(
      learn(c, {
        ...(served ?? { kind: "llama.cpp", askAgainAfterAnswer: false }),
        tokens: overflow.window,
        askAgainAfterAnswer: false
      }),
      remember(c)
    ))

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
      if (found.answered && found.loading !== true) yield* Ref.set(c.learned.list, found.list)
      yield* Ref.set(c.learned.checked, checkOfListing(c, found))
      yield* Deferred.succeed(c.learned.listing, found)
      if (found.loading !== true || attempt >= LOADING_TRIES) return found
      yield* Ref.set(c.learned.lost, true)
      yield* Effect.sleep(Math.min(c.timing.baseMs * attempt, 5000))
    }
  })

/** The window the server serves, knowing its listing; kept for the next runs. */
const probeWindow = (c: Client, found: Listing): Effect.Effect<void> =>
  Effect.gen(function*() {
    const maxModelLen = found.list?.maxModelLen
    // vLLM says it in the list itself
    if (maxModelLen !== undefined) yield* learn(c, { kind: "vllm", tokens: maxModelLen, askAgainAfterAnswer: false })
    if (!found.answered || found.loading === true) return
    const served = yield* probeContext(c.http, {
      baseUrl: c.baseUrl,
      model: c.model,
      list: found.list,
      headers: probeHeaders(c)
    })
    yield* learn(c, served)
    yield* remember(c)
  })

/**
 * What the server says about itself: its model list, then the context window it serves.
 * The first probe runs when something needs it (or after the first request went out); later
 * ones after the server was lost and came back.
 */
export const probeServer = (c: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (yield* Ref.getAndSet(c.learned.probing, true)) return
    yield* Ref.set(c.learned.asked, true)
    yield* probeWindow(c, yield* listUntilLoaded(c))
  }).pipe(
    Effect.ensuring(
      Effect.zipRight(Ref.set(c.learned.probing, false), Deferred.succeed(c.learned.probed, undefined))
    )
  )

const sameStrings = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((item, i) => item === b[i])

/** Whether two listings say the same of the server (its models, their owners, vLLM's window). */
export const sameList = (a: ModelList | undefined, b: ModelList | undefined): boolean =>
  a === undefined || b === undefined
    ? a === b
    : sameStrings(a.ids, b.ids) && sameStrings(a.ownedBy, b.ownedBy) && a.maxModelLen === b.maxModelLen

/**
 * What the cache said, checked against the server's listing: a server that lists something
 * else now (another model, another kind) is asked its window again, and the cache rewritten.
 */
const confirmMemo = (c: Client, memo: ServerMemo): Effect.Effect<void> =>
  Effect.gen(function*() {
    const found = yield* listUntilLoaded(c)
    if (!found.answered || found.loading === true || sameList(found.list, memo.list)) return
    if (yield* Ref.getAndSet(c.learned.probing, true)) return
    yield* probeWindow(c, found).pipe(Effect.ensuring(Ref.set(c.learned.probing, false)))
  })

/**
 * Starts, once, asking the server about itself in the background: the whole probe when the
 * cache had nothing; with `confirm`, the listing alone when it had (for the banner's line and
 * to find out that the server changed). Returns at once.
 */
export const askServer = (c: Client, confirm: boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    const memo = c.learned.memo
    if (memo !== undefined && !confirm) return
    if (yield* Ref.getAndSet(c.learned.asked, true)) return
    yield* Effect.forkIn(memo === undefined ? probeServer(c) : confirmMemo(c, memo), c.scope)
  })

/** What the cache said, known from the start: the window and the template's limits, nothing to wait for. */
export const startFrom = (c: Client, memo: ServerMemo): Effect.Effect<void> =>
  Effect.zipRight(learn(c, memo.served), Deferred.succeed(c.learned.probed, undefined))

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
        (tokens) =>
          tokens === undefined
            ? Effect.void
            : Effect.zipRight(learn(c, { ...served, tokens, askAgainAfterAnswer: false }), remember(c))
      ),
      c.scope
    )
  })

/** `ModelClient.check`: what the start-up listing said, waited for a moment at most. */
export const check = (c: Client): Effect.Effect<ServerCheck> =>
  Effect.zipRight(askServer(c, true), Deferred.await(c.learned.listing)).pipe(
    Effect.map((found) => checkOfListing(c, found)),
    Effect.timeout(PROBE_TIMEOUT_MS),
    Effect.orElseSucceed(notAnswering),
    Effect.withSpan("ModelClient.probe", { captureStackTrace: false })
  )

/** The first probe of the window, waited for a moment at most (the banner shows what it found). */
export const settled = (c: Client): Effect.Effect<void> =>
  Effect.zipRight(askServer(c, false), Deferred.await(c.learned.probed)).pipe(
    Effect.timeout(PROBE_TIMEOUT_MS),
    Effect.ignore
  )

/**
 * At the end of a run: the questions about the server, waited for a moment at most, so that
 * what they learn is kept for the next run; only when the server is known to answer (it listed
 * its models, or answered a request). Interruptible, though it runs as a finalizer.
 */
export const settledIfAnswering = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.all([Ref.get(c.learned.asked), Ref.get(c.learned.checked), Ref.get(c.learned.reached)]),
    ([asked, checked, reached]) =>
      asked && (checked?.answering === true || reached)
        ? Effect.interruptible(Deferred.await(c.learned.probed).pipe(Effect.timeout(PROBE_TIMEOUT_MS))).pipe(
          Effect.ignore
        )
        : Effect.void
  )

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
