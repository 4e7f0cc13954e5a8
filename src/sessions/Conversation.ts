import type * as Effect from "effect/Effect"
import type * as Ref from "effect/Ref"

import type { Scope } from "../approvals/ApprovalScope"
import type { SessionSettings } from "../approvals/SessionSettings"
import type { ForkError, ResumeError, StoreError } from "../domain/Errors"
import type { PlanEntry } from "../domain/Plan"
import type { Message, Session } from "../domain/Session"
import type { Usage } from "../model/ModelClient"
import type { Failure } from "./ErrorLog"
import type { SessionListing } from "./SessionStore"

/** What the Keeper hands a façade: its conversation, how saving goes, what a resume or a listing found. */

export type SaveStatus =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Saving"; readonly dir: string }
  | { readonly _tag: "NotSaved"; readonly dir: string; readonly reason: string }

export interface ResumeReport {
  readonly id: string
  readonly messages: number
  readonly title: string
  readonly errors: number
  /** The question of a turn mm stopped during (killed, power lost), closed on load. */
  readonly interrupted?: string
  /** The latest plan the model wrote (`todo`), when it holds any entry. */
  readonly plan?: ReadonlyArray<PlanEntry>
}

/** What a fork made: the new session, what it holds, and where it came from. */
export interface ForkReport {
  /** The new session's id ("" when sessions are off or could not be saved). */
  readonly id: string
  /** The session it was forked from ("" when that one had no file). */
  readonly from: string
  /** The last turn the fork kept. */
  readonly turn: number
  /** Turns of the original that the fork leaves out. */
  readonly left: number
  /** A "not saved" warning, when the fork's file could not be written. */
  readonly warning?: string
}

/**
 * Where ACP `/new` moved the conversation so far, and a line for each archive or sub-agent's
 * session that could not follow it.
 */
export interface MovedReport {
  readonly id: string
  readonly warnings: ReadonlyArray<string>
}

/**
 * The current session of a façade: the conversation in memory, written whole to its file
 * after every change when sessions are on. A failed write never stops the conversation.
 */
export interface Conversation {
  readonly cwd: string
  readonly snapshot: Effect.Effect<Session>
  /** The session's id; "" while the terminal has not asked its first question. */
  readonly id: Effect.Effect<string>
  readonly status: Effect.Effect<SaveStatus>
  /** Creates the file if it does not exist yet; returns a "not saved" warning the first time saving fails. */
  readonly ensureFile: Effect.Effect<string | undefined>
  /** Changes the session in memory, then rewrites its file; returns a warning the first time saving fails. */
  readonly update: (change: (session: Session) => Session) => Effect.Effect<string | undefined>
  /**
   * A compaction: the turns it `replaced` are first written to an archive file (listed in
   * `archives`), then the history becomes `messages` and the file is rewritten. Returns a
   * warning when saving, or archiving, failed.
   */
  readonly compacted: (
    messages: ReadonlyArray<Message>,
    replaced: ReadonlyArray<Message>
  ) => Effect.Effect<string | undefined>
  /** Keeps one error record beside the conversation (creating the file if needed), then saves. */
  readonly record: (failure: Failure) => Effect.Effect<string | undefined>
  /** Terminal `/new`: the file stays as it is; the next question opens a new one. */
  readonly detach: Effect.Effect<void>
  /**
   * ACP `/new`: the conversation so far moves to a new id, its archives (`archiveOf`) and its
   * sub-agents' sessions (`parent.id`) re-pointed to it, then this id starts over empty.
   * Undefined when there was nothing to move.
   */
  readonly archiveAndReset: Effect.Effect<MovedReport | undefined, StoreError>
  /** Terminal `/resume [id]`: this conversation becomes the stored one. Failures are recorded here. */
  readonly resume: (id: string | undefined) => Effect.Effect<ResumeReport | undefined, ResumeError>
  /**
   * The question of a turn mm stopped during, found when this conversation was loaded (then
   * closed); given once, undefined afterwards.
   */
  readonly takeInterrupted: Effect.Effect<string | undefined>
  /**
   * `/fork [N]`, `/rewind`, `--fork`: this conversation goes on in a new session holding its
   * turns up to `turn` (all by default), with `forkedFrom`; the original's file is untouched.
   */
  readonly fork: (turn: number | undefined) => Effect.Effect<ForkReport, ForkError>
  /** What the user allowed for the rest of this session ("always"), as scopes (ApprovalScope.ts). */
  readonly allowed: Ref.Ref<ReadonlyArray<Scope>>
  /** The last token usage the server reported, for compaction estimates. */
  readonly usage: Ref.Ref<Usage | undefined>
  /** The editor's choices for this session (approval mode, model); in memory only. */
  readonly settings: Ref.Ref<SessionSettings>
}

export type Listing =
  | { readonly _tag: "Off" }
  | { readonly _tag: "Failed"; readonly dir: string; readonly reason: string }
  | { readonly _tag: "Listed"; readonly dir: string; readonly entries: ReadonlyArray<SessionListing> }
