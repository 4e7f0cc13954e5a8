import * as Effect from "effect/Effect"

import type { ChosenStart } from "../domain/StartOn"
import { Keeper } from "../sessions/Keeper"
import { SESSIONS_OFF } from "../sessions/SessionStart"

export type Picked =
  | { readonly _tag: "Picked"; readonly start: ChosenStart; readonly lines: ReadonlyArray<string> }
  | { readonly _tag: "Failed"; readonly line: string; readonly code: number }

const failed = (line: string, code: number): Picked => ({ _tag: "Failed", line, code })

/**
 * `--resume` without an id: the list to pick from, on a terminal. Runs before the terminal's
 * own input is set up, so that the two never read the same keys.
 */
export const pickStart = (cwd: string) =>
  Effect.gen(function*() {
    const keeper = yield* Keeper
    if (keeper.dirFor(cwd) === undefined) return failed(SESSIONS_OFF, 2)
    if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
      return failed("--resume needs an id when there is no terminal to pick from", 2)
    }
    const listing = yield* keeper.list(cwd)
    if (listing._tag === "Failed") return failed(`cannot list the sessions in ${listing.dir}: ${listing.reason}`, 1)
    const { pickSession } = yield* Effect.promise(() => import("./Picker"))
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
