import * as readline from "node:readline"

import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import { storeLayer } from "../app/Layers"
import { changesOverview } from "../changes/ChangeGroups"
import { Checkpoints } from "../changes/Checkpoints"
import { blobsOf, checkpointsGc, gcLine } from "../changes/CheckpointsGc"
import type { Message } from "../domain/Session"
import { isSessionId } from "../domain/SessionId"
import { readNamedArchive, repointArchive } from "../sessions/Archives"
import type { Listing } from "../sessions/Conversation"
import { closeInterrupted, liveWriter } from "../sessions/Interrupted"
import { Keeper, type KeeperShape } from "../sessions/Keeper"
import { isSubAgentListing } from "../sessions/SessionCodec"
import type { SearchQuery } from "../sessions/SessionSearch"
import { SessionStore, type SessionStoreShape } from "../sessions/SessionStore"
import { changesMarkdown } from "../text/ChangesText"
import { sessionsListing } from "../text/Lines"
import { sanitize } from "../text/Sanitize"
import { searchSummary, sessionHitJson, sessionHitLines } from "../text/SearchText"
import { sessionMarkdown } from "../text/SessionMarkdown"
import { type ExitCode, withConfig } from "./Run"

const withSessions = <E>(
  config: string | undefined,
  use: Effect.Effect<ExitCode, E, Keeper | SessionStore | Checkpoints>
) => withConfig(config, (loaded) => use.pipe(Effect.provide(storeLayer(loaded))))

const fail = (line: string, code: ExitCode) =>
  Effect.sync(() => {
    process.stderr.write(`mm: ${line}\n`)
    return code
  })

/** The listing without sub-agents' conversations, and how many it held. */
const withoutSubAgents = (listing: Listing): { readonly listing: Listing; readonly hidden: number } => {
  if (listing._tag !== "Listed") return { listing, hidden: 0 }
  const entries = listing.entries.filter((entry) => !isSubAgentListing(entry))
  return { listing: { ...listing, entries }, hidden: listing.entries.length - entries.length }
}

/**
 * `mm sessions [list] [--json] [--all]`: the listing of `/sessions`, ending with how to resume
 * from the shell; with `--all`, the sub-agents' conversations too, each under its parent.
 */
export const listSessions = (config: string | undefined, json: boolean, all: boolean) =>
  withSessions(
    config,
    Effect.gen(function*() {
      const keeper = yield* Keeper
      const everything = yield* keeper.list(process.cwd(), { subAgents: true })
      const { hidden, listing } = all ? { listing: everything, hidden: 0 } : withoutSubAgents(everything)
      const code: ExitCode = listing._tag === "Failed" ? 1 : 0
      if (!json) {
        const text = sessionsListing(listing, "", { all: true, resumeHint: "mm --resume <id> to continue one" })
        const more = hidden > 0 ? `\n${hidden} sub-agent session(s) not shown (mm sessions list --all)` : ""
        yield* Console.log(sanitize(text + more))
        return code
      }
      const out = listing._tag === "Listed"
        ? {
          dir: listing.dir,
          sessions: listing.entries.map((e) =>
            e._tag === "Readable" ? { ...e.summary, readable: true } : { id: e.id, readable: false, reason: e.reason }
          )
        }
        : listing._tag === "Off"
        ? { enabled: false, sessions: [] }
        : { dir: listing.dir, error: listing.reason, sessions: [] }
      yield* Console.log(JSON.stringify(out, null, 2))
      return code
    })
  )

/** The forks made of session `id`, and the sub-agents' conversations it ran, from a listing of them all. */
const relatedTo = (listing: Listing, id: string) => {
  const summaries = listing._tag === "Listed"
    ? listing.entries.flatMap((entry) => (entry._tag === "Readable" ? [entry.summary] : []))
    : []
  const forks = summaries.flatMap((s) => s.forkedFrom?.id === id ? [{ id: s.id, turn: s.forkedFrom.turn }] : [])
  // in the order the session ran them
  const subAgents = summaries
    .filter((s) => s.parent?.id === id)
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1))
    .map((s) => ({ id: s.id, turn: s.parent!.turn, callId: s.parent!.callId, title: s.title, turns: s.turns }))
  return { forks: forks.reverse(), subAgents }
}

