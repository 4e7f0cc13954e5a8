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
import { Keeper } from "../sessions/Keeper"
import type { SearchQuery } from "../sessions/SessionSearch"
import { SessionStore } from "../sessions/SessionStore"
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

/** `mm sessions [list] [--json]`: the listing of `/sessions`, ending with how to resume from the shell. */
export const listSessions = (config: string | undefined, json: boolean) =>
  withSessions(
    config,
    Effect.gen(function*() {
      const keeper = yield* Keeper
      const listing = yield* keeper.list(process.cwd())
      const code: ExitCode = listing._tag === "Failed" ? 1 : 0
      if (!json) {
        yield* Console.log(
          sanitize(sessionsListing(listing, "", { all: true, resumeHint: "mm --resume <id> to continue one" }))
        )
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
      const whole = { ...session.right, messages: [...archived, ...session.right.messages] }
      const listing = yield* keeper.list(cwd)
      const forks = listing._tag === "Listed"
        ? listing.entries.flatMap((entry) =>
          entry._tag === "Readable" && entry.summary.forkedFrom?.id === id.right
            ? [{ id: entry.summary.id, turn: entry.summary.forkedFrom.turn }]
            : []
        )
        : []
      process.stdout.write(sanitize(sessionMarkdown(whole, forks.reverse())))
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
 * `mm sessions rm ID…`: deletes exactly the sessions named. Every id must name one session of
 * the project, or nothing is deleted. Asks first on a terminal; without one, only with `--yes`.
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
      const dir = keeper.dirFor(cwd)!
      /** The checkpoints (copies kept for /undo) the sessions named use: removed with them unless another session uses them. */
      const blobs = new Set<string>()
      const archivesOf = new Map<string, ReadonlyArray<string>>()
      const forkOrigins: Array<string> = []
      for (const id of ids) {
        const exists = yield* Effect.either(store.load(dir, id))
        if (exists._tag === "Left" && exists.left.reason === "not-found") {
          return yield* fail(`${exists.left.message} — nothing deleted`, 2)
        }
        if (exists._tag === "Right") {
          for (const blob of blobsOf(exists.right)) blobs.add(blob)
          archivesOf.set(id, (exists.right.archives ?? []).filter(isSessionId))
          if (exists.right.forkedFrom !== undefined) forkOrigins.push(exists.right.forkedFrom.id)
        }
      }
      if (!yes) {
        if (process.stdin.isTTY !== true) {
          return yield* fail("nothing deleted: no terminal to confirm — pass --yes to delete without asking", 2)
        }
        const ok = yield* Effect.promise(() => confirm(`delete ${ids.length} session(s): ${ids.join(", ")}? [y/N] `))
        if (!ok) return yield* Effect.sync(() => (process.stderr.write("nothing deleted\n"), 0))
      }
      // a fork keeps its original's archives in its own list: those stay while a fork names them
      const sharedArchives = new Set<string>()
      const forkedFromIds = new Set(forkOrigins)
      const listing = yield* Effect.either(store.list(dir))
      for (const entry of listing._tag === "Right" ? listing.right : []) {
        if (entry._tag !== "Readable" || ids.includes(entry.summary.id)) continue
        // a remaining fork, or the session a removed fork came from
        const related = entry.summary.forkedFrom !== undefined || forkedFromIds.has(entry.summary.id)
        if (!related) continue
        const fork = yield* Effect.either(store.load(dir, entry.summary.id))
        if (fork._tag === "Right") { for (const archiveId of fork.right.archives ?? []) sharedArchives.add(archiveId) }
      }
      for (const id of ids) {
        const removed = yield* Effect.either(store.remove(dir, id))
        if (removed._tag === "Left") return yield* fail(removed.left.message, 1)
        process.stdout.write(`deleted ${id}\n`)
        // its archives (the turns its compactions replaced) go with it
        for (const archiveId of archivesOf.get(id) ?? []) {
          if (sharedArchives.has(archiveId)) continue
          const gone = yield* Effect.either(store.remove(dir, archiveId))
          if (gone._tag === "Right") process.stdout.write(`deleted ${archiveId} (an archive of ${id})\n`)
        }
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
