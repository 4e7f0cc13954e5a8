import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { withSystem } from "../domain/Session"
import type { Conversation } from "../sessions/Conversation"
import { estimateTokens } from "./Compactor"
import type { Deps, Emit } from "./Deps"
import { gitConfineOf } from "./Environment"
import { systemPromptOf } from "./SystemPrompt"

/**
 * Older turns replaced by a summary. A failure is recorded in the session with `question`:
 * `/compact`, or the question of the turn it ran before. The file is written with the whole
 * system prompt a request would send now (instructions, skills, environment), never the bare
 * configured one a resumed conversation holds until its next turn: `system` when the turn has
 * built it already, else built here.
 */
export const compact = Effect.fn("Agent.compact")(
  function*(deps: Deps, conversation: Conversation, hint: string | undefined, _question: string, system?: string) {
    const before = yield* conversation.snapshot
    const result = yield* deps.compactor.compact(before.messages, { keepTurns: deps.config.compaction.keepTurns, hint })
    if (result._tag === "Nothing") return result
    const prompt = system ??
      (yield* systemPromptOf(deps.config, deps.tools, conversation.cwd, gitConfineOf(deps.sandbox, conversation.cwd)))
        .text
    const messages = withSystem(result.messages, prompt)
    // the turns the summary replaces: after the system prompt, the first `replaced` messages
    const rest = before.messages[0]?.role === "system" ? before.messages.slice(1) : before.messages
    const warning = yield* conversation.compacted(messages, rest.slice(0, result.replaced))
    yield* Ref.set(conversation.usage, undefined)
    return {
      _tag: "Compacted",
      replaced: result.replaced,
      tokensBefore: estimateTokens(before.messages),
      tokensAfter: estimateTokens(messages),
      warning
    } as const
  },
  (effect, _deps, conversation, _hint, question) =>
    Effect.tapError(effect, (error) =>
      Effect.flatMap(
        conversation.record({ kind: "compaction", line: error.message, raw: error.raw, question }),
        () => Effect.void
      ))
)

/** The tokens the next request would hold with `question`: as the server last counted them, else estimated. */
const historyTokens = Effect.fn("Agent.historyTokens")(function*(conversation: Conversation, question: string) {
  const usage = yield* Ref.get(conversation.usage)
  const { messages } = yield* conversation.snapshot
  const extra = Math.ceil(question.length / 4)
  return usage !== undefined ? usage.promptTokens + usage.completionTokens + extra : estimateTokens(messages) + extra
})

/**
 * Compaction before a turn whose history (with the question) is over the threshold of the
 * window; `system` is the turn's system prompt, written with the shortened history.
 */
export const autoCompact = Effect.fn("Agent.autoCompact")(
  function*(deps: Deps, conversation: Conversation, question: string, emit: Emit, system: string) {
    const { config, model } = deps
    if (!config.compaction.auto) return
    const limit = Math.floor(config.compaction.threshold * (yield* model.contextWindow))
    const tokens = yield* historyTokens(conversation, question)
    if (tokens <= limit) return
    const done = yield* Effect.either(compact(deps, conversation, undefined, question, system))
    if (done._tag === "Left") return yield* emit({ _tag: "CompactionFailed", error: done.left })
    if (done.right._tag === "Nothing") return
    yield* emit({
      _tag: "Notice",
      about: "compaction",
      text:
        `history compacted: ${done.right.replaced} older message(s) replaced by a summary (about ${tokens} tokens, over ${limit})`
    })
    if (done.right.warning !== undefined) yield* emit({ _tag: "Notice", text: done.right.warning })
  }
)
