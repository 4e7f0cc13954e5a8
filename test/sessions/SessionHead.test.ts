import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { type ErrorRecord, type Session, SESSION_VERSION } from "../../src/domain/Session"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { scanHeadByField, scanLayout } from "../../src/sessions/HeadScanner"
import { Keeper } from "../../src/sessions/Keeper"
import { encodeSession, parseSession, summaryOf } from "../../src/sessions/SessionCodec"
import { HEAD, HEAD_END, type HeadValue, type ListedFields, NUMBERING, PARTS } from "../../src/sessions/SessionHead"
import type { SessionSummary } from "../../src/sessions/SessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, testConfig } from "../support/layers"
import { indexWritten } from "../support/store-fixtures"

// The head of a session file is described once (src/sessions/SessionHead.ts); the encoder, the
// one-match scanner and the listing index are made from that description. These tests hold the
// three to it, and to what a listing shows of a session.

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-head-"))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))
let serial = 0
const freshDir = () => NodePath.join(root, `case-${++serial}`)

/** Any string, with what JSON escapes (quotes, backslashes, controls, lone surrogates) likely. */
const anyText = fc.oneof(
  fc.string({ unit: fc.constantFrom("a", "\"", "\\", "\n", "\t", "\u0000", "\u2028", "\ud800", "é", "😀", "/", " ") }),
  fc.string({ unit: "binary", maxLength: 12 })
)

const errorRecord: fc.Arbitrary<ErrorRecord> = fc.record({
  kind: fc.constantFrom("generation" as const, "compaction" as const, "resume" as const),
  at: anyText,
  turns: fc.nat(100),
  question: anyText,
  line: anyText,
  raw: fc.option(anyText, { nil: undefined })
}).map(({ raw, ...record }) => (raw === undefined ? record : { ...record, raw }))

/** A value of each kind the head knows: a new kind without one here fails to compile. */
const valueOf = (value: HeadValue): fc.Arbitrary<unknown> => {
  switch (value) {
    case "version":
      return fc.constant(SESSION_VERSION)
    case "numbering":
      return fc.constant(NUMBERING)
    case "count":
      return fc.nat(100_000)
    case "text":
      return anyText
    case "fork":
    case "parent": {
      const parts = PARTS[value]
      return fc.tuple(...parts.map((part) => valueOf(part.value))).map((values) =>
        Object.fromEntries(parts.map((part, i) => [part.key, values[i]]))
      )
    }
    case "records":
      return fc.array(errorRecord, { maxLength: 3 })
  }
}

/** A session with each field of the head, by its kind (an optional one there or not), and a message. */
const headSession: fc.Arbitrary<Session> = fc.tuple(
  ...HEAD.map((field) => field.optional ? fc.option(valueOf(field.value), { nil: undefined }) : valueOf(field.value))
).map((values) => {
  const session: Record<string, unknown> = {}
  HEAD.forEach((field, i) => {
    if (values[i] !== undefined) session[field.key] = values[i]
  })
  return { ...session, messages: [{ role: "user", content: "hello" }] } as unknown as Session
})

/** What a listing shows of a session, less its id (which is its file's name). */
const listed = (session: Session): Omit<SessionSummary, "id"> => {
  const { id: _id, ...fields } = summaryOf(session)
  return fields
}

