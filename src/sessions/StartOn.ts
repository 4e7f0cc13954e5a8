import * as Effect from "effect/Effect"

import type { StartOn } from "../cli/Args"
import { resumedLine } from "../text/Lines"
import type { Conversation } from "./Conversation"
import { Keeper } from "./Keeper"

export type Started =
  | { readonly _tag: "Started"; readonly lines: ReadonlyArray<string>; readonly resumed: boolean }
  /** The user's request could not be met: one line (may be empty) and the exit code. */
  | { readonly _tag: "Failed"; readonly line: string; readonly code: number }

const SESSIONS_OFF = "sessions are off — set sessions.enabled: true in agent.yaml to keep and resume conversations"

/**
 * Puts a just-opened conversation on the session the command line asked for: `--continue`
 * (the latest, as a bare `/resume`), `--resume ID` (full id, unique prefix or hex suffix),
 * `--resume` (a list to pick from, on a terminal). A wrong id is bad usage (exit 2) and
 * writes nothing; the lines say what was resumed.
 */
export const startOn = (conversation: Conversation, cwd: string, start: StartOn) =>
  Effect.gen(function*() {
    const keeper = yield* Keeper
    const started = (lines: ReadonlyArray<string>, resumed: boolean): Started => ({ _tag: "Started", lines, resumed })
    const failed = (line: string, code: number): Started => ({ _tag: "Failed", line, code })
    let id: string
    switch (start._tag) {
      case "New":
        return started([], false)
      case "Latest": {
        if (keeper.dirFor(cwd) === undefined) return failed(SESSIONS_OFF, 2)
        const latest = yield* Effect.either(conversation.resume(undefined))
        if (latest._tag === "Left") return failed(latest.left.message, 1)
        if (latest.right === undefined) {
          return started([
            "no earlier session to continue (only sessions with at least one turn count): this is a new one"
          ], false)
        }
        return started([resumedLine(latest.right)], true)
      }
      case "Id": {
        const resolved = yield* Effect.either(keeper.resolve(cwd, start.id))
        if (resolved._tag === "Left") return failed(resolved.left.message, 2)
        id = resolved.right
        break
      }
      case "Pick": {
        const picked = yield* pickStart(cwd)
        if (picked._tag === "Failed") return picked
        if (picked.start._tag !== "Id") return started(picked.lines, false)
        id = picked.start.id
        break
      }
    }
    const resumed = yield* Effect.either(conversation.resume(id))
    if (resumed._tag === "Left") return failed(resumed.left.message, resumed.left.reason === "not-found" ? 2 : 1)
    return started(resumed.right === undefined ? [] : [resumedLine(resumed.right)], true)
  })

export type Picked =
  | { readonly _tag: "Picked"; readonly start: StartOn; readonly lines: ReadonlyArray<string> }
  | Extract<Started, { _tag: "Failed" }>

/**
 * `--resume` without an id: the list to pick from, on a terminal. Runs before the terminal's
 * own input is set up, so that the two never read the same keys.
 */
export const pickStart = (cwd: string) =>
  Effect.gen(function*() {
    const keeper = yield* Keeper
    const failed = (line: string, code: number) => ({ _tag: "Failed", line, code }) as const
    if (keeper.dirFor(cwd) === undefined) return failed(SESSIONS_OFF, 2)
    if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
      return failed("--resume needs an id when there is no terminal to pick from", 2)
    }
    const listing = yield* keeper.list(cwd)
    if (listing._tag === "Failed") return failed(`cannot list the sessions in ${listing.dir}: ${listing.reason}`, 1)
    const { pickSession } = yield* Effect.promise(() => import("../terminal/Picker"))
    const picked = yield* Effect.promise(() => pickSession(listing._tag === "Listed" ? listing.entries : []))
    if (picked._tag === "Cancelled") return failed("", 130)
    if (picked._tag === "None") {
      return {
        _tag: "Picked",
        start: { _tag: "New" },
        lines: ["no earlier session to resume (only sessions with at least one turn count): this is a new one"]
      } satisfies Picked
    }
    return { _tag: "Picked", start: { _tag: "Id", id: picked.id }, lines: [] } satisfies Picked
  })

/** A new conversation of the project, put on the session the command line asked for. */
export const openOn = (cwd: string, start: StartOn) =>
  Effect.gen(function*() {
    const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
    return { conversation, started: yield* startOn(conversation, cwd, start) }
  })
