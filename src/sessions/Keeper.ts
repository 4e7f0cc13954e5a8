import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import { AppConfig } from "../config/Config"
import { ResumeError, SearchError } from "../domain/Errors"
import { emptySession } from "../domain/Session"
import type { Conversation, Listing, SaveStatus } from "./Conversation"
import { makeConversation, now } from "./ConversationHandle"
import { ErrorLog } from "./ErrorLog"
import { isSubAgentListing } from "./SessionCodec"
import {
  type Deps,
  idOfTyped,
  isSharedStore,
  loadClosed,
  ofProject,
  sessionsDir,
  sessionsOff,
  storeReason,
  underCurrentSystem,
  validId
} from "./SessionLookup"
import { compileQuery, type SearchQuery, type SessionHits } from "./SessionSearch"
import { type SessionListing, SessionStore } from "./SessionStore"

export interface KeeperShape {
  /** Where the sessions of a project live, or undefined when sessions are off. */
  readonly dirFor: (cwd: string) => string | undefined
  /** A new conversation. `createFile: "now"` (ACP) writes its file at once; "later" (terminal) at the first question. */
  readonly open: (cwd: string, options: { readonly createFile: "now" | "later" }) => Effect.Effect<Conversation>
  /** A stored conversation, under the current system prompt (ACP `session/load` and `session/resume`). */
  readonly load: (cwd: string, id: unknown) => Effect.Effect<Conversation, ResumeError>
  /**
   * This project's sessions; a sub-agent's conversation (`parent`) only with `subAgents`: no
   * listing offers one to continue, `mm sessions list --all` and `show` show them with their parent.
   */
  readonly list: (cwd: string, options?: { readonly subAgents?: boolean }) => Effect.Effect<Listing>
  /** What a person typed (full id, unique prefix, unique 8-hex suffix) → the id of one of this project's sessions. */
  readonly resolve: (cwd: string, typed: string) => Effect.Effect<string, ResumeError>
  /** This project's sessions (and archives) with lines that match, newest first, as they are found. */
  readonly search: (cwd: string, query: SearchQuery) => Stream.Stream<SessionHits, SearchError>
}

export class Keeper extends Context.Tag("mm/Keeper")<Keeper, KeeperShape>() {}

// ---- the service's methods ----

const open = (deps: Deps) =>
  Effect.fn("Keeper.open")(function*(cwd: string, options: { readonly createFile: "now" | "later" }) {
    const dir = sessionsDir(deps.config, cwd)
    const fresh = emptySession("", cwd, yield* now)
    if (dir === undefined) {
      return yield* makeConversation(deps, { cwd, session: fresh, onDisk: false, status: { _tag: "Off" } })
    }
    const prepared = yield* Effect.either(deps.store.prepare(dir))
    const retryCreate = options.createFile === "later"
    if (prepared._tag === "Left") {
      const status: SaveStatus = { _tag: "NotSaved", dir, reason: storeReason(prepared.left) }
      return yield* makeConversation(deps, { cwd, session: fresh, onDisk: false, status, terminal: retryCreate })
    }
    const conversation = yield* makeConversation(deps, {
      cwd,
      session: fresh,
      onDisk: false,
      status: { _tag: "Saving", dir },
      terminal: retryCreate
    })
    if (options.createFile === "now") yield* conversation.ensureFile
    return conversation
  })

const load = (deps: Deps) =>
  Effect.fn("Keeper.load")(function*(cwd: string, rawId: unknown) {
    const id = yield* validId(rawId)
    const dir = sessionsDir(deps.config, cwd)
    if (dir === undefined) {
      return yield* new ResumeError({
        reason: "disabled",
        message: "sessions are off (sessions.enabled: false)",
        raw: ""
      })
    }
    const loaded = yield* loadClosed(deps, dir, cwd, id)
    return yield* makeConversation(deps, {
      cwd,
      session: underCurrentSystem(deps.config, loaded.session),
      onDisk: true,
      status: { _tag: "Saving", dir },
      ...(loaded.interrupted === undefined ? {} : { interrupted: loaded.interrupted })
    })
  })

const list = (deps: Deps) =>
  Effect.fn("Keeper.list")(function*(cwd: string, options: { readonly subAgents?: boolean } = {}) {
    const dir = sessionsDir(deps.config, cwd)
    if (dir === undefined) return { _tag: "Off" } as const
    const mine = ofProject(deps, cwd)
    const shown = (entry: SessionListing) => mine(entry) && (options.subAgents === true || !isSubAgentListing(entry))
    return yield* deps.store.list(dir).pipe(
      Effect.map((entries): Listing => ({ _tag: "Listed", dir, entries: entries.filter(shown) })),
      Effect.catchAll((error) => Effect.succeed<Listing>({ _tag: "Failed", dir, reason: storeReason(error) }))
    )
  })

/** The command line's `--resume ID`, `mm sessions show|rm ID`: nothing is recorded anywhere. */
const resolve = (deps: Deps) =>
  Effect.fn("Keeper.resolve")(function*(cwd: string, typed: string) {
    const dir = sessionsDir(deps.config, cwd)
    if (dir === undefined) return yield* sessionsOff()
    return yield* idOfTyped(deps, dir, cwd, typed.trim())
  })

const search = (deps: Deps) => (cwd: string, query: SearchQuery): Stream.Stream<SessionHits, SearchError> => {
  const dir = sessionsDir(deps.config, cwd)
  if (dir === undefined) {
    const off = sessionsOff()
    return Stream.fail(new SearchError({ reason: "disabled", message: off.message, raw: "" }))
  }
  const matcher = compileQuery(query)
  if (typeof matcher === "string") {
    return Stream.fail(new SearchError({ reason: "bad-pattern", message: matcher, raw: "" }))
  }
  const mine = (hits: SessionHits) => !deps.shared || path.resolve(hits.cwd) === path.resolve(cwd)
  return deps.store.search(dir, matcher).pipe(
    Stream.filter(mine),
    Stream.mapError((error) => new SearchError({ reason: "io", message: error.message, raw: error.raw }))
  )
}

/** The keeper over the store and the error log. */
export const makeKeeper = Effect.gen(function*() {
  const { config } = yield* AppConfig
  const deps: Deps = {
    config,
    store: yield* SessionStore,
    errorLog: yield* ErrorLog,
    shared: isSharedStore(config)
  }
  return Keeper.of({
    dirFor: (cwd) => sessionsDir(config, cwd),
    open: open(deps),
    load: load(deps),
    list: list(deps),
    resolve: resolve(deps),
    search: search(deps)
  })
})
