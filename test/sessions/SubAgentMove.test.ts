import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { emptySession, type Session } from "../../src/domain/Session"
import type { Listing } from "../../src/sessions/Conversation"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { Keeper } from "../../src/sessions/Keeper"
import { coreLayer, testConfig } from "../support/layers"

// ACP `/new` moves the conversation so far to a new id and starts the editor's id over empty.
// The sub-agents' sessions that conversation ran go with it: their `parent` names the new id,
// so that they are listed (and deleted) with the history that holds their task results, not
// with the empty thread. Real files, through the file store.

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-sub-agent-move-"))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))
let serial = 0

const PARENT = "20261207-100000-0000000a"
const CHILD_1 = "20261207-100100-0000000b"
const CHILD_2 = "20261207-100200-0000000c"
/** A session the first sub-agent ran in turn: its parent is that sub-agent, which keeps its id. */
const GRANDCHILD = "20261207-100300-0000000d"
const OTHER = "20261207-090000-0000000e"
const OTHERS_CHILD = "20261207-090100-0000000f"

const conversation = (id: string, minute: number, question: string, fields: Partial<Session> = {}): Session => ({
  ...emptySession(id, "/project", new Date(Date.UTC(2026, 11, 7, 10, minute))),
  title: question,
  turns: 1,
  messages: [{ role: "user", content: question }, { role: "assistant", content: `done: ${question}` }],
  ...fields
})

const family: ReadonlyArray<Session> = [
  conversation(PARENT, 0, "refactor the loader"),
  conversation(CHILD_1, 1, "find every caller", { parent: { id: PARENT, turn: 1, callId: "call_1" } }),
  conversation(CHILD_2, 2, "read the tests", { parent: { id: PARENT, turn: 1, callId: "call_2" } }),
  conversation(GRANDCHILD, 3, "grep one module", { parent: { id: CHILD_1, turn: 1, callId: "call_g" } }),
  conversation(OTHER, -60, "an older question"),
  conversation(OTHERS_CHILD, -59, "its helper", { parent: { id: OTHER, turn: 1, callId: "call_o" } })
]

/** A sessions directory holding `family`, its files aged so that a listing keeps them in its index. */
const writeFamily = () => {
  const dir = NodePath.join(root, `case-${++serial}`, "sessions")
  const store = FileSessionStore.make()
  return Effect.gen(function*() {
    for (const session of family) yield* store.save(dir, session)
    for (const name of NodeFs.readdirSync(dir)) NodeFs.utimesSync(NodePath.join(dir, name), 1e9, 1e9)
    return dir
  })
}

const read = (dir: string, id: string): Session =>
  JSON.parse(NodeFs.readFileSync(NodePath.join(dir, `${id}.json`), "utf8"))

/** Loads PARENT in an editor's conversation, lists the sub-agents once (the listing caches its heads), then `/new`. */
const moveParent = (dir: string, fs?: FileSessionStore.Fs) => {
  const layer = coreLayer(
    testConfig("http://127.0.0.1:9/v1", { sessions: { enabled: true, dir } }),
    FileSessionStore.layerWith(fs === undefined ? {} : { fs })
  )
  return Effect.gen(function*() {
    const keeper = yield* Keeper
    const parentsBefore = parentsOf(yield* keeper.list("/project", { subAgents: true }))
    const thread = yield* keeper.load("/project", PARENT)
    const report = yield* thread.archiveAndReset
    const parentsAfter = parentsOf(yield* keeper.list("/project", { subAgents: true }))
    return { report: report!, parentsBefore, parentsAfter }
  }).pipe(Effect.provide(layer))
}

/** Each listed session that a sub-agent's is, with the id its listing names as its parent. */
const parentsOf = (listing: Listing) =>
  listing._tag === "Listed"
    ? Object.fromEntries(
      listing.entries.flatMap((entry) =>
        entry._tag === "Readable" && entry.summary.parent !== undefined
          ? [[entry.summary.id, entry.summary.parent.id]]
          : []
      )
    )
    : {}

describe("ACP /new and the sub-agents' sessions of the conversation it moves", () => {
  it.effect("each names the moved conversation's new id; the editor's id names none", () =>
    Effect.gen(function*() {
      const dir = yield* writeFamily()
      const written = new Map([CHILD_1, CHILD_2].map((id) => [id, read(dir, id)]))
      const { parentsAfter, parentsBefore, report } = yield* moveParent(dir)
      expect(parentsBefore).toEqual({
        [CHILD_1]: PARENT,
        [CHILD_2]: PARENT,
        [GRANDCHILD]: CHILD_1,
        [OTHERS_CHILD]: OTHER
      })
      expect(report.warnings).toEqual([])
      const moved = report.id
      expect(read(dir, moved).messages.map((m) => m.content)).toContain("refactor the loader")
      expect(read(dir, PARENT).messages).toEqual([])
      // the same listing (its cached heads) now sees them under the moved conversation
      expect(parentsAfter).toEqual({
        [CHILD_1]: moved,
        [CHILD_2]: moved,
        [GRANDCHILD]: CHILD_1,
        [OTHERS_CHILD]: OTHER
      })
      // only `parent.id` changed in each file: the call that ran it, its turns and its time stay
      for (const [id, callId] of [[CHILD_1, "call_1"], [CHILD_2, "call_2"]] as const) {
        expect(read(dir, id)).toEqual({ ...written.get(id), parent: { id: moved, turn: 1, callId } })
      }
      // a cold listing (another mm, from the index file or the heads) says the same
      const cold = yield* FileSessionStore.make().list(dir)
      const named = cold.flatMap((e) => e._tag === "Readable" && e.summary.parent?.id === PARENT ? [e] : [])
      expect(named).toEqual([])
    }))

  it.effect("one that cannot be rewritten is one line of the report, and the others still follow", () =>
    Effect.gen(function*() {
      const dir = yield* writeFamily()
      const target = NodePath.join(dir, `${CHILD_2}.json`)
      const fs = {
        ...NodeFs,
        renameSync: (from: NodeFs.PathLike, to: NodeFs.PathLike) => {
          if (to === target) throw Object.assign(new Error("EACCES: permission denied"), { code: "EACCES" })
          return NodeFs.renameSync(from, to)
        }
      } as FileSessionStore.Fs
      const { parentsAfter, report } = yield* moveParent(dir, fs)
      expect(report.warnings).toEqual([
        `sub-agent session ${CHILD_2} still names ${PARENT}: cannot write ${target}: permission denied`
      ])
      expect(parentsAfter).toMatchObject({ [CHILD_1]: report.id, [CHILD_2]: PARENT })
      expect(read(dir, PARENT).messages).toEqual([])
    }))
})
