import * as Context from "effect/Context"
import type * as Effect from "effect/Effect"
import type * as Stream from "effect/Stream"

import type { StoreError } from "../domain/Errors"
import type { Session } from "../domain/Session"
import type { Matcher, SessionHits } from "./SessionSearch"

/** What `/sessions`, `mm sessions` and ACP `session/list` show of one session. */
export interface SessionSummary {
  readonly id: string
  readonly cwd: string
  readonly createdAt: string
  readonly updatedAt: string
  readonly title: string
  readonly turns: number
  /** Number of records in its `errors` array. */
  readonly errors: number
  /** Set in an archive (turns a compaction replaced): the id of the compacted session. Never listed. */
  readonly archiveOf?: string
  /** Set when the session is a fork of another. */
  readonly forkedFrom?: { readonly id: string; readonly turn: number }
  /** Set on a sub-agent's conversation: the session whose `task` call ran it, that call's turn and id. */
  readonly parent?: { readonly id: string; readonly turn: number; readonly callId: string }
}

export type SessionListing =
  | { readonly _tag: "Readable"; readonly summary: SessionSummary }
  | { readonly _tag: "Unreadable"; readonly id: string; readonly reason: string }

/**
 * The port to where sessions live. Every `dir` is an absolute directory (the caller
 * resolves `sessions.dir` against the project); every `id` is validated before it is
 * used to name a file.
 */
export interface SessionStoreShape {
  /** Checks that sessions can be written under `dir`, without creating it (files and directory come with the first session). */
  readonly prepare: (dir: string) => Effect.Effect<void, StoreError>
  /** A new empty session under a fresh id, its file created exclusively (never overwrites). */
  readonly createNew: (dir: string, cwd: string) => Effect.Effect<Session, StoreError>
  /**
   * Writes `session` under a fresh id (exclusively) and returns the copy with that id: a
   * compaction's archive, a fork, the first file of a conversation that already holds its question.
   */
  readonly saveAsNew: (dir: string, session: Session) => Effect.Effect<Session, StoreError>
  /**
   * Rewrites the whole file atomically; refuses to overwrite a file of a newer version. With
   * `expectedUpdatedAt`, also refuses (reason "conflict") when the file on disk no longer carries
   * that `updatedAt`: someone else wrote it since.
   */
  readonly save: (dir: string, session: Session, expectedUpdatedAt?: string) => Effect.Effect<void, StoreError>
  /** Reads, decodes and validates one session; unknown fields are kept. */
  readonly load: (dir: string, id: string) => Effect.Effect<Session, StoreError>
  /** Deletes one session's file (`mm sessions rm`); reason "not-found" when there is none. */
  readonly remove: (dir: string, id: string) => Effect.Effect<void, StoreError>
  /** Every session of the directory, newest id first; a bad file is listed as unreadable; archives are not listed. */
  readonly list: (dir: string) => Effect.Effect<ReadonlyArray<SessionListing>, StoreError>
  /**
   * Every file of the directory with lines that match (archives included), newest id first,
   * as they are found; a file that cannot be read has none.
   */
  readonly search: (dir: string, matcher: Matcher) => Stream.Stream<SessionHits, StoreError>
}

export class SessionStore extends Context.Tag("mm/SessionStore")<SessionStore, SessionStoreShape>() {}
