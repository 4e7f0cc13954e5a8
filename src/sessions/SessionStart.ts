import * as Effect from "effect/Effect"

import type { ChosenStart } from "../domain/StartOn"
import { type Conversation, type ForkReport, type ResumeReport } from "./Conversation"
import { Keeper } from "./Keeper"

/** Where a just-opened conversation stands; the façades turn it into lines. */
export type Started =
  | {
    readonly _tag: "Started"
    readonly resumed: boolean
    /** What was resumed, when a session was. */
    readonly report?: ResumeReport
    /** Said when the request was met another way (no earlier session: a new one). */
    readonly note?: string
    /** What a `--fork` made. */
    readonly forked?: ForkReport
  }
  /** The user's request could not be met: one line (may be empty) and the exit code. */
  | { readonly _tag: "Failed"; readonly line: string; readonly code: number }

export const SESSIONS_OFF = "sessions are off (sessions.enabled: false): no conversation is kept"

const failed = (line: string, code: number): Started => ({ _tag: "Failed", line, code })

/** The latest session of the project, as a bare `/resume` takes it. */
const continueLatest = (conversation: Conversation, cwd: string) =>
  Effect.gen(function*() {
    if ((yield* Keeper).dirFor(cwd) === undefined) return failed(SESSIONS_OFF, 2)
    const latest = yield* Effect.either(conversation.resume(undefined))
    if (latest._tag === "Left") return failed(latest.left.message, 1)
    if (latest.right === undefined) {
      return {
        _tag: "Started",
        resumed: false,
        note: "no earlier session to continue (only sessions with at least one turn count): this is a new one"
      } satisfies Started
    }
    return { _tag: "Started", resumed: true, report: latest.right } satisfies Started
  })

/** The session a typed id names (full id, unique prefix or hex suffix). */
const resumeTyped = (conversation: Conversation, cwd: string, typed: string) =>
  Effect.gen(function*() {
    const resolved = yield* Effect.either((yield* Keeper).resolve(cwd, typed))
    if (resolved._tag === "Left") return failed(resolved.left.message, 2)
    const resumed = yield* Effect.either(conversation.resume(resolved.right))
    if (resumed._tag === "Left") return failed(resumed.left.message, resumed.left.reason === "not-found" ? 2 : 1)
    return { _tag: "Started", resumed: true, report: resumed.right } satisfies Started
  })

/** `--fork ID[:N]`: the stored session, then a fork of it; the original is not written. */
const forkTyped = (conversation: Conversation, cwd: string, typed: string, turn: number | undefined) =>
  Effect.gen(function*() {
    const started = yield* resumeTyped(conversation, cwd, typed)
    if (started._tag === "Failed") return started
    const forked = yield* Effect.either(conversation.fork(turn))
    if (forked._tag === "Left") return failed(forked.left.message, forked.left.reason === "store" ? 1 : 2)
    return { _tag: "Started", resumed: true, forked: forked.right } satisfies Started
  })

/**
 * Puts a just-opened conversation on the session the command line asked for: `--continue`
 * (the latest, as a bare `/resume`) or `--resume ID`. A wrong id is bad usage (exit 2) and
 * writes nothing. A `--resume` without an id was picked on the terminal before this.
 */
export const startOn = (
  conversation: Conversation,
  cwd: string,
  start: ChosenStart
): Effect.Effect<Started, never, Keeper> => {
  switch (start._tag) {
    case "New":
      return Effect.succeed({ _tag: "Started", resumed: false })
    case "Latest":
      return continueLatest(conversation, cwd)
    case "Id":
      return resumeTyped(conversation, cwd, start.id)
    case "Fork":
      return forkTyped(conversation, cwd, start.id, start.turn)
  }
}

/** A new conversation of the project, put on the session the command line asked for. */
export const openOn = (cwd: string, start: ChosenStart) =>
  Effect.gen(function*() {
    const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
    return { conversation, started: yield* startOn(conversation, cwd, start) }
  })
