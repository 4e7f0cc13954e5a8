import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import type { Session } from "../../src/domain/Session"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import { indexWritten } from "../support/store-fixtures"

const fork: Session = {
  version: 1,
  id: "20261203-101530-4f2a9c1e",
  cwd: "/p",
  createdAt: "2026-12-03T10:15:30.000Z",
  updatedAt: "2026-12-03T10:20:00.000Z",
  title: "q1",
  turns: 2,
  forkedFrom: { id: "20261201-000000-00000001", turn: 2 },
  messages: [{ role: "user", content: "q1" }],
  errors: []
}

describe("a fork in the listing", () => {
  it.effect("is read from the head of its file, kept in .index.json and read back from it", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-fork-listing-"))
      yield* FileSessionStore.make().save(dir, fork)
      const file = path.join(dir, `${fork.id}.json`)
      const text = fs.readFileSync(file, "utf8")
      // right after `turns`, before `errors` and `messages`: the head scanner reads it
      expect(text.indexOf("\"forkedFrom\"")).toBeGreaterThan(text.indexOf("\"turns\""))
      expect(text.indexOf("\"forkedFrom\"")).toBeLessThan(text.indexOf("\"errors\""))
      // old enough to be cached
      fs.utimesSync(file, new Date(2020, 0, 1), new Date(2020, 0, 1))
      const fresh = yield* FileSessionStore.make().list(dir)
      expect(fresh).toEqual([{ _tag: "Readable", summary: expect.objectContaining({ forkedFrom: fork.forkedFrom }) }])
      yield* indexWritten
      const index = JSON.parse(fs.readFileSync(path.join(dir, FileSessionStore.INDEX_FILE), "utf8"))
      // an entry of `others`: name and stat, then the head's listed fields in their order
      expect(index.others[0].slice(5)).toEqual([
        "/p",
        fork.createdAt,
        fork.updatedAt,
        "q1",
        2,
        fork.forkedFrom!.id,
        fork.forkedFrom!.turn,
        null,
        null,
        null,
        null,
        0
      ])
      const fromIndex = yield* FileSessionStore.make().list(dir)
      expect(fromIndex).toEqual(fresh)
      expect(yield* FileSessionStore.make().load(dir, fork.id)).toMatchObject({ forkedFrom: fork.forkedFrom })
      fs.rmSync(dir, { recursive: true, force: true })
    }))
})
