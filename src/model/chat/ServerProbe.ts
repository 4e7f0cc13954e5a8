/**
 * What a model server says about itself: the models it lists and the context window it
 * really serves. Each server tells it its own way (docs/reference/model-servers.md):
 * vLLM `max_model_len` in `/v1/models`, llama.cpp `GET /props`, Ollama `/api/ps` and
 * `POST /api/show`, LM Studio `/api/v0/models/{model}` and `/api/v1/models`.
 * The parsers are pure; `probeContext` asks the server, in the background.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientRequest from "@effect/platform/HttpClientRequest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { isRecord } from "../../lib/Guards"
import { probeBody } from "../BodyRead"
import type { ServerCheck } from "../ModelClient"
import { listedModels, portOf } from "../ServerWords"

export type ServerKind = "ollama" | "llama.cpp" | "vllm" | "lmstudio" | "openai" | "unknown"

/** `GET {url}/models`, read. */
export interface ModelList {
  readonly ids: ReadonlyArray<string>
  readonly ownedBy: ReadonlyArray<string>
  /** vLLM's `max_model_len` of the configured model (or of the only model listed). */
  readonly maxModelLen: number | undefined
}

/** What the server says about its context window. */
export interface ServedContext {
  readonly kind: ServerKind
  /** Tokens one request may hold; undefined when the server did not say. */
  readonly tokens: number | undefined
  /** Ollama had not loaded the model yet: ask again once it has answered. */
  readonly askAgainAfterAnswer: boolean
  /** The server's chat template cannot take tools (llama.cpp `chat_template_caps`, Ollama `capabilities`). */
  readonly noToolTemplate?: boolean
  /** The model takes images (llama.cpp `modalities.vision`, Ollama `capabilities: ["vision"]`). */
  readonly vision?: boolean
}

/** What a server's capabilities say, where it says them. */
interface Capabilities {
  readonly noToolTemplate?: boolean
  readonly vision?: boolean
}

const positive = (u: unknown): number | undefined =>
  typeof u === "number" && Number.isFinite(u) && u > 0 ? Math.floor(u) : undefined

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** `qwen2.5-coder` and `qwen2.5-coder:latest` are the same Ollama model. */
const sameModel = (a: string, b: string): boolean => {
  const plain = (name: string) => name.trim().toLowerCase().replace(/:latest$/, "")
  return plain(a) === plain(b)
}

export const parseModelList = (body: unknown, model: string): ModelList | undefined => {
  if (!isRecord(body) || !Array.isArray(body.data)) return undefined
  const entries = body.data.filter(isRecord)
  const ids = entries.flatMap((entry) => (typeof entry.id === "string" ? [entry.id] : []))
  const ownedBy = entries.flatMap((entry) => (typeof entry.owned_by === "string" ? [entry.owned_by] : []))
  const mine = entries.find((entry) => typeof entry.id === "string" && sameModel(entry.id, model)) ??
    (entries.length === 1 ? entries[0] : undefined)
  return { ids, ownedBy, maxModelLen: positive(mine?.max_model_len) }
}

/** The ids of a `/models` answer (see `listedModels`); none when it is not a list. */
export const modelIds = (body: unknown): ReadonlyArray<string> => listedModels(body) ?? []

const hostOf = (url: string): string => {
  try {
    return new URL(url).hostname
  } catch {
    return ""
  }
}

/** Which server this is, from what `/models` said (`owned_by`), else from the usual ports. */
export const kindOf = (baseUrl: string, list: ModelList | undefined): ServerKind => {
  const owners = new Set(list?.ownedBy ?? [])
  if (list?.maxModelLen !== undefined || owners.has("vllm")) return "vllm"
  if (owners.has("llamacpp")) return "llama.cpp"
  if (owners.has("organization_owner")) return "lmstudio"
  if (hostOf(baseUrl) === "api.openai.com" || owners.has("openai") || owners.has("system")) return "openai"
  switch (portOf(baseUrl)) {
    case "11434":
      return "ollama"
    case "8080":
      return "llama.cpp"
    case "8000":
      return "vllm"
    case "1234":
      return "lmstudio"
    default:
      return owners.has("library") ? "ollama" : "unknown"
  }
}

export const checkOf = (baseUrl: string, model: string, list: ModelList | undefined): ServerCheck => {
  if (list === undefined || list.ids.length === 0) return { answering: true, models: undefined, missing: false }
  const kind = kindOf(baseUrl, list)
  const listed = list.ids.some((id) => sameModel(id, model))
  // llama-server answers under any model name when it serves a single model
  const missing = !listed && !(kind === "llama.cpp" && list.ids.length === 1)
  return { answering: true, models: list.ids, missing }
}

