import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"
import * as Queue from "effect/Queue"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import * as SubscriptionRef from "effect/SubscriptionRef"

import { PLAN_MODE_PROMPT } from "../approvals/PlanMode"
import { AUTO_FALLBACK, autoFallsBack } from "../approvals/SessionSettings"
import { GenerationError } from "../domain/Errors"
import type { ImageInput } from "../domain/Images"
import type { SavedPlan } from "../domain/Plan"
import { type EditorBlock, type Message, type Session, titleOf, type ToolCall, withSystem } from "../domain/Session"
import { markFailed } from "../domain/Turns"
import { openingHooks, stopHookNote } from "../hooks/HookCalls"
import type { Conversation } from "../sessions/Conversation"
import { lastOutput, unfinishedResult } from "../sessions/Interrupted"
import { taskTool } from "../tools/Task"
import { autoCompact } from "./AutoCompact"
import { type Deps, type Emit, warn, warnOnce } from "./Deps"
import { gitConfineOf } from "./Environment"
import { questionMessage } from "./Images"
import { assistantMessage, callModel, type Completed, finishNotice, lengthLine, notesAfter } from "./ModelCall"
import { recoverOverflow } from "./Overflow"
import { runSubAgent } from "./SubAgents"
import { systemPromptOf } from "./SystemPrompt"
import { runCall } from "./ToolCalls"
import { isTerminal, type TurnEvent } from "./TurnEvent"
import { saveProgress } from "./TurnProgress"
import type { TurnState } from "./TurnState"
import { sayTooSmallFor } from "./WindowFit"

/** The result of a tool call left unanswered when the user cancelled the turn. */
export const CANCELLED = "cancelled by the user"

/** A cancelled call's result: what it printed so far (its last `max` characters), then `[cancelled by the user]`. */
export const cancelledResult = (output: string | undefined, max: number): string =>
  unfinishedResult(output === undefined ? undefined : lastOutput(output, max), CANCELLED)

/**
 * The history after a cancel: the partial answer kept, every unanswered tool call closed —
 * with what it printed so far, when `outputs` (by call id) has it.
 */
const closeCancelled = (
  added: ReadonlyArray<Message>,
  partialText: string,
  outputs: ReadonlyMap<string, string> = new Map(),
  maxOutput = 30_000
): Array<Message> => {
  const out: Array<Message> = [...added]
  if (partialText !== "") out.push({ role: "assistant", content: partialText })
  const answered = new Set(out.filter((m) => m.role === "tool").map((m) => m.tool_call_id))
  for (const message of added) {
    for (const call of message.tool_calls ?? []) {
      if (answered.has(call.id)) continue
      out.push({
        role: "tool",
        tool_call_id: call.id,
        content: cancelledResult(outputs.get(call.id), maxOutput),
        failed: true
      })
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
  images: ReadonlyArray<ImageInput> = [],
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
        runTurn(deps, conversation, { question, images, blocks }, emit, shown).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.zipRight(
              Effect.ignore(conversation.update(withoutProgress)),
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
      )
      return Stream.repeatEffect(Effect.zipRight(SubscriptionRef.update(pulls, (n) => n + 1), Queue.take(queue))).pipe(
        Stream.takeUntil(isTerminal)
      )
    })
  )

/** The question of a turn, with the blocks an editor sent for it (kept for a reload, never sent). */
interface Asked {
  readonly question: string
  readonly images: ReadonlyArray<ImageInput>
  readonly blocks: ReadonlyArray<EditorBlock> | undefined
  /** What the user's hooks give the model with the question (notes after it). */
  readonly hookNotes?: ReadonlyArray<string>
}

/** A line of a hook, as the turn's notice. */
const notice = (emit: Emit) => (text: string) => emit({ _tag: "Notice", text })

/** A prompt a UserPromptSubmit hook blocked: the user is told why, and the turn ends without a request. */
const refusePrompt = (emit: Emit, reason: string) =>
  Effect.zipRight(
    emit({ _tag: "Notice", text: `prompt blocked by a UserPromptSubmit hook: ${reason}` }),
    emit({ _tag: "TurnFinished", stopReason: "end_turn" })
  )

