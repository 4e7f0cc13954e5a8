import * as Effect from "effect/Effect"

import type { StoreError } from "../domain/Errors"
import type { SessionStoreShape } from "./SessionStore"

/**
 * The link from a sub-agent's conversation to the session that ran it (`parent`), kept true
 * when that session's conversation moves to another id (ACP `/new`).
 */

/**
 * The sub-agents' sessions of `from` become those of `to`. Which sessions they are comes from
 * the listing (each file's head, mostly from the listing index: no file is read whole to find
 * them); each is then read, checked, and rewritten whole and atomically with `parent.id: to`,
 * refused (reason "conflict") if someone wrote it since it was read. Its `updatedAt` stays: the
 * sub-agent's conversation did not change. Returns a line for each session that still names
 * `from`, or one line when they could not be looked for.
 */
export const repointSubAgents = (
  store: SessionStoreShape,
  dir: string,
  from: string,
  to: string
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const listed = yield* Effect.either(store.list(dir))
    if (listed._tag === "Left") {
      return [`the sub-agent sessions of ${from} could not be looked for, so any still name it: ${listed.left.message}`]
    }
    const problems: Array<string> = []
    for (const entry of listed.right) {
      if (entry._tag !== "Readable" || entry.summary.parent?.id !== from) continue
      const id = entry.summary.id
      const moved = yield* Effect.either(repointOne(store, dir, id, from, to))
      if (moved._tag === "Left") problems.push(`sub-agent session ${id} still names ${from}: ${moved.left.message}`)
    }
    return problems
  })

/** One sub-agent's session, read whole, given to `to` if the file still names `from`. */
const repointOne = (
  store: SessionStoreShape,
  dir: string,
  id: string,
  from: string,
  to: string
): Effect.Effect<void, StoreError> =>
  Effect.flatMap(store.load(dir, id), (child) =>
    child.parent?.id === from
      ? store.save(dir, { ...child, parent: { ...child.parent, id: to } }, child.updatedAt)
      : Effect.void)
