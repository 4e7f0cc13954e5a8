/**
 * A request over the server's window, recovered once: when the history is what overflows, it
 * is compacted as `/compact` does (archive and all) and the model asked again; when the
 * question alone overflows, or it still does after compaction, one line says both numbers
 * and what to do. Never a loop: at most one compaction and one more request per turn.
 */
import * as Effect from "effect/Effect"

import { GenerationError } from "../domain/Errors"
import { withSystem } from "../domain/Session"
import { contextOverflow, tokensFigure } from "../model/Failures"
import { compact } from "./AutoCompact"
import type { Deps } from "./Deps"
import type { TurnState } from "./TurnState"

const FIX = "shorten the question, or start the server with a larger context window (llama-server -c)"

/** The line for a question that does not fit the window even alone. */
const questionTooLong = (prompt: number | undefined, window: number): string =>
  prompt === undefined
    ? `the question does not fit the server's window of ${tokensFigure(window)} tokens — ${FIX}`
    : `the question is ${tokensFigure(prompt)} tokens; the server's window is ${tokensFigure(window)} — ${FIX}`

/** The line for a turn whose own tool results fill the window, after the history was compacted. */
const turnTooLong = (prompt: number | undefined, window: number): string =>
  `this turn's tool results fill the server's window (${
    prompt === undefined ? "" : `${tokensFigure(prompt)} tokens of `
  }${tokensFigure(window)}) — ask for less at once, or start the server with a larger context window`

const refused = (error: GenerationError, message: string): GenerationError =>
  new GenerationError({ reason: "context-overflow", message, raw: error.raw })

/**
 * After an overflow: compacts the history once and says so (the caller asks again), or fails
 * with the line that fits. `compacted` says whether this turn compacted already.
 */
export const recoverOverflow = Effect.fn("Agent.recoverOverflow")(function*(
  deps: Deps,
  state: TurnState,
  error: GenerationError,
  compacted: boolean
) {
  const overflow = contextOverflow(error.raw)
  const window = overflow?.window ?? (yield* deps.model.contextWindow)
  const prompt = overflow?.prompt
  const firstStep = state.added.length === 1
  const tooLong = firstStep ? questionTooLong(prompt, window) : turnTooLong(prompt, window)
  if (compacted) return yield* refused(error, tooLong)
  const turnSystem = state.base[0]?.role === "system" ? state.base[0].content ?? "" : undefined
  const done = yield* Effect.either(compact(deps, state.conversation, undefined, state.question, turnSystem))
  if (done._tag === "Left") {
    yield* state.emit({ _tag: "CompactionFailed", error: done.left })
    return yield* refused(error, tooLong)
  }
  if (done.right._tag === "Nothing") return yield* refused(error, tooLong)
  const { messages } = yield* state.conversation.snapshot
  state.previous = messages
  state.base = withSystem(messages, turnSystem ?? "")
  yield* state.emit({
    _tag: "Notice",
    about: "compaction",
    text: `the request (${prompt === undefined ? "" : `${tokensFigure(prompt)} tokens, `}over the server's window of ${
      tokensFigure(window)
    }) did not fit: history compacted — ${done.right.replaced} older message(s) replaced by a summary — asking again`
  })
  if (done.right.warning !== undefined) yield* state.emit({ _tag: "Notice", text: done.right.warning })
})