const runTurn = Effect.fn("Agent.runTurn")(function*(
  deps: Deps,
  conversation: Conversation,
  asked: Asked,
  emit: Emit,
  shown: Effect.Effect<void>
) {
  // the user's SessionStart and UserPromptSubmit hooks: a blocked prompt is never sent nor kept
  const opening = yield* openingHooks(deps.hooks, conversation, asked.question, notice(emit))
  if (opening._tag === "Blocked") return yield* refusePrompt(emit, opening.reason)
  const state = yield* prepareTurn(deps, conversation, { ...asked, hookNotes: opening.notes }, emit, shown)
  yield* saveProgress(deps, state)
  const outcome = yield* runSteps(deps, state).pipe(
    Effect.onInterrupt(() =>
      Effect.flatMap(
        Ref.get(state.partial),
        (text) => commit(state, closeCancelled(state.added, text, state.toolOutput, deps.config.maxOutput))
      )
    ),
    Effect.either
  )
  yield* endTurn(deps, state, outcome)
})

/** Mode `auto` without a working sandbox asks as `ask` does: said once, at the first turn it matters. */
const sayAutoFallsBack = Effect.fn("Agent.sayAutoFallsBack")(function*(
  deps: Deps,
  conversation: Conversation,
  emit: Emit
) {
  const { mode } = yield* Ref.get(conversation.settings)
  if (deps.shownWarnings.has(AUTO_FALLBACK) || (mode !== "auto" && deps.config.permissions !== "auto")) return
  const sandboxed = (yield* deps.sandbox.state)._tag === "On"
  if (!autoFallsBack(deps.config.permissions, mode, sandboxed)) return
  deps.shownWarnings.add(AUTO_FALLBACK)
  yield* emit({ _tag: "Notice", text: AUTO_FALLBACK })
})

/**
 * What comes before the first model call: the warnings not shown yet, the system prompt
 * (instructions, skills, environment), compaction when the history is near the window, the
 * turn's MCP tools.
 */
const prepareTurn = Effect.fn("Agent.prepareTurn")(function*(
  deps: Deps,
  conversation: Conversation,
  { blocks, hookNotes = [], images, question }: Asked,
  emit: Emit,
  shown: Effect.Effect<void>
) {
  yield* warn(emit, yield* deps.model.takeWarning)
  const { text: configured, warnings } = yield* systemPromptOf(
    deps.config,
    deps.tools,
    conversation.cwd,
    gitConfineOf(deps.sandbox, conversation.cwd)
  )
  // in plan mode (and only then) the model is told it plans, and that what changes is refused
  const system = (yield* Ref.get(conversation.settings)).mode === "plan"
    ? `${configured}\n\n${PLAN_MODE_PROMPT}`
    : configured
  yield* autoCompact(deps, conversation, question, emit, system)
  for (const warning of warnings) yield* warnOnce(deps, emit, warning)

  yield* sayAutoFallsBack(deps, conversation, emit)
  // a .mm/permissions.json the project holds grants nothing: said once, at the first turn
  yield* warnOnce(deps, emit, yield* deps.remembered.ignoredLine(conversation.cwd))
  const mcpTools = yield* deps.mcp.forTurn(conversation)
  for (const notice of mcpTools.notices) yield* emit({ _tag: "Notice", text: notice })

  const before = yield* conversation.snapshot
  const state: TurnState = {
    asking: yield* Effect.makeSemaphore(1),
    delegate: (callId, task, onOutput) => runSubAgent(deps, state, callId, task, onOutput, turn),
    conversation,
    question,
    emit,
    shown,
    mcpTools,
    turnNumber: before.turns + 1,
    previous: before.messages,
    planBefore: before.plan,
    base: withSystem(before.messages, system),
    added: [{
      ...(yield* questionMessage(deps, deps.checkpoints, conversation, question, images, emit)),
      ...(blocks === undefined ? {} : { blocks })
    }, ...hookNotes.map((content): Message => ({ role: "user", content, note: true }))],
    sentAt: new Date(yield* Effect.clockWith((clock) => clock.currentTimeMillis)).toISOString(),
    partial: yield* Ref.make(""),
    toolOutput: new Map(),
    running: undefined
  }
  yield* sayTooSmallFor(deps, state)
  return state
})

