import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import type { Session } from "../../src/domain/Session"
import * as FileSessionStore from "../../src/sessions/FileSessionStore"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { compileQuery, excerpt, type Matcher } from "../../src/sessions/SessionSearch"
import { sessionOf } from "../support/store-fixtures"

const session = sessionOf

const matcher = (pattern: string, options: { regex?: boolean; ignoreCase?: boolean } = {}): Matcher => {
  const compiled = compileQuery({ pattern, regex: options.regex ?? false, ignoreCase: options.ignoreCase })
  if (typeof compiled === "string") throw new Error(compiled)
  return compiled
}

describe("search", () => {
  it("finds text the file spells with escapes: quotes, backslashes, tabs, non-ASCII", () => {
    const raw = (text: string) => Buffer.from(JSON.stringify({ content: text }), "utf8")
    for (const text of ["say \"hi\"", "C:\\temp", "a\tb", "café crème"]) {
      expect(matcher(text).mayMatch(raw(`before ${text} after`))).toBe(true)
      expect(matcher(text.toUpperCase(), { ignoreCase: true }).mayMatch(raw(`x ${text} y`))).toBe(true)
    }
    expect(matcher("Café").mayMatch(raw("café"))).toBe(false)
    expect(compileQuery({ pattern: "(", regex: true })).toMatch(/^not a regular expression: /)
    expect(compileQuery({ pattern: "", regex: false })).toBe("nothing to search for: give a word or a phrase")
  })

  it("cuts a long line around the match", () => {
    const line = `${"x".repeat(300)} needle ${"y".repeat(300)}`
    const shown = excerpt(line, line.indexOf("needle"))
    expect(shown).toContain("needle")
    expect(shown.startsWith("…") && shown.endsWith("…")).toBe(true)
    expect(shown.length).toBeLessThanOrEqual(162)
  })

  it.effect("the file store and the memory store find the same lines, newest first, archives marked", () =>
    Effect.gen(function*() {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-search-"))
      const memory = MemorySessionStore.make()
      const file = FileSessionStore.make({ indexFile: false })
      const older = session([{ role: "user", content: "q1" }, {
        role: "tool",
        content: "out\nthe needle\nend",
        tool_call_id: "c"
      }], {
        id: "20261201-000000-00000001"
      })
      const archive = { ...older, id: "20261202-000000-00000002", archiveOf: older.id } as Session
      const newer = session([{ role: "user", content: "a needle in a question" }], { id: "20261203-000000-00000003" })
      const other = session([{ role: "user", content: "nothing here" }], { id: "20261204-000000-00000004" })
      for (const s of [older, archive, newer, other]) {
        yield* file.save(dir, s)
        yield* memory.store.save(dir, s)
      }
      fs.writeFileSync(path.join(dir, "20261205-000000-00000005.json"), "{ not json needle")
      fs.symlinkSync(path.join(dir, `${newer.id}.json`), path.join(dir, "20261206-000000-00000006.json"))
      const found = (store: typeof file) =>
        Stream.runCollect(store.search(dir, matcher("needle"))).pipe(Effect.map((chunk) => [...chunk]))
      const fromFiles = yield* found(file)
      expect(fromFiles.map((s) => [s.id, s.archiveOf, s.hits.map((h) => [h.turn, h.role, h.line])])).toEqual([
        [newer.id, undefined, [[1, "user", "a needle in a question"]]],
        [archive.id, older.id, [[1, "tool", "the needle"]]],
        [older.id, undefined, [[1, "tool", "the needle"]]]
      ])
      expect(yield* found(memory.store)).toEqual(fromFiles)
      fs.rmSync(dir, { recursive: true, force: true })
    }))
})
