import { execFileSync } from "node:child_process"
import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import type { StoreError } from "../../src/domain/Errors"
import { emptySession, type Session } from "../../src/domain/Session"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { encodeSession } from "../../src/sessions/SessionCodec"
import { type SessionListing, SessionStore, type SessionStoreShape } from "../../src/sessions/SessionStore"
import { indexedNames, indexWritten, richSession } from "../support/store-fixtures"

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-store-"))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))
let serial = 0
const freshDir = () => NodePath.join(root, `case-${++serial}`, "sessions")

interface HarnessOptions {
  readonly newId?: () => string
}

/** One store over one directory, and hands on that directory behind the store's back. */
interface Harness {
  readonly dir: string
  readonly layer: Layer.Layer<SessionStore>
  /** A directory the store cannot write. */
  readonly unwritable: string
  readonly writeRaw: (name: string, text: string) => void
  readonly readRaw: (name: string) => string | undefined
  readonly names: () => ReadonlyArray<string>
  /** File system calls made so far (file store only). */
  readonly fsCalls?: () => ReadonlyArray<string>
}

const countingFs = () => {
  const calls: Array<string> = []
  const fs = new Proxy(NodeFs, {
    get: (target, key) => {
      const value = Reflect.get(target, key)
      return typeof value === "function"
        ? (...args: Array<unknown>) => {
          calls.push(`${String(key)} ${String(args[0])}`)
          return Reflect.apply(value, target, args)
        }
        : value
    }
  }) as FileSessionStore.Fs
  return { fs, calls }
}

const fileHarness = (options: HarnessOptions = {}): Harness => {
  const dir = freshDir()
  const { fs, calls } = countingFs()
  const blocker = NodePath.join(root, `case-${serial}`, "a-file")
  NodeFs.mkdirSync(NodePath.dirname(blocker), { recursive: true })
  NodeFs.writeFileSync(blocker, "not a directory")
  const path = (name: string) => NodePath.join(dir, name)
  return {
    dir,
    layer: FileSessionStore.layerWith({ fs, ...options }),
    unwritable: NodePath.join(blocker, "sessions"),
    writeRaw: (name, text) => {
      NodeFs.mkdirSync(dir, { recursive: true })
      NodeFs.writeFileSync(path(name), text)
    },
    readRaw: (name) => (NodeFs.existsSync(path(name)) ? NodeFs.readFileSync(path(name), "utf8") : undefined),
    names: () => (NodeFs.existsSync(dir) ? NodeFs.readdirSync(dir).sort() : []),
    fsCalls: () => [...calls]
  }
}

const memoryHarness = (options: HarnessOptions = {}): Harness => {
  const dir = "/memory/project/.mm/sessions"
  const unwritable = "/memory/readonly/.mm/sessions"
  const { controls, store } = MemorySessionStore.make({ ...options, readOnlyDirs: [unwritable] })
  return {
    dir,
    layer: Layer.succeed(SessionStore, store),
    unwritable,
    writeRaw: (name, text) => controls.writeRaw(dir, name, text),
    readRaw: (name) => controls.readRaw(dir, name),
    names: () => controls.names(dir)
  }
}

const withStore = <A, E>(harness: Harness, use: (store: SessionStoreShape) => Effect.Effect<A, E>) =>
  Effect.flatMap(SessionStore, use).pipe(Effect.provide(harness.layer))

const ID_A = "20260916-093012-77be01d3"
const ID_B = "20260916-101530-4f2a9c1e"
const ID_C = "20260915-181200-0a1b2c3d"

const idOf = (listing: SessionListing) => (listing._tag === "Readable" ? listing.summary.id : listing.id)

const expectOneLine = (error: StoreError) => {
  expect(error.message).not.toContain("\n")
  expect(error.message.length).toBeLessThan(300)
}

/** Ids in a fixed order, then fresh ones: the first collisions are forced. */
const scriptedIds = (...ids: ReadonlyArray<string>) => {
  let next = 0
  let n = 0
  return () => ids[next++] ?? `20260101-000000-${(n++).toString(16).padStart(8, "0")}`
}