/** `mm sessions show ID`: the conversation as Markdown on stdout. */
export const showSession = (config: string | undefined, typed: string) =>
  withSessions(
    config,
    Effect.gen(function*() {
      const keeper = yield* Keeper
      const store = yield* SessionStore
      const cwd = process.cwd()
      const id = yield* Effect.either(keeper.resolve(cwd, typed))
      if (id._tag === "Left") return yield* fail(id.left.message, 2)
      const dir = keeper.dirFor(cwd)!
      const session = yield* Effect.either(store.load(dir, id.right))
      if (session._tag === "Left") return yield* fail(session.left.message, session.left.reason === "not-found" ? 2 : 1)
      // the turns compactions replaced come first, from their archives, oldest first
      const archived: Array<Message> = []
      for (const archiveId of session.right.archives ?? []) {
        const archive = yield* Effect.either(store.load(dir, archiveId))
        if (archive._tag === "Left") {
          process.stderr.write(`mm: ${sanitize(archive.left.message)} (an archive of ${id.right})\n`)
          continue
        }
        // an archive's own summary is of turns an older archive already shows
        archived.push(...archive.right.messages.filter((m) => m.role !== "system" && m.summary !== true))
      }
      // a turn mm was killed during shows as the next load will close it (the file is not written);
      // one another mm is still answering shows as it stands
      const closed = liveWriter(session.right) === undefined
        ? closeInterrupted(session.right, new Date()).session
        : session.right
      const whole = { ...closed, messages: [...archived, ...closed.messages] }
      const { forks, subAgents } = relatedTo(yield* keeper.list(cwd, { subAgents: true }), id.right)
      process.stdout.write(sanitize(sessionMarkdown(whole, forks, subAgents)))
      const changes = session.right.changes ?? []
      if (changes.length === 0) return 0
      const overview = yield* Effect.flatMap(Checkpoints, (checkpoints) => changesOverview(checkpoints, cwd, changes))
        .pipe(Effect.either)
      if (overview._tag === "Left") {
        return yield* fail(`cannot read the changes of ${id.right}: ${String(overview.left)}`, 1)
      }
      process.stdout.write(sanitize(`\n${changesMarkdown(overview.right)}\n`))
      return 0
    })
  )

/**
 * `mm sessions search PATTERN [--regex] [-i] [--json]`: each matching line as it is found,
 * newest session first; exit 1 when nothing matched (as grep), 2 for a bad pattern.
 */
export const searchSessions = (config: string | undefined, query: SearchQuery, json: boolean) =>
  withSessions(
    config,
    Effect.gen(function*() {
      const keeper = yield* Keeper
      let sessions = 0
      let lines = 0
      const searched = yield* keeper.search(process.cwd(), query).pipe(
        Stream.runForEach((found) =>
          Effect.sync(() => {
            sessions++
            lines += found.hits.length
            const out = json ? sessionHitJson(found) : sessionHitLines(found)
            process.stdout.write(`${out.join("\n")}\n`)
          })
        ),
        Effect.either
      )
      if (searched._tag === "Left") return yield* fail(searched.left.message, searched.left.reason === "io" ? 1 : 2)
      if (!json) process.stderr.write(`${searchSummary(query.pattern, sessions, lines)}\n`)
      return sessions === 0 ? 1 : 0
    })
  )

const confirm = (question: string): Promise<boolean> =>
  new Promise((resolve) => {
    const rl = readline.createInterface({ input: process.stdin, output: process.stderr })
    let answered = false
    rl.question(question, (answer) => {
      answered = true
      rl.close()
      resolve(/^y(es)?$/i.test(answer.trim()))
    })
    rl.on("close", () => {
      if (!answered) resolve(false)
    })
  })

/**
 * The sessions that stay and list archives (forks, which share their original's, and the
 * originals of removed forks), by archive id: the first of them that lists it.
 */
const archiveHolders = (
  store: SessionStoreShape,
  dir: string,
  removed: ReadonlyArray<string>,
  forkOrigins: ReadonlySet<string>
) =>
  Effect.gen(function*() {
    const holders = new Map<string, string>()
    const listing = yield* Effect.either(store.list(dir))
    for (const entry of listing._tag === "Right" ? listing.right : []) {
      if (entry._tag !== "Readable" || removed.includes(entry.summary.id)) continue
      if (entry.summary.forkedFrom === undefined && !forkOrigins.has(entry.summary.id)) continue
      const held = yield* Effect.either(store.load(dir, entry.summary.id))
      for (const archiveId of held._tag === "Right" ? held.right.archives ?? [] : []) {
        if (!holders.has(archiveId)) holders.set(archiveId, entry.summary.id)
      }
    }
    return holders
  })

const note = (line: string) => Effect.sync(() => process.stderr.write(`${line}\n`))

/**
 * What becomes of the files the removed session `id` named in its `archives`. Only its own
 * archives (their `archiveOf` is `id`) go with it, and one a remaining session still lists
 * becomes that session's instead; an archive of another session stays, and so does a file
 * that is a conversation or cannot be read (said in one line), never deleted blindly.
 */
const removeArchivesOf = (
  store: SessionStoreShape,
  dir: string,
  id: string,
  named: ReadonlyArray<string>,
  holders: ReadonlyMap<string, string>,
  untouchable: Set<string>
) =>
  Effect.gen(function*() {
    for (const archiveId of named) {
      if (untouchable.has(archiveId)) continue
      const found = yield* readNamedArchive(store, dir, archiveId, id)
      if (found._tag === "Unreadable") {
        yield* note(`skipped ${archiveId}, named among the archives of ${id}: ${found.error.message}`)
      } else if (found._tag === "Conversation") {
        yield* note(`kept ${archiveId}, named among the archives of ${id}: a conversation, not an archive`)
      } else if (found._tag === "Own") {
        const holder = holders.get(archiveId)
        if (holder !== undefined) {
          const given = yield* Effect.either(repointArchive(store, dir, found.archive, holder))
          if (given._tag === "Left") {
            yield* note(`kept ${archiveId} for ${holder}, still naming ${id}: ${given.left.message}`)
          }
          continue
        }
        const gone = yield* Effect.either(store.remove(dir, archiveId))
        if (gone._tag === "Left") {
          yield* note(`could not delete ${archiveId} (an archive of ${id}): ${gone.left.message}`)
        } else {
          untouchable.add(archiveId)
          process.stdout.write(`deleted ${archiveId} (an archive of ${id})\n`)
        }
      }
    }
  })

