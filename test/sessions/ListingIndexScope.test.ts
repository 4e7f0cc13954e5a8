import * as NodeFs from "node:fs"
import * as NodeOs from "node:os"
import * as NodePath from "node:path"

import { afterAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { encodeSession } from "../../src/sessions/SessionCodec"
import { indexWritten, richSession } from "../support/store-fixtures"

// The listing index is written soon after a listing, and whatever is still to be written when
// the store's scope closes (mm ending, normally or interrupted by a signal) is written then.
// Everything below runs with `Effect.runSync`: no turn of the event loop can pass, so the only
// write there can be is the scope's.

const root = NodeFs.mkdtempSync(NodePath.join(NodeOs.tmpdir(), "mm-index-scope-"))
afterAll(() => NodeFs.rmSync(root, { recursive: true, force: true }))
let serial = 0

/** A directory of two sessions old enough to be cached, and where its index goes. */
const sessionsDir = () => {
  const dir = NodePath.join(root, `case-${++serial}`)
  NodeFs.mkdirSync(dir)
  for (const id of ["20260101-000000-00000001", "20260101-000000-00000002"]) {
    const file = NodePath.join(dir, `${id}.json`)
    NodeFs.writeFileSync(file, encodeSession(richSession(id)))
    NodeFs.utimesSync(file, 1e9, 1e9)
  }
  return { dir, index: NodePath.join(dir, FileSessionStore.INDEX_FILE) }
}

describe("the listing index in the store's scope", () => {
  it("is written as the scope closes, when mm ends before the write that follows a listing", () => {
    const { dir, index } = sessionsDir()
    const hooks = process.listenerCount("exit")
    const during = Effect.runSync(
      Effect.scoped(
        Effect.gen(function*() {
          const store = yield* FileSessionStore.makeScoped()
          expect(yield* store.list(dir)).toHaveLength(2)
          return NodeFs.existsSync(index)
        })
      )
    )
    expect(during).toBe(false)
    expect(FileSessionStore.INDEX_COLUMNS.every((column) => column in JSON.parse(NodeFs.readFileSync(index, "latin1"))))
      .toBe(true)
    // no hook on the process's exit
    expect(process.listenerCount("exit")).toBe(hooks)
  })

  it("is written when the program is interrupted (Ctrl-C, SIGTERM) after the listing", () => {
    const { dir, index } = sessionsDir()
    const exit = Effect.runSyncExit(
      Effect.scoped(
        Effect.gen(function*() {
          const store = yield* FileSessionStore.makeScoped()
          yield* store.list(dir)
          return yield* Effect.interrupt
        })
      )
    )
    expect(Exit.isInterrupted(exit)).toBe(true)
    expect(NodeFs.existsSync(index)).toBe(true)
  })

  it.effect("is written once: a scope that closes after the write has nothing left to write", () =>
    Effect.gen(function*() {
      const { dir, index } = sessionsDir()
      yield* Effect.scoped(
        Effect.gen(function*() {
          const store = yield* FileSessionStore.makeScoped()
          yield* store.list(dir)
          yield* indexWritten
          expect(NodeFs.existsSync(index)).toBe(true)
          // removed by someone else: this store has nothing new to say
          NodeFs.rmSync(index)
        })
      )
      expect(NodeFs.existsSync(index)).toBe(false)
    }))
})
