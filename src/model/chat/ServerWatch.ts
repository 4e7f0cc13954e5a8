/**
 * What the model client learns about its server, in the background from start-up and as it
 * answers: its model list (for the banner), the context window it serves and what its chat
 * template can take. What the cache kept is a first guess: every run asks the server again,
 * beside its first request, and an answer replaces the guess at once. A server still loading
 * its model (`503`) is asked again until it answers; one that was lost (unreachable, reset,
 * loading) and answers again is asked afresh at that moment, in place of any question still
 * pending from before (it may have been restarted with another window), and so is one whose
 * questions got no answer (a refused key, a proxy's 502, a timeout), which is never kept as
 * one. A local server whose window came from it is asked again at the first request of each
 * turn, since it may have been restarted in between with another window. The end of the answer
 * that found the server back waits a moment for what it says.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"

import { probeBody } from "../BodyRead"
import { looksNotOpenAi, notOpenAiLine, type Overflow } from "../Failures"
import type { ServerCheck } from "../ModelClient"
import type { ModelEvent } from "../ModelClient"
import { type Client, type Listing, probeHeaders } from "./ClientState"
import type { ServerMemo } from "./ServerCache"
import {
  checkOf,
  CONTEXT_PROBE_TIMEOUT_MS,
  contextWarning,
  failedStatus,
  modelIds,
  parseModelList,
  probeContext,
  probeOllamaLoaded,
  type ServedContext
} from "./ServerProbe"
import { textToolsHint } from "./TextToolMode"

/** How long the banner waits for what the server says about itself. */
export const PROBE_TIMEOUT_MS = 1200

/** How many times a server that answers `503` (loading its model) is asked again, in the background. */
const LOADING_TRIES = 60

/** How many probes that got no answer are followed by another once the server has answered a request. */
const UNANSWERED_TRIES = 5