/**
 * The sub-agents' conversations the sessions `named` ran (and those these ran, in turn), which
 * are part of them and go with them: by id, the session that ran each.
 */
const subAgentsOf = (keeper: KeeperShape, cwd: string, named: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const listing = yield* keeper.list(cwd, { subAgents: true })
    const children = listing._tag === "Listed"
      ? listing.entries.flatMap((entry) => (entry._tag === "Readable" && entry.summary.parent ? [entry.summary] : []))
      : []
    const ran = new Map<string, string>()
    const going = new Set(named)
    for (let grew = true; grew;) {
      grew = false
      for (const child of children) {
        if (going.has(child.id) || !going.has(child.parent!.id)) continue
        ran.set(child.id, child.parent!.id)
        going.add(child.id)
        grew = true
      }
    }
    return ran
  })

/**
 * `mm sessions rm ID…`: deletes exactly the sessions named, with their own archives and the
 * sub-agents' conversations they ran. Every id must name one session of the project, or nothing
 * is deleted. Asks first on a terminal; without one, only with `--yes`.
 */
export const removeSessions = (config: string | undefined, typed: ReadonlyArray<string>, yes: boolean) =>
  withSessions(
    config,
    Effect.gen(function*() {
      const keeper = yield* Keeper
      const store = yield* SessionStore
      const cwd = process.cwd()
      const ids: Array<string> = []
      for (const one of typed) {
        const id = yield* Effect.either(keeper.resolve(cwd, one))
        if (id._tag === "Left") return yield* fail(`${id.left.message} — nothing deleted`, 2)
        if (!ids.includes(id.right)) ids.push(id.right)
      }
      const ran = yield* subAgentsOf(keeper, cwd, ids)
      ids.push(...ran.keys())
      const dir = keeper.dirFor(cwd)!
      /** The checkpoints (copies kept for /undo) the sessions named use: removed with them unless another session uses them. */
      const blobs = new Set<string>()
      const archivesOf = new Map<string, ReadonlyArray<string>>()
      const forkOrigins = new Set<string>()
      for (const id of ids) {
        const exists = yield* Effect.either(store.load(dir, id))
        if (exists._tag === "Left" && exists.left.reason === "not-found") {
          return yield* fail(`${exists.left.message} — nothing deleted`, 2)
        }
        if (exists._tag === "Right") {
          // a session another mm is answering a question in is left to it, like every other named
          const writer = liveWriter(exists.right)
          if (writer !== undefined) {
            return yield* fail(
              `session ${id} is answering a question in another mm (pid ${writer}); nothing deleted — wait for it to finish`,
              1
            )
          }
          for (const blob of blobsOf(exists.right)) blobs.add(blob)
          archivesOf.set(id, (exists.right.archives ?? []).filter(isSessionId))
          if (exists.right.forkedFrom !== undefined) forkOrigins.add(exists.right.forkedFrom.id)
        }
      }
      if (!yes) {
        if (process.stdin.isTTY !== true) {
          return yield* fail("nothing deleted: no terminal to confirm — pass --yes to delete without asking", 2)
        }
        const ok = yield* Effect.promise(() => confirm(`delete ${ids.length} session(s): ${ids.join(", ")}? [y/N] `))
        if (!ok) return yield* Effect.sync(() => (process.stderr.write("nothing deleted\n"), 0))
      }
      const anyArchives = [...archivesOf.values()].some((named) => named.length > 0)
      const holders = anyArchives ? yield* archiveHolders(store, dir, ids, forkOrigins) : new Map<string, string>()
      // the sessions named, and the archives deleted so far: never read again as someone's archive
      const untouchable = new Set(ids)
      for (const id of ids) {
        const removed = yield* Effect.either(store.remove(dir, id))
        if (removed._tag === "Left") return yield* fail(removed.left.message, 1)
        process.stdout.write(`deleted ${id}${ran.has(id) ? ` (a sub-agent session of ${ran.get(id)})` : ""}\n`)
        yield* removeArchivesOf(store, dir, id, archivesOf.get(id) ?? [], holders, untouchable)
      }
      if (blobs.size === 0) return 0
      const cleaned = yield* Effect.either(checkpointsGc(cwd, blobs))
      if (cleaned._tag === "Left") {
        return yield* Effect.sync(() => (process.stderr.write(`checkpoints kept: ${cleaned.left.message}\n`), 0))
      }
      if (cleaned.right.removed > 0) process.stdout.write(`${gcLine(cleaned.right)}\n`)
      return 0
    })
  )
