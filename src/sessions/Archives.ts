import * as Effect from "effect/Effect"

import type { StoreError } from "../domain/Errors"
import type { Session } from "../domain/Session"
import type { SessionStoreShape } from "./SessionStore"

/**
 * The files a session names in its `archives`, read for what they are before anything is
 * done to them: an archive's own `archiveOf` says whose it is, whatever list names it (a fork
 * lists its original's archives too).
 */

export type NamedArchive =
  /** An archive whose `archiveOf` is the session that names it. */
  | { readonly _tag: "Own"; readonly archive: Session }
  /** An archive of another session (the original of a fork). */
  | { readonly _tag: "Others"; readonly archive: Session }
  /** A conversation, not an archive at all. */
  | { readonly _tag: "Conversation"; readonly session: Session }
  | { readonly _tag: "Unreadable"; readonly error: StoreError }

/** What the file `id`, named in the `archives` of session `owner`, turns out to be. */
export const readNamedArchive = (
  store: SessionStoreShape,
  dir: string,
  id: string,
  owner: string
): Effect.Effect<NamedArchive> =>
  Effect.match(store.load(dir, id), {
    onFailure: (error): NamedArchive => ({ _tag: "Unreadable", error }),
    onSuccess: (session): NamedArchive =>
      session.archiveOf === undefined
        ? { _tag: "Conversation", session }
        : session.archiveOf === owner
        ? { _tag: "Own", archive: session }
        : { _tag: "Others", archive: session }
  })

/**
 * The archive now belongs to session `to`: its file rewritten whole, atomically, with
 * `archiveOf: to`; refused (reason "conflict") if someone wrote it since it was read.
 */
export const repointArchive = (
  store: SessionStoreShape,
  dir: string,
  archive: Session,
  to: string
): Effect.Effect<void, StoreError> => store.save(dir, { ...archive, archiveOf: to }, archive.updatedAt)

/**
 * The archives among `ids` that belong to `from` are given to `to` (the conversation moved
 * there); archives of other sessions and files that are not archives are left as they are.
 * Returns a line for each archive that could not be read or rewritten.
 */
export const repointArchives = (
  store: SessionStoreShape,
  dir: string,
  ids: ReadonlyArray<string>,
  from: string,
  to: string
): Effect.Effect<ReadonlyArray<string>> =>
  Effect.gen(function*() {
    const problems: Array<string> = []
    for (const id of ids) {
      const named = yield* readNamedArchive(store, dir, id, from)
      if (named._tag === "Unreadable") problems.push(`archive ${id} left as it was: ${named.error.message}`)
      if (named._tag !== "Own") continue
      const moved = yield* Effect.either(repointArchive(store, dir, named.archive, to))
      if (moved._tag === "Left") problems.push(`archive ${id} still names ${from}: ${moved.left.message}`)
    }
    return problems
  })
