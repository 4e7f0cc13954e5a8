/**
 * What the clients of the hosted APIs (Anthropic Messages, OpenAI Responses) share beside their
 * requests: the check of `GET {url}/models`, and the rest of the `ModelClient` port, which for
 * them is fixed (a window that model.contextWindow or the API's default gives, nothing asked of
 * the server in the background, the tools always sent as tools).
 */
import * as HttpClient from "@effect/platform/HttpClient"
import type * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

import type { AgentConfig } from "../config/Config"
import type { GenerationError } from "../domain/Errors"
import type { SecretRegistry } from "../lib/Secrets"
import { probeBody } from "./BodyRead"
import type { ServerCheck } from "./ModelClient"
import type { ChatRequest, ModelApi, ModelClientShape, ModelEvent } from "./ModelClient"
import { redactedStream } from "./Transport"

/** How long `GET {url}/models` may take before the API is said not to answer. */
const CHECK_TIMEOUT_MS = 5000

/**
 * The model list `request` (a `GET {url}/models` with the key) brings back, read by `idsOf`
 * (undefined when the body is no list), and whether anything answered at all. Never fails;
 * bounded in time and in the body read.
 */
export const listModels = (
  http: HttpClient.HttpClient,
  request: HttpClientRequest.HttpClientRequest,
  idsOf: (body: unknown) => ReadonlyArray<string> | undefined
): Effect.Effect<{ readonly reached: boolean; readonly ids?: ReadonlyArray<string> }> =>
  HttpClient.withScope(http).execute(request).pipe(
    Effect.flatMap((response) =>
      Effect.map(probeBody(response), (text) => {
        let ids: ReadonlyArray<string> | undefined
        try {
          ids = response.status < 300 ? idsOf(JSON.parse(text)) : undefined
        } catch {
          ids = undefined
        }
        return ids === undefined ? { reached: true } : { reached: true, ids }
      })
    ),
    Effect.scoped,
    Effect.timeout(CHECK_TIMEOUT_MS),
    Effect.catchAllCause(() => Effect.succeed({ reached: false })),
    Effect.withSpan("ModelClient.check", { captureStackTrace: false })
  )

/**
 * What a listing says of the configured model; `listed` tells whether the list has it.
 * `reached` is said only of an API that answered without a list.
 */
export const checkOf = (
  found: { readonly reached: boolean; readonly ids?: ReadonlyArray<string> },
  listed: (ids: ReadonlyArray<string>) => boolean
): ServerCheck =>
  found.ids !== undefined
    ? { answering: true, models: found.ids, missing: !listed(found.ids) }
    : { answering: false, models: undefined, missing: false, ...(found.reached ? { reached: true } : {}) }

/** A hosted API's client as the port shows it. */
export interface Hosted {
  readonly api: ModelApi
  readonly settings: AgentConfig["model"]
  readonly baseUrl: string
  readonly secrets: SecretRegistry
  /** The window in force for the whole run. */
  readonly window: number
  /** The answer to one request, asked again while the API is busy; redacted here. */
  readonly stream: (request: ChatRequest) => Stream.Stream<ModelEvent, GenerationError>
  /** What `GET {url}/models` says, asked each time it runs. */
  readonly check: Effect.Effect<ServerCheck>
}

export const hostedClient = (hosted: Hosted): ModelClientShape => {
  const { check, settings } = hosted
  const window = Effect.succeed(hosted.window)
  return {
    stream: (request) => redactedStream(hosted.secrets, hosted.stream(request)),
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
    url: hosted.baseUrl,
    model: settings.name,
    api: hosted.api
  }
}