describe("the head of a session file, described once", () => {
  it("names the fields a listing shows, with their types", () => {
    // checked by the compiler (npm run typecheck): a field added to the head or to
    // SessionSummary alone, or of another type, fails to compile here
    expectTypeOf<ListedFields>().toEqualTypeOf<Omit<SessionSummary, "id">>()
    expect(HEAD.map((field) => field.key)).not.toContain(HEAD_END)
  })

  it("is written in its order, and every session's head is read in one match, as a listing shows it", () => {
    fc.assert(
      fc.property(headSession, (session) => {
        const text = encodeSession(session)
        const keys = Object.keys(JSON.parse(text) as object)
        expect(keys.slice(0, keys.indexOf(HEAD_END))).toEqual(
          HEAD.filter((field) => field.key in session).map((field) => field.key)
        )
        const fast = scanLayout(text)
        expect(fast).toStrictEqual({ _tag: "Found", version: SESSION_VERSION, fields: listed(session) })
        expect(scanHeadByField(text, true)).toStrictEqual(fast)
      }),
      { numRuns: 500 }
    )
  })

  it.effect("is kept in the listing index: a column per field of the rows, and read back the same", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const sessions = fc.sample(headSession, { numRuns: 40, seed: 41 }).map((session, i): Session => ({
        ...session,
        // as many questions as turns, as mm writes (a count the file cannot hold is read whole)
        turns: session.turns % 9,
        messages: Array.from({ length: session.turns % 9 }, () => ({ role: "user", content: "hello" })),
        id: `20260101-000000-${String(i).padStart(8, "0")}`,
        createdAt: "2026-01-01T00:00:00.000Z",
        updatedAt: "2026-01-01T00:01:00.000Z"
      }))
      const store = FileSessionStore.make()
      for (const session of sessions) yield* store.save(dir, session)
      // old enough to be cached
      for (const name of NodeFs.readdirSync(dir)) NodeFs.utimesSync(NodePath.join(dir, name), 1e9, 1e9)
      const cold = yield* store.list(dir)
      expect(cold.every((listing) => listing._tag === "Readable")).toBe(true)
      yield* indexWritten
      const index = JSON.parse(NodeFs.readFileSync(NodePath.join(dir, FileSessionStore.INDEX_FILE), "latin1"))
      const columns = HEAD.filter((field) => field.listing === "column" || field.listing === "shared")
      expect(FileSessionStore.INDEX_COLUMNS).toEqual([
        "id",
        "size",
        "mtimeMs",
        "ctimeMs",
        "ino",
        ...columns.map((f) => f.key)
      ])
      for (const column of FileSessionStore.INDEX_COLUMNS) expect(index[column]).toHaveLength(index.id.length)
      // sessions with a field kept only in `others` (a fork, a sub-agent's, an archive) are not rows
      const others = HEAD.filter((field) => field.listing === "others").map((field) => field.key)
      const rows = sessions.filter((session) => others.every((key) => !(key in session)))
      expect(index.id).toHaveLength(rows.length)
      expect(index.others).toHaveLength(sessions.length - rows.length)
      const fromIndex = yield* FileSessionStore.make().list(dir)
      expect(fromIndex).toEqual(cold)
      // archives are not listed; every other session is, as its head tells it
      const shown = sessions.filter((session) => session.archiveOf === undefined)
      expect(fromIndex).toEqual(
        shown.map((session) => ({ _tag: "Readable", summary: summaryOf(session) })).reverse()
      )
    }))
})

describe("the files mm writes", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
    server.setFallback({ text: "answer" })
  })
  afterAll(() => server.close())

  it.live("are each read in the one match, whatever mm made of the session", () => {
    const project = freshDir()
    NodeFs.mkdirSync(project, { recursive: true })
    // every text the store writes to a file, as it writes it
    const texts: Array<string> = []
    const fs = {
      ...NodeFs,
      writeFileSync: (...args: Parameters<typeof NodeFs.writeFileSync>) => {
        if (typeof args[1] === "string") texts.push(args[1])
        return NodeFs.writeFileSync(...args)
      }
    } as FileSessionStore.Fs
    const layer = coreLayer(
      testConfig(server.url, { sessions: { enabled: true } }),
      FileSessionStore.layerWith({ fs })
    )
    return Effect.gen(function*() {
      const keeper = yield* Keeper
      const conversation = yield* keeper.open(project, { createFile: "now" })
      yield* runTurn(conversation, "why does \"checkout\" round prices \\ down — à 😀?")
      yield* runTurn(conversation, "and now?")
      yield* conversation.record({
        kind: "generation",
        line: "no token for 120 s: the model server \"stopped\" answering",
        raw: "watchdog:\n120000 ms",
        question: "and now?"
      })
      // a turn in flight, as mm saves it when its question is sent
      yield* conversation.update((session) => ({
        ...session,
        inProgress: { question: "third", at: session.updatedAt, start: session.messages.length }
      }))
      // a compaction's archive (the turns it replaced), a fork, then a turn and a compaction in the fork
      const snapshot = yield* conversation.snapshot
      yield* conversation.compacted(snapshot.messages, snapshot.messages.slice(1, 3))
      yield* conversation.fork(1)
      yield* runTurn(conversation, "on the fork")
      const forked = yield* conversation.snapshot
      yield* conversation.compacted(forked.messages, forked.messages.slice(1, 3))
    }).pipe(
      Effect.provide(layer),
      Effect.map(() => {
        const files = texts.filter((text) => text.startsWith("{\n"))
        const heads = files.map((text) => JSON.parse(text) as Record<string, unknown>)
        // each variant was written: errors, a turn in flight, an archive, a fork, a title JSON escapes
        expect(heads.some((head) => Array.isArray(head.errors) && head.errors.length > 0)).toBe(true)
        expect(heads.some((head) => head.inProgress !== undefined)).toBe(true)
        expect(heads.some((head) => head.archiveOf !== undefined)).toBe(true)
        expect(heads.some((head) => head.forkedFrom !== undefined)).toBe(true)
        expect(heads.some((head) => String(head.title).includes("\""))).toBe(true)
        for (const text of files) {
          const session = Either.getOrThrow(parseSession(text, String(JSON.parse(text).id)))
          // the listing tries this match first, on the first 512 bytes and then on the head up to `messages`
          expect(scanLayout(text)).toStrictEqual({ _tag: "Found", version: SESSION_VERSION, fields: listed(session) })
        }
      })
    )
  })
})