/**
 * One turn of Node's event loop. A batch of calls that each finish without waiting on anything
 * (200 writes of small files) would otherwise run to its end without the loop ever reading a
 * key, a signal or an editor's message: none of them could stop it.
 */
const eventLoopTurn = Effect.async<void>((resume) => {
  const timer = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(timer))
})

/**
 * Answers in a row that held only a call mm could not run: a model that keeps writing the same
 * broken call would otherwise be asked again up to `maxSteps` times.
 */
const UNRUN_MAX = 2
const UNRUN_LINE =
  `the model wrote a call that could not run ${UNRUN_MAX} times in a row — the turn stops here; ask again`

/** An answer's calls in the order they run: `task` calls next to each other together (they run side by side), others alone. */
const callGroups = (calls: ReadonlyArray<ToolCall>): Array<Array<ToolCall>> => {
  const groups: Array<Array<ToolCall>> = []
  for (const call of calls) {
    const last = groups[groups.length - 1]
    const together = call.function.name === taskTool.name && last?.[0]?.function.name === taskTool.name
    if (together) last.push(call)
    else groups.push([call])
  }
  return groups
}

/** The results of calls that ran side by side, put back in the order of the calls (they are added as they end). */
const inCallOrder = (added: Array<Message>, group: ReadonlyArray<ToolCall>): void => {
  if (group.length < 2) return
  const order = new Map(group.map((call, i) => [call.id, i]))
  const at = added.flatMap((m, i) => (m.role === "tool" && order.has(m.tool_call_id ?? "") ? [i] : []))
  const sorted = at.map((i) => added[i]).sort((a, b) => order.get(a.tool_call_id!)! - order.get(b.tool_call_id!)!)
  at.forEach((position, k) => {
    added[position] = sorted[k]
  })
}

/** Model calls and their tool calls, until an answer without tool calls or `maxSteps` calls. */
const runSteps = Effect.fn("Agent.runSteps")(function*(deps: Deps, state: TurnState) {
  let compacted = false
  // one model call; a request over the window compacts the history once and asks again
  const call = (): Effect.Effect<Completed, GenerationError> =>
    Effect.catchIf(
      callModel(deps, state),
      (error) => error.reason === "context-overflow",
      (error) =>
        Effect.gen(function*() {
          // the history is compacted as it was before the question; the turn is saved again after
          yield* Effect.ignore(
            state.conversation.update((session) => ({ ...withoutProgress(session), messages: state.previous }))
          )
          yield* recoverOverflow(deps, state, error, compacted)
          compacted = true
          yield* saveProgress(deps, state)
          return yield* call()
        })
    )
  // answers in a row that ran nothing and only earned a note (a call to write again)
  let unrun = 0
  // answers a Stop hook sent back to work
  let stops = 0
  for (let step = 1; step <= deps.config.maxSteps; step++) {
    const completed = yield* call()
    yield* sayTooSmallFor(deps, state)
    const calls = completed.toolCalls
    state.added.push(assistantMessage(completed))
    yield* Ref.set(state.partial, "")
    if (calls.length === 0 && completed.notes === undefined) {
      const cut = yield* lengthLine(deps, completed)
      const said = finishNotice(completed.finishReason, completed.content, () => cut)
      if (said !== undefined) yield* state.emit({ _tag: "Notice", text: said })
      // the user's Stop hooks may send the model back to work, with a note saying why
      const goOn = completed.finishReason === "length"
        ? undefined
        : yield* stopHookNote(deps.hooks, state.conversation, notice(state.emit), stops)
      if (goOn !== undefined) {
        stops++
        state.added.push(goOn)
        continue
      }
      return completed.finishReason === "length" ? ("max_tokens" as const) : ("end_turn" as const)
    }
    unrun = calls.length === 0 ? unrun + 1 : 0
    if (unrun >= UNRUN_MAX) {
      yield* state.emit({ _tag: "Notice", text: UNRUN_LINE })
      return "end_turn" as const
    }
    for (const group of callGroups(calls)) {
      // a Ctrl-C, an Esc, a signal or an editor's cancel that came during the last call is heard before the next
      yield* eventLoopTurn
      // sub-agents side by side (at most `tasks.parallel` at once), anything else one by one
      yield* Effect.forEach(group, (call) => runCall(deps, state, call), {
        concurrency: deps.config.tasks.parallel,
        discard: true
      })
      inCallOrder(state.added, group)
      // what ran is on disk before anything else can stop mm
      yield* saveProgress(deps, state)
    }
    // a call the model must write again (cut, or unreadable): it is told, and answers again
    state.added.push(...notesAfter(completed))
  }
  return "max_steps" as const
})