/** llama.cpp `GET /props`: the context of one slot (`-c` divided among `--parallel` slots). */
const llamaCppContext = (body: unknown): number | undefined => {
  if (!isRecord(body)) return undefined
  const settings = body.default_generation_settings
  return (isRecord(settings) ? positive(settings.n_ctx) : undefined) ?? positive(body.n_ctx)
}

/** llama.cpp `GET /props`: `chat_template_caps.supports_tools` and `modalities.vision`, where it says them. */
const llamaCppCapabilities = (body: unknown): Capabilities => {
  if (!isRecord(body)) return {}
  const caps = body.chat_template_caps
  const modalities = body.modalities
  return {
    ...(isRecord(caps) && caps.supports_tools === false ? { noToolTemplate: true } : {}),
    ...(isRecord(modalities) && typeof modalities.vision === "boolean" ? { vision: modalities.vision } : {})
  }
}

/** Ollama `POST /api/show`: `capabilities` (`completion`, `tools`, `vision`…), where it lists them. */
const ollamaCapabilities = (body: unknown): Capabilities => {
  if (!isRecord(body) || !Array.isArray(body.capabilities)) return {}
  const caps = new Set(body.capabilities.filter((c): c is string => typeof c === "string"))
  return { ...(caps.has("tools") ? {} : { noToolTemplate: true }), vision: caps.has("vision") }
}

/** Ollama `GET /api/ps`: the context the model was loaded with, when it is loaded. */
const ollamaRunningContext = (body: unknown, model: string): number | undefined => {
  if (!isRecord(body) || !Array.isArray(body.models)) return undefined
  for (const entry of body.models.filter(isRecord)) {
    const names = [entry.name, entry.model].filter((n): n is string => typeof n === "string")
    if (names.some((name) => sameModel(name, model))) return positive(entry.context_length)
  }
  return undefined
}

/** Ollama `POST /api/show`: `num_ctx` set in the model's parameters, and the length it was trained for. */
const ollamaShownContext = (
  body: unknown
): { readonly numCtx: number | undefined; readonly trained: number | undefined } => {
  if (!isRecord(body)) return { numCtx: undefined, trained: undefined }
  // `[ \t]*`, not `\s*`: under /m a `\s*` from each line start runs over every blank line after it, quadratic
  const params = typeof body.parameters === "string" ? /^[ \t]*num_ctx\s+(\d+)/m.exec(body.parameters) : null
  const info = isRecord(body.model_info) ? body.model_info : {}
  const arch = typeof info["general.architecture"] === "string" ? info["general.architecture"] : undefined
  const trained = (arch !== undefined ? positive(info[`${arch}.context_length`]) : undefined) ??
    positive(Object.entries(info).find(([key]) => key.endsWith(".context_length"))?.[1])
  return { numCtx: params === null ? undefined : positive(Number(params[1])), trained }
}

/** LM Studio `GET /api/v0/models/{model}`: the context it was loaded with. */
const lmStudioV0Context = (body: unknown): number | undefined =>
  isRecord(body) ? positive(body.loaded_context_length) : undefined

/** LM Studio `GET /api/v1/models` (0.4+): the context of the loaded instance of the model. */
const lmStudioV1Context = (body: unknown, model: string): number | undefined => {
  if (!isRecord(body) || !Array.isArray(body.models)) return undefined
  for (const entry of body.models.filter(isRecord)) {
    const instances = Array.isArray(entry.loaded_instances) ? entry.loaded_instances.filter(isRecord) : []
    const named = typeof entry.key === "string" && sameModel(entry.key, model)
    for (const instance of instances) {
      if (named || (typeof instance.id === "string" && sameModel(instance.id, model))) {
        const tokens = isRecord(instance.config) ? positive(instance.config.context_length) : undefined
        if (tokens !== undefined) return tokens
      }
    }
  }
  return undefined
}

/** Below this, an Ollama window is too small for an agent with tools, whatever agent.yaml says. */
const OLLAMA_SMALL = 16384

