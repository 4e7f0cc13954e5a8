/**
 * A request over the server's window, recovered once: the history before the question is
 * compacted as `/compact` does (archive and all) — all of it when the turns `keepTurns` would
 * keep are too few to compact or too large to fit — and the model asked again. When the
 * question alone (with mm's own prompt and tools) is over, or it still is after compaction,
 * one line says what is too large and what to do. Never a loop: at most one compaction and
 * one more request per turn.
 */
import * as Effect from "effect/Effect"

import { GenerationError } from "../domain/Errors"
import { type Message, withSystem } from "../domain/Session"
import { contextOverflow, tokensFigure } from "../model/Failures"
import { compact } from "./AutoCompact"
import { estimateTokens, splitHistory } from "./Compactor"
import type { Deps } from "./Deps"
import type { TurnState } from "./TurnState"
import { overflowLine, questionAloneOver, sayTooSmall, type Shares, sharesOf, turnSystem, turnTools } from "./WindowFit"

const refused = (error: GenerationError, message: string): GenerationError =>
  new GenerationError({ reason: "context-overflow", message, raw: error.raw })

/**
 * How many recent turns compaction keeps after an overflow: `keepTurns`, unless that leaves
 * nothing to compact (a history of fewer turns) or keeps more than the window's threshold
 * holds; then none — the whole history becomes the summary, and the question follows it.
 */
export const keepAfterOverflow = (
  history: ReadonlyArray<Message>,
  keepTurns: number,
  shares: Shares,
  limit: number
): number => {
  if (keepTurns === 0) return 0
  const split = splitHistory(history, keepTurns)
  if (!split.older.some((m) => m.summary !== true)) return 0
  const kept = estimateTokens(split.kept) * shares.scale
  return shares.fixed + kept + shares.question + shares.turn > limit ? 0 : keepTurns
}

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
  const tools = turnTools(deps, state)
  const shares = sharesOf(state.base, state.added, tools, prompt)
  const tooLong = overflowLine(shares, window, deps.model.api)
  // compaction cannot help a question that does not fit even alone
  if (compacted || questionAloneOver(shares, window)) return yield* refused(error, tooLong)
  const system = turnSystem(state)
  const keepTurns = keepAfterOverflow(
    state.previous,
    deps.config.compaction.keepTurns,
    shares,
    Math.floor(deps.config.compaction.threshold * window)
  )
  const done = yield* Effect.either(compact(deps, state.conversation, undefined, state.question, system, keepTurns))
  if (done._tag === "Left") {
    yield* state.emit({ _tag: "CompactionFailed", error: done.left })
    return yield* refused(error, tooLong)
  }
  if (done.right._tag === "Nothing") return yield* refused(error, tooLong)
  const { messages } = yield* state.conversation.snapshot
  state.previous = messages
  state.base = withSystem(messages, system ?? "")
  yield* state.emit({
    _tag: "Notice",
    about: "compaction",
    text: `the request (${prompt === undefined ? "" : `${tokensFigure(prompt)} tokens, `}over the server's window of ${
      tokensFigure(window)
    }) did not fit: history compacted — ${done.right.replaced} older message(s) replaced by a summary — asking again`
  })
  if (done.right.warning !== undefined) yield* state.emit({ _tag: "Notice", text: done.right.warning })
  // the overflow told the window: one too small to work in is said before the answer
  yield* sayTooSmall(deps, state.emit, system ?? "", tools)
})
