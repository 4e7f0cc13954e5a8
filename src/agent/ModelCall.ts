import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

import { GenerationError } from "../domain/Errors"
import type { Message, WireMessage } from "../domain/Session"
import type { ModelEvent } from "../model/ModelClient"
import { cutBy, lengthNotice } from "../model/StopReason"
import { HeldText, textToolCalls } from "../model/TextToolCalls"
import { specOf } from "../tools/Registry"
import { estimateTokens } from "./Compactor"
import { type Deps, warn } from "./Deps"
import { wireMessages } from "./Images"
import type { TurnEvent } from "./TurnEvent"
import type { TurnState } from "./TurnState"

export type Completed = Extract<ModelEvent, { _tag: "Completed" }>

/**
 * A line for an answer that ended otherwise than complete, or said nothing at all. `cut`
 * words a `finish_reason: length` (the output limit, or the window full).
 */
export const finishNotice = (
  finishReason: string,
  content: string,
  cut: () => string = () => lengthNotice("output", undefined)
): string | undefined => {
  if (finishReason === "length") return cut()
  if (content.trim() !== "") return undefined
  return finishReason === "content_filter"
    ? "the model server withheld the answer (finish_reason: content_filter)"
    : "the model returned an empty answer"
}

/** The `Usage` event of one model call: as the server reported it, else estimated from the text. */
const usageEvent = (
  completed: Extract<ModelEvent, { _tag: "Completed" }>,
  sent: ReadonlyArray<WireMessage>,
  contextWindow: number
): TurnEvent => {
  if (completed.usage !== undefined) {
    return { _tag: "Usage", ...completed.usage, contextWindow, estimated: false }
  }
  const written = completed.content.length +
    completed.toolCalls.reduce((n, call) => n + call.function.arguments.length, 0)
  return {
    _tag: "Usage",
    promptTokens: estimateTokens(sent),
    completionTokens: Math.ceil(written / 4),
    contextWindow,
    estimated: true
  }
}

/**
 * One model call: the request, its text and reasoning emitted as they stream, then the whole
 * answer (and its usage). With `model.textToolCalls`, text that may be a tool call written
 * as text is held back until the answer is complete, and becomes tool calls if it is one.
 */
export const callModel = Effect.fn("Agent.callModel")(function*(deps: Deps, state: TurnState) {
  const { config, model } = deps
  const { conversation, emit, partial } = state
  const { model: chosenModel } = yield* Ref.get(conversation.settings)
  const request = {
    messages: yield* wireMessages(deps.checkpoints, conversation.cwd, [...state.base, ...state.added]),
    tools: [...deps.tools.specs, ...state.mcpTools.tools().map(specOf)],
    ...(chosenModel === undefined ? {} : { model: chosenModel })
  }
  let completed: Completed | undefined
  let held = config.model.textToolCalls || (yield* model.toolsAsText) ? new HeldText() : undefined
  const show = (text: string) =>
    text === ""
      ? Effect.void
      : Ref.update(partial, (shown) => shown + text).pipe(Effect.zipRight(emit({ _tag: "TextDelta", text })))
  yield* model.stream(request).pipe(
    Stream.runForEach((event) => {
      if (event._tag === "TextDelta") return show(held === undefined ? event.text : held.push(event.text))
      if (event._tag === "ReasoningDelta") return emit({ _tag: "ReasoningDelta", text: event.text })
      if (event._tag === "PromptProgress") return emit(event)
      if (event._tag === "Retrying") return emit({ _tag: "Notice", text: event.text, quiet: true })
      if (event._tag === "Notice") {
        // from this answer on, the tools go as text: the reply may hold calls written out
        if (event.textTools === true) held ??= new HeldText()
        return emit({ _tag: "Notice", text: event.text })
      }
      completed = event
      if (event.usage !== undefined) return Ref.set(conversation.usage, event.usage)
      return Effect.void
    })
  )
  if (completed === undefined) {
    return yield* new GenerationError({
      reason: "stream-cut",
      message: "the model server ended the answer without completing it",
      raw: "stream ended without a Completed event"
    })
  }
  if (held !== undefined) {
    const written = completed.toolCalls.length === 0
      ? textToolCalls(completed.content, new Set(request.tools.map((tool) => tool.name)))
      : undefined
    if (written !== undefined) {
      completed = { ...completed, content: written.content, toolCalls: written.calls, finishReason: "tool_calls" }
      yield* show(held.flushBefore(written.content))
    } else yield* show(held.flush())
  }
  // the window the server serves may have become known while it answered
  yield* warn(emit, yield* model.takeWarning)
  const window = yield* model.contextWindow
  yield* emit(usageEvent(completed, request.messages, window))
  return completed
})

/** The line for an answer cut by `finish_reason: length`: the window full, or the output limit. */
export const lengthLine = (deps: Deps, completed: Completed): Effect.Effect<string> =>
  Effect.map(
    deps.model.contextWindow,
    (window) => lengthNotice(cutBy(completed.usage, window), deps.config.model.maxTokens)
  )

export const assistantMessage = (completed: Completed): Message => {
  const calls = completed.toolCalls
  return {
    role: "assistant",
    content: completed.content === "" && calls.length > 0 ? null : completed.content,
    ...(calls.length > 0 ? { tool_calls: calls } : {}),
    ...(completed.reasoning === "" ? {} : { reasoning: completed.reasoning }),
    ...(completed.opaque === undefined ? {} : { opaque: completed.opaque })
  }
}
