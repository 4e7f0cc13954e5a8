import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

import type { GenerationError } from "../domain/Errors"
import type { ToolCall, WireMessage } from "../domain/Session"

/** A tool as the model is told about it; each adapter writes it in its API's shape. */
export interface ToolSpec {
  readonly name: string
  readonly description: string
  readonly parameters: Record<string, unknown>
}

/** What the banner says about the server. */
export interface ServerCheck {
  /** A model list came back (the one sign, before a completion, that an OpenAI-compatible server is there). */
  readonly answering: boolean
  /** Something answered over HTTP, though not with a model list. */
  readonly reached?: boolean
  /** The server answered `503` (llama-server loading its model): asked again in the background. */
  readonly loading?: boolean
  /** The line for a server that is not OpenAI-compatible (it answered HTML or other non-JSON). */
  readonly notOpenAi?: string
  /** The model ids listed by `GET {url}/models`; undefined when it did not list any. */
  readonly models: ReadonlyArray<string> | undefined
  /** The list is known and lacks `model.name` (never said of llama.cpp, which serves its one model under any name). */
  readonly missing: boolean
}

export interface ChatRequest {
  readonly messages: ReadonlyArray<WireMessage>
  readonly tools: ReadonlyArray<ToolSpec>
  /** The model to ask instead of the configured one (an editor's choice for its session). */
  readonly model?: string
  /**
   * The first request of a turn: a local server may have been restarted since the last one
   * (with another window), so the chat client asks what it serves again beside it.
   */
  readonly newTurn?: boolean
}

/** Which wire protocol the configured server speaks (`model.api`). */
export type ModelApi = "chat" | "responses" | "anthropic"

/**
 * What one answer used, in mm's words. `promptTokens` is the whole prompt as the window sees
 * it, whatever part of it came from the server's prompt cache.
 */
export interface Usage {
  readonly promptTokens: number
  readonly completionTokens: number
  /** Of `promptTokens`, how many the server read from its prompt cache (when it says). */
  readonly cachedTokens?: number
  /** Of `promptTokens`, how many the server wrote into its prompt cache (Anthropic says). */
  readonly cacheWriteTokens?: number
}

/**
 * Why an answer ended, in mm's words; each adapter maps its API's own (chat's
 * `finish_reason`, Anthropic's `stop_reason`, a Responses `status`).
 */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter"

/**
 * What only one API understands about an assistant message (Anthropic's signed thinking
 * blocks, a Responses reasoning item with its encrypted content): kept with the message as
 * the API sent it and given back only to the same API and model, never shown to another.
 */
export interface ProviderData {
  readonly api: Exclude<ModelApi, "chat">
  readonly model: string
  readonly items: ReadonlyArray<unknown>
}

/**
 * What one streamed completion yields: text as it arrives, then exactly one `Completed`
 * holding the whole assistant message (tool calls assembled from their deltas).
 */
export type ModelEvent =
  | { readonly _tag: "TextDelta"; readonly text: string }
  /**
   * Reasoning: chat's `reasoning_content` / `reasoning` deltas or a leading `<think>` block,
   * Anthropic's thinking, a Responses reasoning summary.
   */
  | { readonly _tag: "ReasoningDelta"; readonly text: string }
  /** The server was busy (or dropped the connection) before answering: mm waits, then asks again. */
  | { readonly _tag: "Retrying"; readonly text: string }
  /**
   * A line for the user about the server (said once); `textTools` when, from this answer on,
   * the tools go to this server as text and tool calls come back written in the reply.
   */
  | { readonly _tag: "Notice"; readonly text: string; readonly textTools?: boolean }
  /** The server is still reading the prompt (llama-server's `prompt_progress`): tokens read of all. */
  | { readonly _tag: "PromptProgress"; readonly processed: number; readonly total: number }
  | {
    readonly _tag: "Completed"
    readonly content: string
    /** The whole reasoning of this answer; "" when the model gave none. */
    readonly reasoning: string
    readonly toolCalls: ReadonlyArray<ToolCall>
    readonly finishReason: FinishReason
    readonly usage: Usage | undefined
    /**
     * Tool calls the length limit cut, their arguments incomplete, left out of `toolCalls` (the
     * complete ones before them kept): each with the line that says so.
     */
    readonly cutCalls?: ReadonlyArray<{ readonly name: string; readonly line: string }>
    /** What the API needs back with this message on the next request, when it is one that does. */
    readonly opaque?: ProviderData
  }

export interface ModelClientShape {
  /** One streamed answer to the request. Interrupting the stream aborts the request. */
  readonly stream: (request: ChatRequest) => Stream.Stream<ModelEvent, GenerationError>
  /** Whether the server answers at all (for the banner); never fails, bounded in time. */
  readonly probe: Effect.Effect<boolean>
  /** The model ids `GET {url}/models` lists; empty when the server does not answer. Never fails. */
  readonly models: Effect.Effect<ReadonlyArray<string>>
  /** `probe`, with the models the server lists and whether `model.name` is among them. */
  readonly check: Effect.Effect<ServerCheck>
  /**
   * What `check` found in a run of the last minutes, kept in the user's cache directory, without
   * asking the server; undefined when nothing was kept (or the cache is off).
   */
  readonly known: ServerCheck | undefined
  /**
   * The context window in force now, without waiting: `model.contextWindow`, or what the
   * server says it serves when that is smaller or nothing is configured (asked in the
   * background from start-up), else 32768; a hosted API's own default (Anthropic 200,000,
   * Responses 128,000) when nothing is configured.
   */
  readonly contextWindow: Effect.Effect<number>
  /**
   * The window once this run has heard the server itself on it (asking it now if nothing has
   * yet), whatever the cache said: what replaces the banner's first guess. The window in force
   * when the server gave no answer.
   */
  readonly freshWindow: Effect.Effect<number>
  /**
   * The window as the banner shows it: `contextWindow` once the server's first answer about it
   * has come (waited for a moment at most), or at once when the cache had one; undefined while
   * the server is still loading.
   */
  readonly settledWindow: Effect.Effect<number | undefined>
  /**
   * Whether the model takes images, as the server has said so far (`/props` `modalities.vision`,
   * Ollama `capabilities`), without waiting; undefined when it did not say.
   */
  readonly vision: Effect.Effect<boolean | undefined>
  /** Whether the tools go to this server as text (its template cannot take them, or it refused them). */
  readonly toolsAsText: Effect.Effect<boolean>
  /** The line about a context window smaller than it should be (with the fix): once, then undefined. */
  readonly takeWarning: Effect.Effect<string | undefined>
  /**
   * Starts asking the server about itself in the background, once, and returns at once: its
   * models and window, even when the cache knew them (what it kept is only a first guess).
   * Without it, the server is asked when the banner needs it or once the first request has gone out
   * (chat; and again at each turn to a local server, which may have been restarted).
   */
  readonly askServer: Effect.Effect<void>
  readonly url: string
  readonly model: string
  readonly api: ModelApi
}

export class ModelClient extends Context.Tag("mm/ModelClient")<ModelClient, ModelClientShape>() {}