/** The one yellow line about a window smaller than it should be, with the fix; undefined when all is well. */
export const contextWarning = (
  served: ServedContext,
  model: string,
  configured: number | undefined
): string | undefined => {
  const tokens = served.tokens
  if (tokens === undefined) return undefined
  const smallerThanConfigured = configured !== undefined && tokens < configured
  if (served.kind === "ollama") {
    if (tokens >= OLLAMA_SMALL && !smallerThanConfigured) return undefined
    const wanted = Math.max(configured ?? 0, 32768)
    return `ollama serves ${model} with ${tokens} tokens of context — set OLLAMA_CONTEXT_LENGTH=${wanted} and restart ollama`
  }
  if (!smallerThanConfigured) return undefined
  const head =
    `the server serves ${model} with ${tokens} tokens of context, less than model.contextWindow (${configured})`
  switch (served.kind) {
    case "llama.cpp":
      return `${head} — restart llama-server with a larger -c (shared among its --parallel slots), or lower model.contextWindow`
    case "vllm":
      return `${head} — restart vllm with --max-model-len ${configured}, or lower model.contextWindow`
    case "lmstudio":
      return `${head} — load it with a longer context (lms load ${model} --context-length ${configured}), or lower model.contextWindow`
    default:
      return `${head} — mm compacts at that size; lower model.contextWindow to match`
  }
}

/** How long each question to the server may take; the probe runs in the background. */
export const CONTEXT_PROBE_TIMEOUT_MS = 5000

/**
 * A status that is no answer about what was asked: the key refused (401, 403), a proxy that
 * failed (407, 502, 504), a server loading its model or overloaded (503, 429), a timeout (408).
 * A 404 or a 400 is an answer: the server has no such endpoint.
 */
export const failedStatus = (status: number): boolean =>
  status === 401 || status === 403 || status === 407 || status === 408 || status === 429 || status >= 500

/** A question to the server: its JSON answer, or undefined when there is none. Never fails. */
type Ask = (request: HttpClientRequest.HttpClientRequest) => Effect.Effect<unknown>

/** Asks with these headers; `failed` is set when a question got no answer (see `failedStatus`). */
const askerOf = (
  client: HttpClient.HttpClient,
  headers: Readonly<Record<string, string>>,
  failed: Ref.Ref<boolean>
): Ask =>
(request) =>
  HttpClient.withScope(client)
    .execute(HttpClientRequest.setHeaders(request, headers))
    .pipe(
      Effect.flatMap((response) =>
        response.status === 200
          ? probeBody(response)
          : Effect.as(failedStatus(response.status) ? Ref.set(failed, true) : Effect.void, "")
      ),
      Effect.scoped,
      Effect.map(parseJson),
      Effect.timeout(CONTEXT_PROBE_TIMEOUT_MS),
      Effect.orElse(() => Effect.as(Ref.set(failed, true), undefined))
    )

/** The server's root: its API base without the `/v1`. */
const rootOf = (baseUrl: string): string => baseUrl.replace(/\/v1$/, "")

/** llama.cpp's window and template capabilities, from `GET /props`. */
const llamaCppWindow = (
  ask: Ask,
  root: string
): Effect.Effect<Capabilities & { readonly tokens: number | undefined }> =>
  Effect.map(ask(HttpClientRequest.get(`${root}/props`)), (body) => ({
    tokens: llamaCppContext(body),
    ...llamaCppCapabilities(body)
  }))

/**
 * Ollama's window: the loaded model's, else the `num_ctx` it was made with (within its trained
 * length). `answered` says whether the server spoke Ollama at all.
 */
const ollamaWindow = (
  ask: Ask,
  root: string,
  model: string
): Effect.Effect<Capabilities & { readonly tokens: number | undefined; readonly answered: boolean }> =>
  Effect.gen(function*() {
    const [running, shownBody] = yield* Effect.all(
      [
        Effect.map(ask(HttpClientRequest.get(`${root}/api/ps`)), (body) => ollamaRunningContext(body, model)),
        ask(HttpClientRequest.post(`${root}/api/show`).pipe(HttpClientRequest.bodyUnsafeJson({ model })))
      ],
      { concurrency: "unbounded" }
    )
    const shown = ollamaShownContext(shownBody)
    const caps = ollamaCapabilities(shownBody)
    if (running !== undefined) return { tokens: running, answered: true, ...caps }
    if (shown.numCtx !== undefined) {
      return {
        tokens: shown.trained !== undefined ? Math.min(shown.numCtx, shown.trained) : shown.numCtx,
        answered: true,
        ...caps
      }
    }
    // not loaded, and no num_ctx of its own: the server's default applies, known once it has loaded the model
    return { tokens: undefined, answered: shown.trained !== undefined, ...caps }
  })

