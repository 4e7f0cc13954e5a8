import * as os from "node:os"

import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

import type { AgentConfig } from "../config/Config"
import { GenerationError } from "../domain/Errors"
import { type EditorBlock, type Message, titleOf, withSystem } from "../domain/Session"
import type { Conversation } from "../sessions/Conversation"
import { autoCompact } from "./AutoCompact"
import { type Deps, type Emit, warn } from "./Deps"
import { assistantMessage, callModel, finishNotice } from "./ModelCall"
import { loadSkills, skillsPrompt } from "./Skills"
import { runBuiltinCall, runMcpCall } from "./ToolCalls"
import { isTerminal, type TurnEvent } from "./TurnEvent"
import type { TurnState } from "./TurnState"

/** The result of a tool call left unanswered when the user cancelled the turn. */
export const CANCELLED = "cancelled by the user"

/** The history after a cancel: the partial answer kept, every unanswered tool call closed. */
export const closeCancelled = (added: ReadonlyArray<Message>, partialText: string): Array<Message> => {
  const out: Array<Message> = [...added]
  if (partialText !== "") out.push({ role: "assistant", content: partialText })
  const answered = new Set(out.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
  for (const message of added) {
    for (const call of message.tool_calls ?? []) {
      if (!answered.has(call.id)) out.push({ role: "tool", tool_call_id: call.id, content: CANCELLED, failed: true })
    }
  }
  return out
}

type StopReason = Extract<TurnEvent, { _tag: "TurnFinished" }>["stopReason"]

/**
 * The turn as a stream of events. It runs in a fiber of its own that the stream's scope
 * interrupts, so a consumer that stops pulling cancels the turn.
 */
export const turn = (
  deps: Deps,
  conversation: Conversation,
  question: string,
  blocks?: ReadonlyArray<EditorBlock>
): Stream.Stream<TurnEvent> =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const queue = yield* Queue.unbounded<TurnEvent>()
      const pulls = yield* SubscriptionRef.make(0)
      let emitted = 0
      const emit = (event: TurnEvent) =>
        Effect.suspend(() => {
          emitted++
          return Queue.offer(queue, event)
        })
      // The consumer pulls the next event only once it has handled the previous one, so
      // a pull beyond the last event emitted means all of them are on the user's screen.
      const shown = Effect.suspend(() => {
        const wanted = emitted + 1
        return pulls.changes.pipe(Stream.takeUntil((count) => count >= wanted), Stream.runDrain)
      })
      yield* Effect.forkScoped(
        runTurn(deps, conversation, { question, blocks }, emit, shown).pipe(
          Effect.catchAllDefect((defect) =>
            emit({
              _tag: "TurnFailed",
              error: new GenerationError({
                reason: "malformed",
                message: `internal error: ${String(defect)}`,
                raw: String(defect)
              })
            })
          )
        )
      )
      return Stream.repeatEffect(Effect.zipRight(SubscriptionRef.update(pulls, (n) => n + 1), Queue.take(queue))).pipe(
        Stream.takeUntil(isTerminal)
      )
    })
  )

/** The question of a turn, with the blocks an editor sent for it (kept for a reload, never sent). */
interface Asked {
  readonly question: string
  readonly blocks: ReadonlyArray<EditorBlock> | undefined
}

const runTurn = Effect.fn("Agent.runTurn")(function*(
  deps: Deps,
  conversation: Conversation,
  asked: Asked,
  emit: Emit,
  shown: Effect.Effect<void>
) {
  const state = yield* prepareTurn(deps, conversation, asked, emit, shown)
  const outcome = yield* runSteps(deps, state).pipe(
    Effect.onInterrupt(() =>
      Effect.flatMap(Ref.get(state.partial), (text) => commit(state, closeCancelled(state.added, text), false))
    ),
    Effect.either
  )
  yield* endTurn(deps, state, outcome)
})

/**
 * What comes before the first model call: the warnings not shown yet, compaction when the
 * history is near the window, the system prompt with the skills, the turn's MCP tools.
 */
