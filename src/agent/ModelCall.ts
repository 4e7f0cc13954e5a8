import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

import { GenerationError } from "../domain/Errors"
import type { Message, WireMessage } from "../domain/Session"
import { squashed } from "../lib/OneLine"
import type { ModelEvent } from "../model/ModelClient"
import { cutBy, lengthNotice } from "../model/StopReason"
import { HeldText, type MalformedCall, malformedTextCall, textToolCalls } from "../model/TextToolCalls"
import { specOf } from "../tools/Registry"
import { estimateTokens } from "./Compactor"
import { type Deps, warn } from "./Deps"
import { wireMessages } from "./Images"
import type { TurnEvent } from "./TurnEvent"
import type { TurnState } from "./TurnState"

export type Completed = Extract<ModelEvent, { _tag: "Completed" }> & {
  /**
   * What mm tells the model after this answer and its calls' results (a call it must write
   * again): the turn goes on so that it can, even when nothing ran.
   */
  readonly notes?: ReadonlyArray<string>
}

/** mm's notes to the model after an answer, as the history keeps them. */
export const notesAfter = (completed: Completed): Array<Message> =>
  (completed.notes ?? []).map((text) => ({ role: "user", content: `[mm] ${text}`, note: true }))

/** What the model is told of a call the length limit cut: it did not run, and may be written again. */
const cutNote = (name: string): string =>
  `your tool call "${
    squashed(name, 40)
  }" was cut by the output limit before its arguments were complete, so it did not run ` +
  `(the calls before it ran). Write it again; if its arguments are long, split the work into smaller calls.`

/** What the model is told of a call written as text that could not be read. */
const malformedNote = (bad: MalformedCall): string =>
  `your tool call could not be read, so it did not run: ${bad.why}. You wrote: ${squashed(bad.written, 300)} ` +
  `— write the call again with its JSON complete.`

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
    ...(chosenModel === undefined ? {} : { model: chosenModel }),
    // the question is all this turn has added so far: its first model call
    ...(state.added.length === 1 ? { newTurn: true } : {})
  }
  let completed: Completed | undefined
  // calls written as text come from local models over chat completions; a hosted API's are native
  let held = (config.model.textToolCalls && model.api === "chat") || (yield* model.toolsAsText)
    ? new HeldText()
    : undefined
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
  if (held !== undefined) completed = yield* readTextCalls(state, held, completed, request.tools, show)
  for (const cut of completed.cutCalls ?? []) yield* emit({ _tag: "Notice", text: cut.line })
  const cutNotes = (completed.cutCalls ?? []).map((cut) => cutNote(cut.name))
  if (cutNotes.length > 0) completed = { ...completed, notes: [...(completed.notes ?? []), ...cutNotes] }
  // the window the server serves may have become known while it answered
  yield* warn(emit, yield* model.takeWarning)
  const window = yield* model.contextWindow
  yield* emit(usageEvent(completed, request.messages, window))
  return completed
})

/**
 * The answer's text read for calls written as text: the calls it ends with, or a call that
 * cannot be read (said in one line, recorded with the session's errors, and told to the model,
 * never shown as the answer). What is held back and is neither is shown now.
 */
const readTextCalls = Effect.fn("Agent.readTextCalls")(function*(
  state: TurnState,
  held: HeldText,
  completed: Completed,
  tools: ReadonlyArray<{ readonly name: string }>,
  show: (text: string) => Effect.Effect<void>
) {
  if (completed.toolCalls.length > 0) {
    yield* show(held.flush())
    return completed
  }
  const written = textToolCalls(completed.content, new Set(tools.map((tool) => tool.name)))
  if (written !== undefined) {
    yield* show(held.flushBefore(written.content))
    return { ...completed, content: written.content, toolCalls: written.calls, finishReason: "tool_calls" as const }
  }
  const found = malformedTextCall(completed.content)
  if (found === undefined) {
    yield* show(held.flush())
    return completed
  }
  // a call the length limit cut is not JSON either: the limit is what to say
  const bad = completed.finishReason === "length"
    ? { ...found, why: "the output limit cut it (finish_reason: length)" }
    : found
  const content = completed.content.slice(0, bad.start).trimEnd()
  yield* show(held.flushBefore(content))
  const line = `the model wrote a tool call that cannot be read (${bad.why}): ${
    squashed(bad.written, 80)
  } — it is asked to write it again`
  yield* state.emit({ _tag: "Notice", text: line })
  yield* warn(
    state.emit,
    yield* state.conversation.record({ kind: "generation", line, raw: completed.content, question: state.question })
  )
  return { ...completed, content, notes: [...(completed.notes ?? []), malformedNote(bad)] }
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
