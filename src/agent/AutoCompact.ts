import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import { withSystem } from "../domain/Session"
import { preCompactHooks } from "../hooks/HookCalls"
import type { Conversation } from "../sessions/Conversation"
import { compactable, estimateTokens } from "./Compactor"
import type { Deps, Emit } from "./Deps"
import { gitConfineOf } from "./Environment"
import { systemPromptOf } from "./SystemPrompt"
import { fixedTokens, overThresholdLine, toolTokens } from "./WindowFit"

/** The question `/compact` records its failures under: a compaction the user asked for. */
export const MANUAL = "/compact"

/**
 * Older turns replaced by a summary. A failure is recorded in the session with `question`:
 * `/compact`, or the question of the turn it ran before. The file is written with the whole
 * system prompt a request would send now (instructions, skills, environment), never the bare
 * configured one a resumed conversation holds until its next turn: `system` when the turn has
 * built it already, else built here. `keepTurns` (default `compaction.keepTurns`): the recent
 * turns kept word for word.
 */
export const compact = Effect.fn("Agent.compact")(
  function*(
    deps: Deps,
    conversation: Conversation,
    hint: string | undefined,
    question: string,
    system?: string,
    keepTurns: number = deps.config.compaction.keepTurns
  ) {
    const before = yield* conversation.snapshot
    // the user's PreCompact hooks run only when there is something to compact; their lines are told with the result
    const hookLines = compactable(before.messages, keepTurns)
      ? yield* preCompactHooks(deps.hooks, conversation, question === MANUAL ? "manual" : "auto", hint)
      : []
    const result = yield* deps.compactor.compact(before.messages, { keepTurns, hint })
    if (result._tag === "Nothing") return result
    const prompt = system ??
      (yield* systemPromptOf(deps.config, deps.tools, conversation.cwd, gitConfineOf(deps.sandbox, conversation.cwd)))
        .text
    const messages = withSystem(result.messages, prompt)
    // the turns the summary replaces: after the system prompt, the first `replaced` messages
    const rest = before.messages[0]?.role === "system" ? before.messages.slice(1) : before.messages
    const saved = yield* conversation.compacted(messages, rest.slice(0, result.replaced))
    const warning = [...hookLines, ...(saved === undefined ? [] : [saved])].join("\n") || undefined
    yield* Ref.set(conversation.usage, undefined)
    // the next turn runs the SessionStart hooks with source "compact"
    deps.hooks.compacted(yield* conversation.id)
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

/**
 * The tokens the next request would hold with `question`: as the server last counted them, else
 * estimated; and whether the server counted them.
 */
const historyTokens = Effect.fn("Agent.historyTokens")(function*(conversation: Conversation, question: string) {
  const usage = yield* Ref.get(conversation.usage)
  const { messages } = yield* conversation.snapshot
  const extra = Math.ceil(question.length / 4)
  return usage !== undefined
    ? { tokens: usage.promptTokens + usage.completionTokens + extra, counted: true }
    : { tokens: estimateTokens(messages) + extra, counted: false }
})

/** Said once per run: the key in `shownWarnings`. */
const OVER_THRESHOLD = "compaction-over-threshold"

/**
 * After an automatic compaction, the request it leaves (with mm's tools and the question),
 * estimated — in the server's tokens when it had counted the history before — and the line
 * when that is still over `limit`, once per run: every turn would compact again, and answers
 * would be cut short.
 */
const sayStillOver = Effect.fn("Agent.sayStillOver")(function*(
  deps: Deps,
  emit: Emit,
  counts: { readonly before: number; readonly counted: boolean; readonly question: string; readonly system: string },
  compacted: { readonly tokensBefore: number; readonly tokensAfter: number },
  limit: number
) {
  if (deps.shownWarnings.has(OVER_THRESHOLD)) return
  const extra = Math.ceil(counts.question.length / 4) + toolTokens(deps.tools.specs)
  const scale = counts.counted ? counts.before / (compacted.tokensBefore + extra) : 1
  const after = Math.round((compacted.tokensAfter + extra) * scale)
  if (after <= limit) return
  deps.shownWarnings.add(OVER_THRESHOLD)
  const fixed = Math.round(fixedTokens(counts.system, deps.tools.specs) * scale)
  yield* emit({
    _tag: "Notice",
    text: overThresholdLine(after, fixed, limit, yield* deps.model.contextWindow, deps.model.api)
  })
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
    const { counted, tokens } = yield* historyTokens(conversation, question)
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
    yield* sayStillOver(deps, emit, { before: tokens, counted, question, system }, done.right, limit)
  }
)