const storeSuite = (name: string, makeHarness: (options?: HarnessOptions) => Harness) =>
  describe(name, () => {
    it.effect("round-trips every message, mark and unknown field", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const created = yield* store.createNew(h.dir, "/work/project")
          expect(created.messages).toEqual([])
          expect(created.errors).toEqual([])
          const session = richSession(created.id)
          yield* store.save(h.dir, session)
          const loaded = yield* store.load(h.dir, created.id)
          expect(loaded).toEqual(session)
          yield* store.save(h.dir, loaded)
          const text = h.readRaw(`${created.id}.json`)!
          expect(text).toBe(encodeSession(session))
          expect(Object.keys(JSON.parse(text))).toEqual([
            "version",
            "numbering",
            "id",
            "cwd",
            "createdAt",
            "updatedAt",
            "title",
            "turns",
            "errors",
            "messages",
            "origin",
            "pinned"
          ])
          expect(text).toContain("\n  \"version\": 1,\n  \"numbering\": 2,\n")
          // the mark is the file's: a session read back has none, and the model never sees it
          expect("numbering" in loaded).toBe(false)
        }))
    })

    it.effect("keeps what it stored away from the caller's objects", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const session = richSession(ID_A) as unknown as { messages: Array<{ content: string | null }>; title: string }
          yield* store.save(h.dir, session as unknown as Session)
          session.messages[1].content = "changed"
          session.title = "changed"
          const loaded = yield* store.load(h.dir, ID_A)
          expect(loaded).toEqual(richSession(ID_A))
          ;(loaded.messages[1] as { content: string | null }).content = "changed again"
          expect(yield* store.load(h.dir, ID_A)).toEqual(richSession(ID_A))
        }))
    })

    it.effect("loads a file without errors like one with an empty array", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const { errors: _errors, messages: _messages, ...old } = emptySession(ID_A, "/p", new Date(0))
          h.writeRaw(`${ID_A}.json`, JSON.stringify({ messages: [{ role: "user", content: "hi" }], ...old }))
          const loaded = yield* store.load(h.dir, ID_A)
          expect(loaded.errors).toEqual([])
          expect(loaded.messages).toHaveLength(1)
          // its one question is a turn held, though the file (written before cancelled turns counted) said 0
          expect(loaded.turns).toBe(1)
          const [listing] = yield* store.list(h.dir)
          expect(listing).toEqual({
            _tag: "Readable",
            summary: {
              id: ID_A,
              cwd: "/p",
              createdAt: old.createdAt,
              updatedAt: old.updatedAt,
              title: "",
              turns: 1,
              errors: 0
            }
          })
        }))
    })

    it.effect("creates new sessions without ever overwriting one", () => {
      const h = makeHarness({ newId: scriptedIds(ID_A, ID_A, ID_A, ID_B) })
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const first = yield* store.createNew(h.dir, "/p")
          expect(first.id).toBe(ID_A)
          yield* store.save(h.dir, richSession(ID_A))
          const second = yield* store.createNew(h.dir, "/p")
          expect(second.id).toBe(ID_B)
          expect(yield* store.load(h.dir, ID_A)).toEqual(richSession(ID_A))
          const more = yield* Effect.forEach(Array.from({ length: 20 }), () => store.createNew(h.dir, "/p"))
          expect(new Set([first.id, second.id, ...more.map((s) => s.id)]).size).toBe(22)
          expect(h.names().filter((n) => n.endsWith(".json") && !n.startsWith("."))).toHaveLength(22)
        }))
    })

    it.effect("creates real ids and an empty session", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const session = yield* store.createNew(h.dir, "/work/p")
          expect(session.id).toMatch(/^\d{8}-\d{6}-[0-9a-f]{8}$/)
          expect(session).toMatchObject({ version: 1, cwd: "/work/p", title: "", turns: 0, messages: [], errors: [] })
          expect(yield* store.load(h.dir, session.id)).toEqual(session)
        }))
    })

    it.effect("archives a conversation under a new id", () => {
      const h = makeHarness({ newId: scriptedIds(ID_B, ID_C) })
      return withStore(h, (store) =>
        Effect.gen(function*() {
          yield* store.save(h.dir, richSession(ID_A))
          h.writeRaw(`${ID_B}.json`, "taken")
          const archived = yield* store.saveAsNew(h.dir, richSession(ID_A))
          expect(archived.id).toBe(ID_C)
          expect(archived).toEqual({ ...richSession(ID_A), id: ID_C })
          expect(yield* store.load(h.dir, ID_C)).toEqual(archived)
          expect(yield* store.load(h.dir, ID_A)).toEqual(richSession(ID_A))
          expect(h.readRaw(`${ID_B}.json`)).toBe("taken")
        }))
    })

    it.effect("refuses ids from outside before touching anything", () => {
      const h = makeHarness()
      const bad = [
        "..",
        "../x",
        "../../etc/passwd",
        "/etc/passwd",
        "x".repeat(10 * 1024),
        `${ID_A}\u0000`,
        "20260916-101530-4F2A9C1E",
        "",
        `${ID_A}/../x`
      ]
      return withStore(h, (store) =>
        Effect.gen(function*() {
          yield* store.save(h.dir, richSession(ID_A))
          const outside = NodePath.join(h.dir, "..", "x.json")
          if (h.fsCalls !== undefined) NodeFs.writeFileSync(outside, encodeSession(richSession(ID_B)))
          const before = h.fsCalls?.().length
          for (const id of bad) {
            const failures = [
              yield* Effect.flip(store.load(h.dir, id)),
              yield* Effect.flip(store.save(h.dir, { ...richSession(ID_A), id })),
              yield* Effect.flip(store.save(h.dir, { ...richSession(ID_A), id, version: 99 }))
            ]
            for (const error of failures) {
              expect(error.reason).toBe("bad-id")
              expect(error.message).toMatch(/^not a session id: /)
              expectOneLine(error)
            }
          }
          expect(h.fsCalls?.().length).toBe(before)
          if (h.fsCalls !== undefined) {
            expect(NodeFs.readFileSync(outside, "utf8")).toBe(encodeSession(richSession(ID_B)))
          }
          expect(h.names()).toEqual([`${ID_A}.json`])
        }))
    })

    it.effect("says when a session does not exist", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const error = yield* Effect.flip(store.load(h.dir, ID_A))
          expect(error.reason).toBe("not-found")
          expect(error.message).toBe(`no session ${ID_A} in ${h.dir}`)
          expect(yield* store.list(h.dir)).toEqual([])
        }))
    })

    it.effect("refuses a newer version on load and on save, leaving the file as it was", () => {
      const h = makeHarness()
      const newer = JSON.stringify({ version: 2, id: ID_A, shape: "different", messages: {} }, null, 2)
      const newerLate = JSON.stringify({
        messages: Array.from({ length: 200 }, (_, i) => ({ role: "user", content: `padding ${i} `.repeat(10) })),
        id: ID_B,
        version: 3
      })
      return withStore(h, (store) =>
        Effect.gen(function*() {
          h.writeRaw(`${ID_A}.json`, newer)
          h.writeRaw(`${ID_B}.json`, newerLate)
          const onLoad = yield* Effect.flip(store.load(h.dir, ID_A))
          expect(onLoad.reason).toBe("newer-version")
          expect(onLoad.message).toBe(`session ${ID_A} was written by a newer mm (version 2); this mm reads version 1`)
          const onSave = yield* Effect.flip(store.save(h.dir, richSession(ID_A)))
          expect(onSave.reason).toBe("newer-version")
          expect(onSave.message).toBe(
            `session ${ID_A} was written by a newer mm (version 2); this mm reads version 1 and leaves it as it is`
          )
          expectOneLine(onSave)
          expect(h.readRaw(`${ID_A}.json`)).toBe(newer)
          const late = yield* Effect.flip(store.save(h.dir, richSession(ID_B)))
          expect(late.reason).toBe("newer-version")
          expect(late.message).toContain("version 3")
          expect(h.readRaw(`${ID_B}.json`)).toBe(newerLate)
          const fromNewer = yield* Effect.flip(store.save(h.dir, { ...richSession(ID_C), version: 2 }))
          expect(fromNewer.reason).toBe("newer-version")
          expect(h.readRaw(`${ID_C}.json`)).toBeUndefined()
          const listing = yield* store.list(h.dir)
          expect(listing).toEqual([
            { _tag: "Unreadable", id: ID_B, reason: expect.stringContaining("newer mm (version 3)") },
            { _tag: "Unreadable", id: ID_A, reason: expect.stringContaining("newer mm (version 2)") }
          ])
        }))
    })

    it.effect("a save that expects the last write it saw refuses to replace another writer's version", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const mine = { ...richSession(ID_A), updatedAt: "2026-09-16T10:00:00.000Z" }
          yield* store.save(h.dir, mine)
          const theirs = { ...mine, title: "theirs", updatedAt: "2026-09-16T10:05:00.000Z" }
          yield* store.save(h.dir, theirs, mine.updatedAt)
          const refused = yield* Effect.flip(store.save(h.dir, { ...mine, title: "mine again" }, mine.updatedAt))
          expect(refused.reason).toBe("conflict")
          expect(refused.message).toBe(`session ${ID_A} was changed by another mm since it was loaded`)
          expect((yield* store.load(h.dir, ID_A)).title).toBe("theirs")
          yield* store.save(h.dir, { ...theirs, title: "after reload" }, theirs.updatedAt)
          expect((yield* store.load(h.dir, ID_A)).title).toBe("after reload")
        }))
    })

    it.effect("lists damaged files as unreadable, with the reason, beside the good ones", () => {
      const h = makeHarness()
      const good = encodeSession(richSession(ID_A))
      const big = encodeSession({
        ...richSession(ID_A),
        messages: Array.from({ length: 300 }, (_, i) => ({ role: "user" as const, content: `line ${i} `.repeat(20) }))
      })
      const damaged: Record<string, [string, RegExp]> = {
        "20260101-000000-00000001": [good.slice(0, good.length / 2), /JSON at position \d+$/],
        "20260101-000000-00000002": ["hello, not json", /JSON/],
        "20260101-000000-00000003": [
          JSON.stringify({ ...JSON.parse(good), messages: "x" }),
          /^messages: expected an array, got "x"$/
        ],
        "20260101-000000-00000004": ["", /^empty file$/],
        "20260101-000000-00000005": ["[1, 2]", /^expected a JSON object, got an array$/],
        "20260101-000000-00000006": [big.slice(0, big.length - 200), /JSON at position \d+$/],
        "20260101-000000-00000009": [good.slice(0, good.lastIndexOf("}")), /JSON at position \d+$/],
        "20260101-000000-00000008": [JSON.stringify({ version: 1 }), /^id: missing$/],
        "20260101-000000-00000007": [big.slice(0, big.indexOf("}", big.length / 2) + 1), /JSON at position \d+$/]
      }
      return withStore(h, (store) =>
        Effect.gen(function*() {
          h.writeRaw(`${ID_A}.json`, good)
          for (const [id, [text]] of Object.entries(damaged)) h.writeRaw(`${id}.json`, text)
          h.writeRaw("notes.txt", "x")
          h.writeRaw("20260916-101530-4F2A9C1E.json", good)
          h.writeRaw(`${ID_B}.json.bak`, good)
          h.writeRaw(`.${ID_B}.json.123.0123abcd.tmp`, good.slice(0, 10))
          h.writeRaw(
            `${ID_C}.json`,
            JSON.stringify({ ...JSON.parse(good), messages: [{ role: "robot", content: "x" }] }, null, 2)
          )
          const listing = yield* store.list(h.dir)
          expect(listing.map(idOf)).toEqual([ID_A, ID_C, ...Object.keys(damaged).sort().reverse()])
          expect(listing[1]._tag).toBe("Readable")
          const robot = yield* Effect.flip(store.load(h.dir, ID_C))
          expect(robot.message).toBe(
            `session ${ID_C} is unreadable: messages[0].role: expected "system", "user", "assistant" or "tool", got "robot"`
          )
          expect(listing[0]._tag).toBe("Readable")
          for (const entry of listing.slice(2)) {
            expect(entry._tag).toBe("Unreadable")
            if (entry._tag !== "Unreadable") continue
            const [, reason] = damaged[entry.id]
            expect(entry.reason).toMatch(reason)
            const error = yield* Effect.flip(store.load(h.dir, entry.id))
            expect(error.reason).toBe("unreadable")
            expect(error.message).toBe(`session ${entry.id} is unreadable: ${entry.reason}`)
            expectOneLine(error)
          }
        }))
    })

    it.effect("lists newest id first, with turns, title and the number of errors", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          yield* store.save(h.dir, { ...richSession(ID_B), turns: 7, title: "say \"hi\" \\ then ✓" })
          yield* store.save(h.dir, { ...emptySession(ID_C, "/c", new Date(0)) })
          yield* store.save(h.dir, { ...richSession(ID_A), errors: [] })
          const listing = yield* store.list(h.dir)
          expect(listing).toEqual([
            {
              _tag: "Readable",
              summary: {
                id: ID_B,
                cwd: "/work/project",
                createdAt: "2026-09-16T10:15:30.412Z",
                updatedAt: "2026-09-16T10:17:02.093Z",
                title: "say \"hi\" \\ then ✓",
                turns: 7,
                errors: 2
              }
            },
            { _tag: "Readable", summary: expect.objectContaining({ id: ID_A, errors: 0, turns: 2 }) },
            { _tag: "Readable", summary: expect.objectContaining({ id: ID_C, cwd: "/c", errors: 0, turns: 0 }) }
          ])
        }))
    })

    it.effect("counts a long errors array that does not fit in the head of the file", () => {
      const h = makeHarness()
      const errors = Array.from({ length: 200 }, (_, i) => ({
        kind: "generation" as const,
        at: "2026-09-18T08:01:02.003Z",
        turns: i,
        question: `question ${i} with "quotes" and \\ and ]} brackets`,
        line: "no token for 120 s",
        raw: "x".repeat(i * 50)
      }))
      return withStore(h, (store) =>
        Effect.gen(function*() {
          yield* store.save(h.dir, { ...richSession(ID_A), errors })
          const [listing] = yield* store.list(h.dir)
          expect(listing).toMatchObject({ _tag: "Readable", summary: { errors: 200, title: "add a /new command" } })
        }))
    })

    it.effect("reads a hand-edited file whose fields are in another order", () => {
      const h = makeHarness()
      const session = richSession(ID_A)
      const reordered = Object.fromEntries([
        ["messages", session.messages],
        ["errors", session.errors],
        ...Object.entries(session).filter(([key]) => key !== "messages" && key !== "errors")
      ])
      return withStore(h, (store) =>
        Effect.gen(function*() {
          h.writeRaw(`${ID_A}.json`, JSON.stringify(reordered))
          h.writeRaw(`${ID_B}.json`, JSON.stringify({ ...session, id: "not the file name", title: "copied" }))
          const listing = yield* store.list(h.dir)
          expect(listing).toMatchObject([
            { _tag: "Readable", summary: { id: ID_B, title: "copied", errors: 2 } },
            { _tag: "Readable", summary: { id: ID_A, title: session.title, errors: 2 } }
          ])
          expect((yield* store.load(h.dir, ID_B)).id).toBe(ID_B)
        }))
    })

    it.effect("cannot write an unwritable directory, and says so on one line", () => {
      const h = makeHarness()
      return withStore(h, (store) =>
        Effect.gen(function*() {
          const failures = [
            yield* Effect.flip(store.prepare(h.unwritable)),
            yield* Effect.flip(store.createNew(h.unwritable, "/p")),
            yield* Effect.flip(store.saveAsNew(h.unwritable, richSession(ID_A))),
            yield* Effect.flip(store.save(h.unwritable, richSession(ID_A)))
          ]
          for (const error of failures) {
            expect(error.reason).toBe("io")
            expect(error.message).toMatch(new RegExp(`^cannot write ${h.unwritable}`))
            expectOneLine(error)
          }
          yield* store.prepare(h.dir)
        }))
    })
  })