/** The session without a turn-in-progress marker. */
const withoutProgress = (session: Session): Session => {
  if (session.inProgress === undefined) return session
  const { inProgress: _done, ...rest } = session
  return rest
}

/** The session with this turn's messages after the history it started from; a cancelled turn counts as a completed one. */
const commit = (state: TurnState, messages: ReadonlyArray<Message>) =>
  state.conversation.update((session) => ({
    ...withoutProgress(session),
    messages: [...state.base, ...messages],
    turns: session.turns + 1,
    title: session.title === "" ? titleOf(state.question) : session.title
  }))

/**
 * A failed question's history and plan go back to what they were before it; the files its calls
 * changed stay changed, and their records say a failed question made them, after the last turn
 * held. A plan the question had changed is shown again as it was.
 */
const revertFailed = Effect.fn("Agent.revertFailed")(function*(state: TurnState) {
  const { conversation } = state
  const planNow = (yield* conversation.snapshot).plan
  yield* Effect.ignore(conversation.update((session) => ({
    ...withPlan(withoutProgress(session), state.planBefore),
    messages: state.previous,
    ...(session.changes === undefined
      ? {}
      : { changes: markFailed(session.changes, state.added, state.turnNumber, state.sentAt) })
  })))
  if (planNow !== state.planBefore) yield* state.emit({ _tag: "Plan", entries: state.planBefore?.entries ?? [] })
})

/**
 * A failed turn leaves the history as it was and keeps its error beside the conversation;
 * a finished one is committed.
 */
/** `session` holding `plan`, or none. */
const withPlan = (session: Session, plan: SavedPlan | undefined): Session => {
  const { plan: _written, ...rest } = session
  return plan === undefined ? rest : { ...rest, plan }
}

const endTurn = Effect.fn("Agent.endTurn")(function*(
  deps: Deps,
  state: TurnState,
  outcome: Either.Either<StopReason, GenerationError>
) {
  const { conversation, emit, question } = state
  if (outcome._tag === "Left") {
    const error = outcome.left
    if (deps.keepsFailedTurns === true) {
      // a sub-agent's file is the record of what it did: its failed turn stays, with its error
      yield* warn(emit, yield* commit(state, state.added))
    } else {
      yield* revertFailed(state)
    }
    yield* warn(emit, yield* conversation.record({ kind: "generation", line: error.message, raw: error.raw, question }))
    yield* emit({ _tag: "TurnFailed", error })
    return
  }
  yield* warn(emit, yield* commit(state, state.added))
  if (outcome.right === "max_steps") {
    yield* emit({
      _tag: "Notice",
      text: `stopped after ${deps.config.maxSteps} model calls in one turn (maxSteps); ask again to let it go on`
    })
  }
  yield* emit({ _tag: "TurnFinished", stopReason: outcome.right })
})