/** What the server serves is known: the window, the warning when it is too small, its template's limits. */
const learn = (c: Client, found: ServedContext): Effect.Effect<void> =>
  Effect.all([
    Ref.set(c.learned.served, found),
    Ref.set(c.learned.warning, contextWarning(found, c.model, c.settings.contextWindow)),
    // a template that takes tools now (the cache said otherwise, or the server was restarted) gets them again
    Ref.update(c.learned.textTools, (why) =>
      found.noToolTemplate === true ? why ?? "template" : why === "template" ? undefined : why)
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
        Effect.map(probeBody(response), (text): Listing => {
          if (response.status === 503) return { answered: true, list: undefined, loading: true }
          const type = typeof response.headers["content-type"] === "string" ? response.headers["content-type"] : ""
          // a refused key or a proxy's failure says nothing of the models
          const failed = failedStatus(response.status) ? { failed: true } : {}
          if (looksNotOpenAi(response.status, type, text)) {
            return { answered: true, list: undefined, notOpenAi: notOpenAiLine(c.baseUrl, type), ...failed }
          }
          if (failed.failed === true) return { answered: true, list: undefined, failed: true }
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
      if (found.answered && found.loading !== true && found.failed !== true) yield* Ref.set(c.learned.list, found.list)
      yield* Ref.set(c.learned.checked, checkOfListing(c, found))
      yield* Deferred.succeed(c.learned.listing, found)
      if (found.loading !== true || attempt >= LOADING_TRIES) return found
      // no answer about the window for a while: nothing waits for it
      yield* Deferred.succeed(c.learned.heard, undefined)
      yield* Ref.set(c.learned.lost, true)
      yield* Effect.sleep(Math.min(c.timing.baseMs * attempt, 5000))
    }
  })

/**
 * A probe that got no answer: what was known (the cache's guess, or the default) stays, and
 * the server is asked again once it has answered a request (a few times at most).
 */
const unanswered = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(
    Ref.updateAndGet(c.learned.failedProbes, (n) => n + 1),
    (n) => n <= UNANSWERED_TRIES ? Ref.set(c.learned.lost, true) : Effect.void
  )

/** The window the server serves, knowing its listing; kept for the next runs when it is an answer. */
const probeWindow = (c: Client, found: Listing): Effect.Effect<void> =>
  Effect.gen(function*() {
    const maxModelLen = found.list?.maxModelLen
    // vLLM says it in the list itself
    if (maxModelLen !== undefined) yield* learn(c, { kind: "vllm", tokens: maxModelLen, askAgainAfterAnswer: false })
    if (!found.answered || found.loading === true || found.failed === true) return yield* unanswered(c)
    const served = yield* probeContext(c.http, {
      baseUrl: c.baseUrl,
      model: c.model,
      list: found.list,
      headers: probeHeaders(c)
    })
    if (served === undefined) return yield* unanswered(c)
    yield* learn(c, served)
    yield* Deferred.succeed(c.learned.heard, undefined)
    yield* remember(c)
  })

/**
 * What the server says about itself: its model list, then the context window it serves.
 * The first probe runs when something needs it (or after the first request went out); later
 * ones after the server was lost and came back, or after one got no answer.
 */
const probeServer = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(Ref.getAndSet(c.learned.probing, true), (running) =>
    running
      ? Effect.void
      : Effect.gen(function*() {
        yield* Ref.set(c.learned.asked, true)
        yield* probeWindow(c, yield* listUntilLoaded(c))
      }).pipe(
        Effect.ensuring(Effect.all([
          Ref.set(c.learned.probing, false),
          Deferred.succeed(c.learned.heard, undefined),
          Deferred.succeed(c.learned.probed, undefined)
        ]))
      ))

/** Runs a probe in the background, its fiber kept (a stale one is interrupted), `after` once it is over. */
const startProbe = (c: Client, after: Effect.Effect<void> = Effect.void): Effect.Effect<void> =>
  Effect.flatMap(
    Effect.forkIn(Effect.ensuring(probeServer(c), after), c.scope),
    (fiber) => Ref.set(c.learned.probe, fiber)
  )

/**
 * Starts, once, asking the server about itself in the background — its models, then its
 * window — whatever the cache said, and returns at once.
 */
export const askServer = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(Ref.getAndSet(c.learned.asked, true), (asked) => asked ? Effect.void : startProbe(c))

/** What the cache said, known from the start: the window and the template's limits, a first guess. */
export const startFrom = (c: Client, memo: ServerMemo): Effect.Effect<void> => learn(c, memo.served)

/**
 * The server answers after it was lost (unreachable, reset, loading its model, or its last
 * questions got no answer): what it serves is asked now, once, in place of a probe still
 * running — its questions went out while the server was away, or it waits to ask a loading
 * server again — and the answer's end waits for it a moment (`heard`).
 */
const probeAgain = (c: Client): Effect.Effect<void> =>
  Effect.gen(function*() {
    const done = yield* Deferred.make<void>()
    yield* Ref.set(c.learned.reheard, done)
    const stale = yield* Ref.getAndSet(c.learned.probe, undefined)
    if (stale !== undefined) yield* Fiber.interrupt(stale)
    yield* startProbe(c, Deferred.succeed(done, undefined))
  })

/** Servers whose window is set when they start (`-c`, `--max-model-len`, a loaded model's context). */
const RESTARTABLE: ReadonlySet<string> = new Set(["llama.cpp", "vllm", "lmstudio", "ollama"])

/**
 * A turn begins: a local server whose window mm learnt from it may have been restarted since
 * with another one, and nothing in a successful answer would say so. It is taken as lost, so
 * that its answer asks what it serves again (`answeredAgain`), once per turn, beside the
 * request; the answer's end waits for that a moment. A configured window needs no asking.
 */
export const turnBegins = (c: Client): Effect.Effect<void> =>
  c.settings.contextWindow !== undefined
    ? Effect.void
    : Effect.flatMap(
      Effect.all([Ref.get(c.learned.asked), Ref.get(c.learned.served), Ref.get(c.learned.failedProbes)]),
      // a server whose questions keep going unanswered (the window came from an overflow) is not asked each turn
      ([asked, served, failed]) =>
        asked && served?.tokens !== undefined && RESTARTABLE.has(served.kind) && failed < UNANSWERED_TRIES
          ? Ref.set(c.learned.lost, true)
          : Effect.void
    )

/** The server answered: if it had been lost, what it serves is asked again at once. */
export const answeredAgain = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(Ref.getAndSet(c.learned.lost, false), (lost) => lost ? probeAgain(c) : Effect.void)

/** The probe started when the server answered again, if there was one: over, or waited for. */
const reheard = (c: Client): Effect.Effect<void> =>
  Effect.flatMap(Ref.get(c.learned.reheard), (done) => done === undefined ? Effect.void : Deferred.await(done))

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
  Effect.zipRight(askServer(c), Deferred.await(c.learned.listing)).pipe(
    Effect.map((found) => checkOfListing(c, found)),
    Effect.timeout(PROBE_TIMEOUT_MS),
    Effect.orElseSucceed(notAnswering),
    Effect.withSpan("ModelClient.probe", { captureStackTrace: false })
  )

/**
 * The first probe of the window, waited for a moment at most (the banner shows what it found);
 * not at all when the cache had an answer (the banner shows that, and the server is asked after).
 */
export const settled = (c: Client): Effect.Effect<void> =>
  c.learned.memo !== undefined
    ? Effect.void
    : Effect.zipRight(askServer(c), Deferred.await(c.learned.heard)).pipe(
      Effect.timeout(PROBE_TIMEOUT_MS),
      Effect.ignore
    )

/**
 * This run's own answer about the window, waited for a moment at most: the end of the first
 * answer waits for it, so that its usage is measured against the window the server serves
 * now, not the one the cache kept; and so does the end of an answer that found the server
 * back after a load or a lost connection, for the questions asked then.
 */
export const heard = (c: Client): Effect.Effect<void> =>
  Effect.ignore(Effect.timeout(Effect.zipRight(Deferred.await(c.learned.heard), reheard(c)), PROBE_TIMEOUT_MS))

/** The window once this run has asked the server itself (asked now if it was not), whatever the cache said. */
export const freshWindow = (c: Client, windowNow: Effect.Effect<number>): Effect.Effect<number> =>
  Effect.zipRight(Effect.zipRight(askServer(c), Deferred.await(c.learned.heard)), windowNow)

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
        ? Effect.interruptible(
          Effect.zipRight(Deferred.await(c.learned.probed), reheard(c)).pipe(Effect.timeout(PROBE_TIMEOUT_MS))
        ).pipe(Effect.ignore)
        : Effect.void
  )

/** `ModelClient.models`: the server's list, asked now. */
export const models = (c: Client): Effect.Effect<ReadonlyArray<string>> =>
  Effect.suspend(() => {
    const request = HttpClientRequest.setHeaders(HttpClientRequest.get(`${c.baseUrl}/models`), probeHeaders(c))
    return HttpClient.withScope(c.http).execute(request).pipe(
      Effect.flatMap((response) => response.status < 300 ? Effect.map(probeBody(response), parseJson) : Effect.void),
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