storeSuite("FileSessionStore", fileHarness)
storeSuite("MemorySessionStore", memoryHarness)

// -- the file store only ------------------------------------------------------------------

const modeOf = (path: string) => NodeFs.statSync(path).mode & 0o777

describe("FileSessionStore on disk", () => {
  it.effect("makes the directory 0700 and every file 0600 whatever the umask", () =>
    Effect.gen(function*() {
      const store = FileSessionStore.make()
      const dir = freshDir()
      const previous = process.umask(0)
      try {
        yield* store.prepare(dir)
        const created = yield* store.createNew(dir, "/p")
        yield* store.save(dir, richSession(ID_A))
        const archived = yield* store.saveAsNew(dir, richSession(ID_A))
        NodeFs.utimesSync(NodePath.join(dir, `${ID_A}.json`), new Date(0), new Date(0))
        yield* store.list(dir)
        yield* indexWritten
        expect(modeOf(dir)).toBe(0o700)
        for (const name of [`${created.id}.json`, `${ID_A}.json`, `${archived.id}.json`, FileSessionStore.INDEX_FILE]) {
          expect(modeOf(NodePath.join(dir, name))).toBe(0o600)
        }
      } finally {
        process.umask(previous)
      }
    }))

  it.effect("leaves no temporary file behind, even when a write fails", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const full = new Proxy(NodeFs, {
        get: (target, key) =>
          key === "writeFileSync"
            ? () => {
              throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" })
            }
            : Reflect.get(target, key)
      }) as FileSessionStore.Fs
      const healthy = FileSessionStore.make()
      yield* healthy.save(dir, richSession(ID_A))
      const before = NodeFs.readFileSync(NodePath.join(dir, `${ID_A}.json`), "utf8")
      const failing = FileSessionStore.make({ fs: full })
      const error = yield* Effect.flip(failing.save(dir, { ...richSession(ID_A), title: "new" }))
      expect(error.reason).toBe("io")
      expect(error.message).toBe(`cannot write ${NodePath.join(dir, `${ID_A}.json`)}: no space left on device`)
      expect(error.raw).toContain("ENOSPC")
      expect((yield* Effect.flip(failing.createNew(dir, "/p"))).message).toBe(
        `cannot write ${dir}: no space left on device`
      )
      expect(NodeFs.readdirSync(dir)).toEqual([`${ID_A}.json`])
      expect(NodeFs.readFileSync(NodePath.join(dir, `${ID_A}.json`), "utf8")).toBe(before)
      yield* healthy.prepare(dir)
      yield* healthy.createNew(dir, "/p")
      expect(NodeFs.readdirSync(dir).filter((name) => name.endsWith(".tmp"))).toEqual([])
    }))

  it.effect("sweeps temporary files an old crash left, and only those", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const store = FileSessionStore.make()
      NodeFs.mkdirSync(dir, { recursive: true })
      const stale = NodePath.join(dir, `.${ID_A}.json.4242.0123abcd.tmp`)
      const recent = NodePath.join(dir, `.${ID_B}.json.4243.0123abcd.tmp`)
      const foreign = NodePath.join(dir, "keep.tmp")
      for (const path of [stale, recent, foreign]) NodeFs.writeFileSync(path, "{")
      NodeFs.utimesSync(stale, new Date(0), new Date(0))
      NodeFs.utimesSync(foreign, new Date(0), new Date(0))
      expect(yield* store.list(dir)).toEqual([])
      expect(NodeFs.readdirSync(dir).sort()).toEqual([`.${ID_B}.json.4243.0123abcd.tmp`, "keep.tmp"])
    }))

  it.effect("checks a directory without creating it; the first session creates it", () =>
    Effect.gen(function*() {
      const store = FileSessionStore.make()
      const dir = NodePath.join(freshDir(), "deeper", "sessions")
      yield* store.prepare(dir)
      expect(NodeFs.existsSync(NodePath.dirname(dir))).toBe(false)
      yield* store.createNew(dir, "/p")
      expect(NodeFs.statSync(dir).isDirectory()).toBe(true)
    }))

  it.effect("a FIFO named like a session is listed as unreadable and refused by load, never waited on", () =>
    Effect.gen(function*() {
      const store = FileSessionStore.make()
      const dir = freshDir()
      NodeFs.mkdirSync(dir, { recursive: true })
      const fifo = NodePath.join(dir, `${ID_A}.json`)
      execFileSync("mkfifo", [fifo])
      expect(yield* store.list(dir)).toEqual([{ _tag: "Unreadable", id: ID_A, reason: "not a regular file" }])
      const error = yield* Effect.flip(store.load(dir, ID_A))
      expect(error.message).toBe(`session ${ID_A} is unreadable: not a regular file`)
    }))

  it.effect("names the reason when a directory cannot be made", () =>
    Effect.gen(function*() {
      const store = FileSessionStore.make()
      const blocker = NodePath.join(NodePath.dirname(freshDir()), "file")
      NodeFs.mkdirSync(NodePath.dirname(blocker), { recursive: true })
      NodeFs.writeFileSync(blocker, "")
      const underFile = yield* Effect.flip(store.prepare(NodePath.join(blocker, "sessions")))
      expect(underFile.message).toBe(`cannot write ${blocker}/sessions: ${blocker} is a file, not a directory`)
      const isFile = yield* Effect.flip(store.prepare(blocker))
      expect(isFile.message).toBe(`cannot write ${blocker}: it is a file, not a directory`)
      const proc = yield* Effect.flip(store.createNew("/proc/mm-no-such/sessions", "/p"))
      expect(proc.message).toMatch(/^cannot write \/proc\/mm-no-such\/sessions: \S/)
      expectOneLine(proc)
      const listed = yield* Effect.flip(store.list(NodePath.join(blocker, "sessions")))
      expect(listed.message).toBe(`cannot list ${blocker}/sessions: not a directory`)
    }))

  describe("listing cache", () => {
    const past = (n: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, n))
    const setup = () => {
      const dir = freshDir()
      const { fs, calls } = countingFs()
      const store = FileSessionStore.make({ fs })
      const sessionReads = () =>
        calls.filter((call) => /^(openSync|readFileSync) .*\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(call)).length
      const readsSince = () => {
        const start = sessionReads()
        return () => sessionReads() - start
      }
      const age = (id: string, n: number) => NodeFs.utimesSync(NodePath.join(dir, `${id}.json`), past(n), past(n))
      return { dir, fs, store, calls, readsSince, age }
    }
    const titles = (listing: ReadonlyArray<SessionListing>) =>
      listing.map((
        l
      ) => (l._tag === "Readable" ? `${l.summary.id} ${l.summary.title} ${l.summary.turns}` : `${l.id} !`))

    it.effect("answers from the cache while files are unchanged, in this process and the next", () =>
      Effect.gen(function*() {
        const { dir, store, readsSince, age } = setup()
        for (const id of [ID_A, ID_B, ID_C]) {
          yield* store.save(dir, richSession(id))
          age(id, 1)
        }
        const reads = readsSince()
        const cold = yield* store.list(dir)
        expect(reads()).toBe(3)
        expect(yield* store.list(dir)).toEqual(cold)
        expect(reads()).toBe(3)
        yield* indexWritten
        const index = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, FileSessionStore.INDEX_FILE), "utf8"))
        // newest id first: the order a listing takes them in
        expect(indexedNames(index)).toEqual([ID_C, ID_A, ID_B].sort().reverse().map((id) => `${id}.json`))
        const next = setup()
        const nextReads = next.readsSince()
        expect(yield* FileSessionStore.make({ fs: next.fs }).list(dir)).toEqual(cold)
        expect(nextReads()).toBe(0)
        expect(next.calls).toContain(`openSync ${NodePath.join(dir, FileSessionStore.INDEX_FILE)}`)
      }))

    /** A file system counting the bytes read from each path. */
    const bytesCountingFs = () => {
      const paths = new Map<number, string>()
      const read = new Map<string, number>()
      const fs = new Proxy(NodeFs, {
        get: (target, key) => {
          if (key === "openSync") {
            return (...args: Parameters<typeof NodeFs.openSync>) => {
              const fd = NodeFs.openSync(...args)
              paths.set(fd, String(args[0]))
              return fd
            }
          }
          if (key === "readSync") {
            return (fd: number, ...rest: Array<unknown>) => {
              const n = Reflect.apply(NodeFs.readSync, NodeFs, [fd, ...rest]) as number
              const path = paths.get(fd)
              if (path !== undefined) read.set(path, (read.get(path) ?? 0) + n)
              return n
            }
          }
          return Reflect.get(target, key)
        }
      }) as FileSessionStore.Fs
      return { fs, bytesOf: (path: string) => read.get(path) ?? 0, reset: () => read.clear() }
    }
    // q1 cancelled (kept with its partial answer), q2 answered: two turns held; an answer long
    // enough that a file read whole is told from one whose head alone is read
    const twoTurns = (id: string): Session => ({
      ...emptySession(id, "/work/project", new Date(0)),
      title: "q1",
      turns: 2,
      messages: [
        { role: "user", content: "q1" },
        { role: "assistant", content: "half an answer" },
        { role: "user", content: "q2" },
        { role: "assistant", content: "a2 ".repeat(5000) }
      ]
    })
    /** The file an earlier mm wrote of it, in mm's own layout: no `numbering`, the cancelled turn not counted. */
    const oldText = (id: string): string => {
      const { numbering: _numbering, ...fields } = JSON.parse(encodeSession({ ...twoTurns(id), turns: 1 }))
      return JSON.stringify(fields, null, 2) + "\n"
    }
    const turnsListed = (listing: ReadonlyArray<SessionListing>) =>
      listing.map((l) => (l._tag === "Readable" ? `${l.summary.id} ${l.summary.turns}` : `${l.id} !`))
    const unchanged = (path: string) => {
      const before = { text: NodeFs.readFileSync(path, "utf8"), stat: NodeFs.statSync(path) }
      return () => {
        const stat = NodeFs.statSync(path)
        expect(NodeFs.readFileSync(path, "utf8")).toBe(before.text)
        expect([stat.ino, stat.mtimeMs, stat.ctimeMs]).toEqual([
          before.stat.ino,
          before.stat.mtimeMs,
          before.stat.ctimeMs
        ])
      }
    }

    it.effect("reads a file written before the numbering whole once, lists its turns renumbered, keeps them indexed", () =>
      Effect.gen(function*() {
        const { age, dir, readsSince, store } = setup()
        NodeFs.mkdirSync(dir, { recursive: true })
        const oldPath = NodePath.join(dir, `${ID_A}.json`)
        const newPath = NodePath.join(dir, `${ID_B}.json`)
        NodeFs.writeFileSync(oldPath, oldText(ID_A))
        yield* store.save(dir, twoTurns(ID_B))
        expect(NodeFs.readFileSync(newPath, "utf8")).toContain("\n  \"numbering\": 2,\n")
        age(ID_A, 1)
        age(ID_B, 1)
        const oldKept = unchanged(oldPath)
        const newKept = unchanged(newPath)
        const counted = bytesCountingFs()
        const cold = yield* FileSessionStore.make({ fs: counted.fs }).list(dir)
        expect(turnsListed(cold)).toEqual([`${ID_B} 2`, `${ID_A} 2`])
        // the old file read whole; of the new one, its head and its last bytes
        expect(counted.bytesOf(oldPath)).toBeGreaterThanOrEqual(NodeFs.statSync(oldPath).size)
        expect(counted.bytesOf(newPath)).toBeLessThan(NodeFs.statSync(newPath).size / 2)
        expect((yield* store.load(dir, ID_A)).turns).toBe(2)
        // the index written then holds the count: the next process reads neither file
        yield* indexWritten
        const indexPath = NodePath.join(dir, FileSessionStore.INDEX_FILE)
        const index = JSON.parse(NodeFs.readFileSync(indexPath, "utf8"))
        expect(index).toMatchObject({ version: 6, turns: [2, 2] })
        const reads = readsSince()
        expect(turnsListed(yield* store.list(dir))).toEqual(turnsListed(cold))
        expect(reads()).toBe(0)
        // reading either, listed or loaded, never writes it
        oldKept()
        newKept()
        // an index an earlier mm wrote (3: before cancelled turns counted; 4: its head trusted
        // without the mark) is not used: the old file is read whole again, the new one by its head
        for (const version of [3, 4]) {
          NodeFs.writeFileSync(indexPath, JSON.stringify({ ...index, version, turns: [2, 1] }))
          counted.reset()
          expect(turnsListed(yield* FileSessionStore.make({ fs: counted.fs }).list(dir))).toEqual(turnsListed(cold))
          expect(counted.bytesOf(oldPath)).toBeGreaterThanOrEqual(NodeFs.statSync(oldPath).size)
          expect(counted.bytesOf(newPath)).toBeLessThan(NodeFs.statSync(newPath).size / 2)
          yield* indexWritten
        }
        oldKept()
        newKept()
      }))

    it.effect("reads whole a head whose turns no file of its size could hold: the full read's count", () =>
      Effect.gen(function*() {
        const { age, dir, store } = setup()
        yield* store.save(dir, twoTurns(ID_A))
        const path = NodePath.join(dir, `${ID_A}.json`)
        // edited by hand
        NodeFs.writeFileSync(path, NodeFs.readFileSync(path, "utf8").replace("\"turns\": 2,", "\"turns\": 1000000000,"))
        age(ID_A, 1)
        const counted = bytesCountingFs()
        expect(turnsListed(yield* FileSessionStore.make({ fs: counted.fs }).list(dir))).toEqual([`${ID_A} 2`])
        expect(counted.bytesOf(path)).toBeGreaterThanOrEqual(NodeFs.statSync(path).size)
        expect((yield* store.load(dir, ID_A)).turns).toBe(2)
      }))

    it.effect("writes the index file once the listing is returned, once for the listings of one turn", () =>
      Effect.gen(function*() {
        const { dir, store, calls, age } = setup()
        for (const id of [ID_A, ID_B]) {
          yield* store.save(dir, richSession(id))
          age(id, 1)
        }
        const indexPath = NodePath.join(dir, FileSessionStore.INDEX_FILE)
        // the index's temporary file renamed over it
        const indexWrites = () =>
          calls.filter((call) => call.startsWith(`renameSync ${NodePath.join(dir, ".index.")}`)).length
        const listing = yield* store.list(dir)
        // not on the listing's way: the caller has it first
        expect(NodeFs.existsSync(indexPath)).toBe(false)
        // a second listing in the same turn (a file gone meanwhile) does not write it again
        NodeFs.unlinkSync(NodePath.join(dir, `${ID_B}.json`))
        expect(yield* store.list(dir)).toEqual(
          listing.filter((entry) => entry._tag === "Readable" && entry.summary.id !== ID_B)
        )
        yield* indexWritten
        expect(indexWrites()).toBe(1)
        const index = JSON.parse(NodeFs.readFileSync(indexPath, "utf8"))
        expect(indexedNames(index)).toEqual([`${ID_A}.json`])
        // nothing new: nothing written
        yield* store.list(dir)
        yield* indexWritten
        expect(indexWrites()).toBe(1)
      }))

    it.effect("the index file is ASCII alone, and a title in any script reads back the same from it", () =>
      Effect.gen(function*() {
        const { dir, store, age } = setup()
        const title = "répare la liste – 日本語 😀"
        yield* store.save(dir, { ...richSession(ID_A), title })
        age(ID_A, 1)
        const cold = yield* store.list(dir)
        expect(titles(cold)).toEqual([`${ID_A} ${title} 2`])
        yield* indexWritten
        const bytes = NodeFs.readFileSync(NodePath.join(dir, FileSessionStore.INDEX_FILE))
        expect(bytes.every((byte) => byte < 0x80)).toBe(true)
        const next = setup()
        const nextReads = next.readsSince()
        expect(yield* FileSessionStore.make({ fs: next.fs }).list(dir)).toEqual(cold)
        expect(nextReads()).toBe(0)
        // an index an earlier mm wrote in UTF-8 is read as such
        const indexPath = NodePath.join(dir, FileSessionStore.INDEX_FILE)
        NodeFs.writeFileSync(indexPath, JSON.stringify(JSON.parse(bytes.toString("latin1"))))
        expect(NodeFs.readFileSync(indexPath).some((byte) => byte >= 0x80)).toBe(true)
        const third = setup()
        const thirdReads = third.readsSince()
        expect(yield* FileSessionStore.make({ fs: third.fs }).list(dir)).toEqual(cold)
        expect(thirdReads()).toBe(0)
      }))

    it.effect("never lists an archive: not on the first read, from the cache, nor from the index file", () =>
      Effect.gen(function*() {
        const { dir, store, readsSince, age } = setup()
        yield* store.save(dir, richSession(ID_A))
        yield* store.save(dir, { ...richSession(ID_B), archiveOf: ID_A })
        // an archive whose head is unusual (slow path): still not listed
        NodeFs.writeFileSync(
          NodePath.join(dir, `${ID_C}.json`),
          JSON.stringify({ ...richSession(ID_C), archiveOf: ID_A, messages: [], version: 1 })
        )
        for (const id of [ID_A, ID_B, ID_C]) age(id, 1)
        const ids = (listing: ReadonlyArray<SessionListing>) =>
          listing.map((l) => (l._tag === "Readable" ? l.summary.id : l.id))
        expect(ids(yield* store.list(dir))).toEqual([ID_A])
        const reads = readsSince()
        expect(ids(yield* store.list(dir))).toEqual([ID_A])
        expect(reads()).toBe(0)
        yield* indexWritten
        const index = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, FileSessionStore.INDEX_FILE), "utf8"))
        expect(index.others.find((entry: Array<unknown>) => entry[0] === `${ID_B}.json`)).toContain(ID_A)
        const next = setup()
        const nextReads = next.readsSince()
        expect(ids(yield* FileSessionStore.make({ fs: next.fs }).list(dir))).toEqual([ID_A])
        expect(nextReads()).toBe(0)
        // the archive itself still loads, marked
        expect((yield* store.load(dir, ID_B)).archiveOf).toBe(ID_A)
      }))

    it.effect("sees a rewrite, a same-size edit in place, a deletion and a new file", () =>
      Effect.gen(function*() {
        const { dir, store, age } = setup()
        yield* store.save(dir, { ...richSession(ID_A), title: "first title" })
        yield* store.save(dir, richSession(ID_B))
        age(ID_A, 1)
        age(ID_B, 1)
        expect(titles(yield* store.list(dir))).toEqual([`${ID_B} add a /new command 2`, `${ID_A} first title 2`])

        yield* store.save(dir, { ...richSession(ID_A), title: "other title", turns: 3 })
        age(ID_A, 1)
        expect(titles(yield* store.list(dir))).toEqual([`${ID_B} add a /new command 2`, `${ID_A} other title 3`])

        const path = NodePath.join(dir, `${ID_A}.json`)
        const text = NodeFs.readFileSync(path, "utf8")
        const edited = text.replace("\"other title\"", "\"OTHER TITLE\"").replace("\"turns\": 3", "\"turns\": 4")
        expect(edited.length).toBe(text.length)
        const inode = NodeFs.statSync(path).ino
        NodeFs.writeFileSync(path, edited)
        age(ID_A, 1)
        expect(NodeFs.statSync(path).ino).toBe(inode)
        expect(titles(yield* store.list(dir))).toEqual([`${ID_B} add a /new command 2`, `${ID_A} OTHER TITLE 4`])

        NodeFs.unlinkSync(NodePath.join(dir, `${ID_B}.json`))
        yield* store.save(dir, { ...richSession(ID_C), title: "newcomer" })
        expect(titles(yield* store.list(dir))).toEqual([`${ID_A} OTHER TITLE 4`, `${ID_C} newcomer 2`])
        const fresh = FileSessionStore.make()
        expect(titles(yield* fresh.list(dir))).toEqual([`${ID_A} OTHER TITLE 4`, `${ID_C} newcomer 2`])

        NodeFs.writeFileSync(path, "{ broken")
        age(ID_A, 1)
        expect(titles(yield* store.list(dir))).toEqual([`${ID_A} !`, `${ID_C} newcomer 2`])
      }))

    it.effect("ignores a damaged, forged or older index", () =>
      Effect.gen(function*() {
        const { dir, store, age } = setup()
        yield* store.save(dir, richSession(ID_A))
        age(ID_A, 1)
        const good = yield* store.list(dir)
        yield* indexWritten
        const indexPath = NodePath.join(dir, FileSessionStore.INDEX_FILE)
        const written = JSON.parse(NodeFs.readFileSync(indexPath, "latin1"))
        expect(written).toMatchObject({ version: 6, cwds: ["/work/project"], id: [ID_A], cwd: [0], others: [] })
        const stat = NodeFs.statSync(NodePath.join(dir, `${ID_A}.json`))
        const row = [`${ID_A}.json`, stat.size, stat.mtimeMs, stat.ctimeMs, stat.ino, "/", "a", "b", "forged", 1, 0]
        const forged = [
          "{ not json",
          "[]",
          "null",
          // an earlier mm's index, of one array per file; then of columns, its other entries in another order
          JSON.stringify({ version: 1, files: [row] }),
          JSON.stringify({ ...written, version: 2, title: ["forged"] }),
          // indexes of before the numbering mark: their files are read again
          JSON.stringify({ ...written, version: 3, title: ["forged"] }),
          JSON.stringify({ ...written, version: 4, title: ["forged"] }),
          // an index of before `parent`, where a sub-agent's session may be a row
          JSON.stringify({ ...written, version: 5, title: ["forged"] }),
          JSON.stringify({ ...written, version: 7, title: ["forged"] }),
          // columns of other lengths, or not arrays
          JSON.stringify({ ...written, title: ["forged", "x"] }),
          JSON.stringify({ ...written, turns: 2 }),
          // a row with a field of another type, or a project directory not in `cwds`
          JSON.stringify({ ...written, title: [7] }),
          JSON.stringify({ ...written, size: [String(stat.size)] }),
          JSON.stringify({ ...written, cwd: [1] }),
          JSON.stringify({ ...written, cwds: "/work/project" }),
          // a stale row: another inode
          JSON.stringify({ ...written, ino: [stat.ino + 1], title: ["stale"] }),
          // other entries that are not entries, one for a name no file has
          JSON.stringify({
            ...written,
            id: [],
            others: [[`${ID_A}.json`, "1", 2, 3, 4, "x"], null, 7, ["../x.json", 1, 2, 3, 4, "x"]]
          })
        ]
        for (const damage of forged) {
          NodeFs.writeFileSync(indexPath, damage)
          expect(yield* FileSessionStore.make().list(dir)).toEqual(good)
          yield* indexWritten
          // the damaged index is replaced by a good one
          expect(JSON.parse(NodeFs.readFileSync(indexPath, "latin1"))).toEqual(written)
        }
      }))

    it.effect("takes each row of the index for its file, and reads a file its index has no row for", () =>
      Effect.gen(function*() {
        const { age, dir, store } = setup()
        for (const id of [ID_A, ID_B, ID_C]) {
          yield* store.save(dir, { ...richSession(id), title: `title of ${id}` })
          age(id, 1)
        }
        const good = yield* store.list(dir)
        yield* indexWritten
        const indexPath = NodePath.join(dir, FileSessionStore.INDEX_FILE)
        const written = JSON.parse(NodeFs.readFileSync(indexPath, "latin1"))
        // the middle row gone from every column: only its file is read
        const without = (column: ReadonlyArray<unknown>) => column.filter((_, k) => k !== 1)
        const keys = FileSessionStore.INDEX_COLUMNS
        NodeFs.writeFileSync(
          indexPath,
          JSON.stringify({ ...written, ...Object.fromEntries(keys.map((key) => [key, without(written[key])])) })
        )
        const next = setup()
        const reads = next.readsSince()
        expect(yield* FileSessionStore.make({ fs: next.fs }).list(dir)).toEqual(good)
        expect(reads()).toBe(1)
        yield* indexWritten
        expect(JSON.parse(NodeFs.readFileSync(indexPath, "latin1"))).toEqual(written)
        // an index whose rows are out of order costs reads, never a wrong listing
        const reversed = Object.fromEntries(keys.map((key) => [key, [...written[key]].reverse()]))
        NodeFs.writeFileSync(indexPath, JSON.stringify({ ...written, ...reversed }))
        expect(yield* FileSessionStore.make().list(dir)).toEqual(good)
        // a file gone since the index was written: the index is written again without it
        NodeFs.unlinkSync(NodePath.join(dir, `${ID_C}.json`))
        yield* indexWritten
        const after = yield* FileSessionStore.make().list(dir)
        expect(after).toEqual(good.filter((entry) => entry._tag === "Readable" && entry.summary.id !== ID_C))
        yield* indexWritten
        expect(indexedNames(JSON.parse(NodeFs.readFileSync(indexPath, "latin1")))).toEqual(
          [ID_A, ID_B].sort().reverse().map((id) => `${id}.json`)
        )
      }))

    it.effect("does not trust an entry for a file changed in the last moments", () =>
      Effect.gen(function*() {
        const { dir, store, readsSince } = setup()
        yield* store.save(dir, richSession(ID_A))
        const reads = readsSince()
        yield* store.list(dir)
        yield* store.list(dir)
        expect(reads()).toBe(2)
      }))
  })
})
