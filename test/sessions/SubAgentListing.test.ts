import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { emptySession, type Session } from "../../src/domain/Session"
import type { Listing } from "../../src/sessions/Conversation"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { encodeSession } from "../../src/sessions/SessionCodec"
import { type SessionListing, SessionStore, type SessionStoreShape } from "../../src/sessions/SessionStore"
import { coreLayer, testConfig } from "../support/layers"
import { indexWritten } from "../support/store-fixtures"

// A sub-agent's conversation is a session file of its own with `parent` in its head: every
// listing reads it from there (and keeps it in .index.json), and what offers a session to go on
// with leaves it out, while it stays resumable by its id.

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-sub-agents-"))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))
let serial = 0
const freshDir = () => NodePath.join(root, `case-${++serial}`, ".mm", "sessions")

const at = (minute: number) => new Date(Date.UTC(2026, 11, 7, 10, minute))

const conversation = (id: string, minute: number, question: string, fields: Partial<Session> = {}): Session => ({
  ...emptySession(id, "/project", at(minute)),
  title: question,
  turns: 1,
  messages: [{ role: "user", content: question }, { role: "assistant", content: `done: ${question}` }],
  ...fields
})

const parent = conversation("20261207-100100-0000000a", 1, "refactor the loader")
const parentRef = { id: parent.id, turn: 1, callId: "call_task_1" }
// the sub-agent's conversation is the newest of all: still never the one a bare /resume takes
const child = conversation("20261207-100500-0000000b", 5, "find every caller of load()", { parent: parentRef })

const summaries = (listing: ReadonlyArray<SessionListing>) =>
  listing.map((entry) => (entry._tag === "Readable" ? entry.summary : entry))

/** The files' times moved back, so that the listing keeps them in its index. */
const ageFiles = (dir: string) => {
  for (const name of NodeFs.readdirSync(dir)) NodeFs.utimesSync(NodePath.join(dir, name), 1e9, 1e9)
}

describe("a sub-agent's session in the store", () => {
  it.effect("has `parent` in its head, read from there, kept in .index.json and read back the same", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const store = FileSessionStore.make()
      yield* store.save(dir, parent)
      yield* store.save(dir, child)
      const text = NodeFs.readFileSync(NodePath.join(dir, `${child.id}.json`), "utf8")
      // in the head, after `turns` and before `errors` and `messages`
      expect(JSON.parse(text).parent).toEqual(parentRef)
      expect(text.indexOf("\"parent\"")).toBeGreaterThan(text.indexOf("\"turns\""))
      expect(text.indexOf("\"parent\"")).toBeLessThan(text.indexOf("\"errors\""))
      ageFiles(dir)
      const cold = yield* FileSessionStore.make().list(dir)
      expect(summaries(cold)).toEqual([
        expect.objectContaining({ id: child.id, parent: parentRef }),
        expect.not.objectContaining({ parent: expect.anything() })
      ])
      yield* indexWritten
      const index = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, FileSessionStore.INDEX_FILE), "latin1"))
      // the parent is a row; the sub-agent's session an entry of `others`, with its parent's parts
      expect(index.id).toEqual([parent.id])
      expect(index.others).toHaveLength(1)
      expect(index.others[0]).toEqual(expect.arrayContaining([`${child.id}.json`, parent.id, 1, "call_task_1"]))
      const fromIndex = yield* FileSessionStore.make().list(dir)
      expect(fromIndex).toEqual(cold)
      // the store in memory lists the same texts the same way
      const memory = MemorySessionStore.make()
      for (const one of [parent, child]) memory.controls.writeRaw(dir, `${one.id}.json`, encodeSession(one))
      expect(yield* memory.store.list(dir)).toEqual(cold)
    }))

  it.effect("is not taken for a conversation of its own from an index an earlier mm wrote", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const store = FileSessionStore.make()
      yield* store.save(dir, child)
      ageFiles(dir)
      yield* store.list(dir)
      yield* indexWritten
      const indexPath = NodePath.join(dir, FileSessionStore.INDEX_FILE)
      const written = JSON.parse(NodeFs.readFileSync(indexPath, "latin1"))
      const [entry] = written.others
      // what an mm that read no `parent` kept: the same file, as a row without it (index version 5)
      const stat = entry.slice(1, 5)
      const old = {
        version: 5,
        cwds: ["/project"],
        id: [child.id],
        size: [stat[0]],
        mtimeMs: [stat[1]],
        ctimeMs: [stat[2]],
        ino: [stat[3]],
        cwd: [0],
        createdAt: [child.createdAt],
        updatedAt: [child.updatedAt],
        title: [child.title],
        turns: [1],
        errors: [0],
        others: []
      }
      NodeFs.writeFileSync(indexPath, JSON.stringify(old))
      expect(summaries(yield* FileSessionStore.make().list(dir))).toEqual([
        expect.objectContaining({ id: child.id, parent: parentRef })
      ])
    }))
})

describe("a sub-agent's session in what the keeper offers", () => {
  const DIR = "/project/.mm/sessions"
  const withKeeper = <A, E>(use: (keeper: typeof Keeper.Service) => Effect.Effect<A, E>) =>
    Effect.gen(function*() {
      const dir = freshDir()
      const files = FileSessionStore.make()
      yield* files.save(dir, parent)
      yield* files.save(dir, child)
      const memory = MemorySessionStore.make()
      for (const one of [parent, child]) memory.controls.writeRaw(DIR, `${one.id}.json`, encodeSession(one))
      // the same answers from the files on disk (their dir given as absolute) and from memory
      const stores: ReadonlyArray<readonly [SessionStoreShape, string]> = [[files, dir], [memory.store, DIR]]
      const results: Array<A> = []
      for (const [store, sessions] of stores) {
        const layer = coreLayer(
          testConfig("http://127.0.0.1:9/v1", { sessions: { enabled: true, dir: sessions } }),
          Layer.succeed(SessionStore, store)
        )
        results.push(yield* Effect.provide(Effect.flatMap(Keeper, use), layer))
      }
      expect(results[1]).toEqual(results[0])
      return results[0]
    })

  it.effect("lists it only when asked for sub-agents", () =>
    Effect.gen(function*() {
      const ids = (listing: Listing) =>
        listing._tag === "Listed"
          ? listing.entries.map((entry) => (entry._tag === "Readable" ? entry.summary.id : ""))
          : []
      const [plain, all] = yield* withKeeper((keeper) =>
        Effect.all([keeper.list("/project"), keeper.list("/project", { subAgents: true })]).pipe(
          Effect.map((listings) => listings.map(ids))
        )
      )
      expect(plain).toEqual([parent.id])
      expect(all).toEqual([child.id, parent.id])
    }))

  it.effect("is never what a bare /resume or --continue takes, and is resumed by its id or a part of it", () =>
    Effect.gen(function*() {
      const resumed = yield* withKeeper((keeper) =>
        Effect.gen(function*() {
          const latest = yield* (yield* keeper.open("/project", { createFile: "later" })).resume(undefined)
          const byId = yield* (yield* keeper.open("/project", { createFile: "later" })).resume(child.id)
          const bySuffix = yield* (yield* keeper.open("/project", { createFile: "later" })).resume("0000000b")
          return [latest?.id, byId?.id, bySuffix?.id]
        })
      )
      expect(resumed).toEqual([parent.id, child.id, child.id])
    }))
})