/** LM Studio's window: its v0 API's, else its v1 API's (0.4+). */
const lmStudioWindow = (ask: Ask, root: string, model: string): Effect.Effect<number | undefined> =>
  Effect.map(
    Effect.all([
      ask(HttpClientRequest.get(`${root}/api/v0/models/${encodeURIComponent(model)}`)),
      ask(HttpClientRequest.get(`${root}/api/v1/models`))
    ], { concurrency: "unbounded" }),
    ([v0, v1]) => lmStudioV0Context(v0) ?? lmStudioV1Context(v1, model)
  )

/** A server of no known kind: whichever of llama.cpp, Ollama and LM Studio it turns out to be. */
const anyServerWindow = (ask: Ask, root: string, model: string): Effect.Effect<ServedContext> =>
  Effect.map(
    Effect.all([llamaCppWindow(ask, root), ollamaWindow(ask, root, model), lmStudioWindow(ask, root, model)], {
      concurrency: "unbounded"
    }),
    ([fromProps, fromOllama, fromLmStudio]): ServedContext => {
      if (fromProps.tokens !== undefined) return { kind: "llama.cpp", ...fromProps, askAgainAfterAnswer: false }
      if (fromOllama.answered) {
        const { answered: _, ...said } = fromOllama
        return { kind: "ollama", ...said, askAgainAfterAnswer: fromOllama.tokens === undefined }
      }
      if (fromLmStudio !== undefined) return { kind: "lmstudio", tokens: fromLmStudio, askAgainAfterAnswer: false }
      return { kind: "unknown", tokens: undefined, askAgainAfterAnswer: false }
    }
  )

/** What the server says it serves, asking it through `ask`, knowing its `/models` answer. */
const servedBy = (
  ask: Ask,
  options: { readonly baseUrl: string; readonly model: string; readonly list: ModelList | undefined }
): Effect.Effect<ServedContext> => {
  const { baseUrl, model, list } = options
  const kind = kindOf(baseUrl, list)
  const root = rootOf(baseUrl)
  switch (kind) {
    case "vllm":
      return Effect.succeed({ kind, tokens: list?.maxModelLen, askAgainAfterAnswer: false })
    case "openai":
      return Effect.succeed({ kind, tokens: undefined, askAgainAfterAnswer: false })
    case "llama.cpp":
      return Effect.map(llamaCppWindow(ask, root), (said) => ({ kind, ...said, askAgainAfterAnswer: false }))
    case "lmstudio":
      return Effect.map(lmStudioWindow(ask, root, model), (tokens) => ({ kind, tokens, askAgainAfterAnswer: false }))
    case "ollama":
      return Effect.map(
        ollamaWindow(ask, root, model),
        ({ answered: _, ...said }) => ({ kind, ...said, askAgainAfterAnswer: said.tokens === undefined })
      )
    case "unknown":
      return anyServerWindow(ask, root, model)
  }
}

/**
 * Asks the server what context it serves, knowing its `/models` answer. Never fails. An
 * endpoint the server does not have is an answer (it does not say); a question that got none
 * (a refused key, a proxy's 502, a 503 while loading, a timeout) is not: when no window was
 * found and one went so, the result is undefined, and what was known before stays.
 */
export const probeContext = (
  client: HttpClient.HttpClient,
  options: {
    readonly baseUrl: string
    readonly model: string
    readonly list: ModelList | undefined
    readonly headers: Readonly<Record<string, string>>
  }
): Effect.Effect<ServedContext | undefined> =>
  Effect.flatMap(Ref.make(false), (failed) =>
    Effect.flatMap(
      servedBy(askerOf(client, options.headers, failed), options),
      (served) => Effect.map(Ref.get(failed), (none) => none && served.tokens === undefined ? undefined : served)
    ))

/** Ollama again, once it has loaded the model for an answer: `/api/ps` now knows its context. */
export const probeOllamaLoaded = (
  client: HttpClient.HttpClient,
  options: { readonly baseUrl: string; readonly model: string; readonly headers: Readonly<Record<string, string>> }
): Effect.Effect<number | undefined> =>
  Effect.flatMap(Ref.make(false), (failed) =>
    Effect.map(
      askerOf(client, options.headers, failed)(HttpClientRequest.get(`${rootOf(options.baseUrl)}/api/ps`)),
      (body) => ollamaRunningContext(body, options.model)
    ))