const prepareTurn = Effect.fn("Agent.prepareTurn")(function*(
  deps: Deps,
  conversation: Conversation,
  { blocks, question }: Asked,
  emit: Emit,
  shown: Effect.Effect<void>
) {
  yield* warn(emit, yield* conversation.ensureFile)
  yield* warn(emit, yield* deps.model.takeWarning)
  yield* autoCompact(deps, conversation, question, emit)
  const { system, warnings } = yield* loadSystemPrompt(deps.config, conversation.cwd)
  for (const warning of warnings) {
    if (deps.shownWarnings.has(warning)) continue
    deps.shownWarnings.add(warning)
    yield* emit({ _tag: "Notice", text: warning })
  }

  const mcpTools = yield* deps.mcp.forTurn(conversation)
  for (const notice of mcpTools.notices) yield* emit({ _tag: "Notice", text: notice })

  const before = yield* conversation.snapshot
  const state: TurnState = {
    conversation,
    question,
    emit,
    shown,
    mcpTools,
    turnNumber: before.turns + 1,
    base: withSystem(before.messages, system),
    added: [{ role: "user", content: question, ...(blocks === undefined ? {} : { blocks }) }],
    partial: yield* Ref.make("")
  }
  return state
})

const loadSystemPrompt = (config: AgentConfig, cwd: string) =>
  Effect.map(loadSkills(config.skills.dirs, cwd, os.homedir()), ({ skills, warnings }) => ({
    system: [config.system, skillsPrompt(skills)].filter((part) => part !== "").join("\n\n"),
    warnings
  }))

/** Model calls and their tool calls, until an answer without tool calls or `maxSteps` calls. */
const runSteps = Effect.fn("Agent.runSteps")(function*(deps: Deps, state: TurnState) {
  for (let step = 1; step <= deps.config.maxSteps; step++) {
    const completed = yield* callModel(deps, state)
    const calls = completed.toolCalls
    state.added.push(assistantMessage(completed))
    yield* Ref.set(state.partial, "")
    if (calls.length === 0) {
      const said = finishNotice(completed.finishReason, completed.content)
      if (said !== undefined) yield* state.emit({ _tag: "Notice", text: said })
      return completed.finishReason === "length" ? ("max_tokens" as const) : ("end_turn" as const)
    }
    for (const call of calls) {
      const mcpTool = state.mcpTools.find(call.function.name)
      if (mcpTool !== undefined) yield* runMcpCall(deps, state, call, mcpTool)
      else yield* runBuiltinCall(deps, state, call)
    }
  }
  return "max_steps" as const
})

/** The session with this turn's messages after the history it started from; a completed turn counts. */
const commit = (state: TurnState, messages: ReadonlyArray<Message>, completed: boolean) =>
  state.conversation.update((session) => ({
    ...session,
    messages: [...state.base, ...messages],
    turns: completed ? session.turns + 1 : session.turns,
    title: session.title === "" ? titleOf(state.question) : session.title
  }))

/**
 * A failed turn leaves the history as it was and keeps its error beside the conversation;
 * a finished one is committed.
 */
const endTurn = Effect.fn("Agent.endTurn")(function*(
  deps: Deps,
  state: TurnState,
  outcome: Either.Either<StopReason, GenerationError>
) {
  const { conversation, emit, question } = state
  if (outcome._tag === "Left") {
    const error = outcome.left
    yield* warn(emit, yield* conversation.record({ kind: "generation", line: error.message, raw: error.raw, question }))
    yield* emit({ _tag: "TurnFailed", error })
    return
  }
  yield* warn(emit, yield* commit(state, state.added, true))
  if (outcome.right === "max_steps") {
    yield* emit({
      _tag: "Notice",
      text: `stopped after ${deps.config.maxSteps} model calls in one turn (maxSteps); ask again to let it go on`
    })
  }
  yield* emit({ _tag: "TurnFinished", stopReason: outcome.right })
})
