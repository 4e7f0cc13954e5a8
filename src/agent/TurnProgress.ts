import * as Effect from "effect/Effect"

import { titleOf } from "../domain/Session"
import { thisProcess } from "../lib/ProcessIdentity"
import { lastOutput } from "../sessions/Interrupted"
import { type Deps, warn } from "./Deps"
import type { TurnState } from "./TurnState"

/**
 * Saving a turn while it runs, so that mm killed mid-turn loses neither the question, nor what
 * already ran, nor the call that was running and what it had printed (sessions/Interrupted.ts
 * closes such a turn on the next load). Every save goes through `saveProgress`.
 */

/** How long at least between two saves of a running call's output. */
export const OUTPUT_SAVE_MS = 1000

/**
 * How long a call runs before what it prints is saved: a quick call (most are) costs no save of
 * its own beyond the two around it, and a longer one has its first output on disk within this.
 */
export const FIRST_OUTPUT_SAVE_MS = 250

/**
 * The turn so far, written as in progress: when the question is sent, before and after each
 * tool call, and while a call prints. The running call, if any, is marked with what it has
 * printed so far (its last `maxOutput` characters, as a cancel keeps them).
 */
export const saveProgress = (deps: Deps, state: TurnState) =>
  Effect.flatMap(
    state.conversation.update((session) => ({
      ...session,
      messages: [...state.base, ...state.added],
      title: session.title === "" ? titleOf(state.question) : session.title,
      inProgress: {
        question: state.question,
        at: state.sentAt,
        start: state.base.length,
        // who answers it: another mm that opens the file leaves a turn whose mm still runs
        by: thisProcess(),
        ...(state.running === undefined ? {} : {
          running: {
            id: state.running,
            output: lastOutput(state.toolOutput.get(state.running) ?? "", deps.config.maxOutput)
          }
        })
      }
    })),
    (warning) => warn(state.emit, warning)
  ).pipe(
    // a conversation with no file yet (the terminal's and mm -p's first question) gets it now,
    // holding the question: one durable write rather than an empty file and then a rewrite
    Effect.zipRight(Effect.flatMap(state.conversation.ensureFile, (warning) => warn(state.emit, warning)))
  )

/**
 * Runs a tool call marked as running: saved before it starts, then its output saved as it
 * comes — from `FIRST_OUTPUT_SAVE_MS` after the start, then at most once every `OUTPUT_SAVE_MS`
 * (each save rewrites the whole file). `run` gets what to call when the output has changed. The
 * mark is left for the call's result to clear.
 */
export const runSaved = <A, E, R>(
  deps: Deps,
  state: TurnState,
  id: string,
  run: (changed: Effect.Effect<void>) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R> =>
  Effect.gen(function*() {
    state.running = id
    yield* saveProgress(deps, state)
    const changed = yield* Effect.makeLatch(false)
    // once the output has changed since the last save: save, then wait; again and again
    const saving = Effect.sleep(FIRST_OUTPUT_SAVE_MS).pipe(
      Effect.zipRight(
        changed.await.pipe(
          Effect.zipRight(changed.close),
          Effect.zipRight(saveProgress(deps, state)),
          Effect.zipRight(Effect.sleep(OUTPUT_SAVE_MS)),
          Effect.forever
        )
      )
    )
    return yield* Effect.scoped(Effect.zipRight(Effect.forkScoped(saving), run(changed.open)))
  })
