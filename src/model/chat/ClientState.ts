/** What the model client's parts share: its settings, ready to use, and what it learns while it runs. */
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import type * as Scope from "effect/Scope"

import type { AgentConfig } from "../../config/Config"
import type { GenerationError } from "../../domain/Errors"
import type { ServerCheck } from "../ModelClient"
import { apiKey, type Wire } from "../Transport"
import type { ServerCacheShape, ServerMemo } from "./ServerCache"
import type { ModelList, ServedContext } from "./ServerProbe"

export type ModelSettings = AgentConfig["model"]

/** What `GET {url}/models` said; `answered` is false when nothing answered in time. */
export interface Listing {
  readonly answered: boolean
  readonly list: ModelList | undefined
  /** It answered 503 (llama-server loading its model). */
  readonly loading?: boolean
  /** It answered something that is not JSON: the line saying so. */
  readonly notOpenAi?: string
  /** What answered said nothing of the models (a refused key, a proxy's 502…): nothing to keep. */
  readonly failed?: boolean
}

/** Why the tools go as text to this server: its template cannot take them, or it refused the parameter. */
type TextToolsWhy = "template" | "jinja"

/** What the client learns while it runs. */
export interface Learned {
  /** Dropped for good if the server refuses it (a few strict servers reject unknown fields). */
  readonly askForUsage: Ref.Ref<boolean>
  /** The first listing, whatever it said (the banner waits for it a moment). */
  readonly listing: Deferred.Deferred<Listing>
  readonly checked: Ref.Ref<ServerCheck | undefined>
  readonly served: Ref.Ref<ServedContext | undefined>
  /**
   * This run's first probe has its answer about the window, or has none (it failed, or the
   * server is loading its model): the banner without a cache, and the first answer's end, wait
   * for it a moment.
   */
  readonly heard: Deferred.Deferred<void>
  /** This run's first probe is over, what it learnt kept: the end of a run waits for it a moment. */
  readonly probed: Deferred.Deferred<void>
  /** The line about a too small context window, and whether it was handed out yet. */
  readonly warning: Ref.Ref<string | undefined>
  readonly warned: Ref.Ref<boolean>
  /** Whether Ollama was asked again for the context once it had loaded the model. */
  readonly askedAgain: Ref.Ref<boolean>
  /** Set when the tools go to this server as text; `hinted` once the user was told. */
  readonly textTools: Ref.Ref<TextToolsWhy | undefined>
  readonly hinted: Ref.Ref<boolean>
  /** The server was lost (unreachable, or loading): once it answers again, its window is asked again. */
  readonly lost: Ref.Ref<boolean>
  /** How many probes got no answer: after a few, a server that answers requests is not asked again. */
  readonly failedProbes: Ref.Ref<number>
  /** A probe is running: another is not started. */
  readonly probing: Ref.Ref<boolean>
  /** The fiber of the probe running in the background, if one is: a stale one is interrupted. */
  readonly probe: Ref.Ref<Fiber.RuntimeFiber<void> | undefined>
  /**
   * Done when the probe started after the server answered again (after a load, a lost
   * connection, a question that got no answer) is over: the end of the answer that started
   * it, and the end of the run, wait for it a moment.
   */
  readonly reheard: Ref.Ref<Deferred.Deferred<void> | undefined>
  /** The server was asked about itself (or is being asked) in this run: not again unless it was lost. */
  readonly asked: Ref.Ref<boolean>
  /** A chat request was answered (whatever the status): the server is there. */
  readonly reached: Ref.Ref<boolean>
  /** The model list of the last listing, kept in the cache with the window. */
  readonly list: Ref.Ref<ModelList | undefined>
  /** What the cache said at start-up (a first guess, asked again); undefined when it had nothing fresh. */
  readonly memo: ServerMemo | undefined
}

export const makeLearned = (memo: ServerMemo | undefined): Effect.Effect<Learned> =>
  Effect.all({
    askForUsage: Ref.make(true),
    listing: Deferred.make<Listing>(),
    checked: Ref.make<ServerCheck | undefined>(undefined),
    served: Ref.make<ServedContext | undefined>(undefined),
    heard: Deferred.make<void>(),
    probed: Deferred.make<void>(),
    warning: Ref.make<string | undefined>(undefined),
    warned: Ref.make(false),
    askedAgain: Ref.make(false),
    textTools: Ref.make<TextToolsWhy | undefined>(undefined),
    hinted: Ref.make(false),
    lost: Ref.make(false),
    failedProbes: Ref.make(0),
    probing: Ref.make(false),
    probe: Ref.make<Fiber.RuntimeFiber<void> | undefined>(undefined),
    reheard: Ref.make<Deferred.Deferred<void> | undefined>(undefined),
    asked: Ref.make(false),
    reached: Ref.make(false),
    list: Ref.make<ModelList | undefined>(memo?.list),
    memo: Effect.succeed(memo)
  })

/** Everything the client's parts share: its settings, ready to use, and what it has learned. */
export interface Client extends Wire {
  readonly model: string
  readonly apiKeyEnv: string | undefined
  readonly completionsUrl: string
  readonly learned: Learned
  /** Where what the server said is kept between runs. */
  readonly cache: ServerCacheShape
  /** The layer's scope: the background probes run in it. */
  readonly scope: Scope.Scope
}

/** The `authorization` header's value (the key as a bearer token), or the failure of a variable that is not set. */
export const authorization = (c: Client): string | undefined | GenerationError => {
  const key = apiKey(c.apiKeyEnv, c.headers)
  return typeof key === "string" ? `Bearer ${key}` : key
}

/** The headers of the questions about the server: the extra ones, and the key when there is one. */
export const probeHeaders = (c: Client): Readonly<Record<string, string>> => {
  const auth = authorization(c)
  return typeof auth === "string" ? { ...c.headers.extra, authorization: auth } : c.headers.extra
}
