import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

import type { Scope } from "../../src/approvals/ApprovalScope"
import { makeRememberedApprovals, RememberedApprovals, rememberedFileOf } from "../../src/approvals/RememberedApprovals"

const layer = Layer.effect(RememberedApprovals, makeRememberedApprovals)

const project = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-remembered-")))
const npmTest: Scope = { _tag: "CommandPrefix", words: ["npm", "test"] }
const exact: Scope = { _tag: "ExactCommand", command: "make && make install" }
const modeOf = (file: string) => fs.statSync(file).mode & 0o777

describe("RememberedApprovals", () => {
  it.effect("kept in the user's state, 0600 in 0700 directories, never in the project; removed by number", () =>
    Effect.gen(function*() {
      const dir = project()
      const remembered = yield* RememberedApprovals
      expect(yield* remembered.add(dir, npmTest)).toBeUndefined()
      expect(yield* remembered.add(dir, exact)).toBeUndefined()
      expect(yield* remembered.add(dir, npmTest)).toBeUndefined()
      const state = process.env.XDG_STATE_HOME!
      const file = rememberedFileOf(dir)
      expect(path.dirname(path.dirname(file))).toBe(path.join(state, "mm", "projects"))
      expect(path.basename(path.dirname(file))).toMatch(/^[0-9a-f]{32}$/)
      expect(modeOf(file)).toBe(0o600)
      // every directory made on the way is the user's alone
      for (const made of [state, path.join(state, "mm"), path.join(state, "mm", "projects"), path.dirname(file)]) {
        expect(modeOf(made)).toBe(0o700)
      }
      expect(fs.readdirSync(path.dirname(file))).toEqual(["permissions.json"])
      expect(fs.existsSync(path.join(dir, ".mm"))).toBe(false)
      expect(JSON.parse(fs.readFileSync(file, "utf8"))).toEqual({
        version: 1,
        project: dir,
        approvals: [npmTest, exact]
      })
      expect((yield* remembered.read(dir)).scopes).toEqual([npmTest, exact])
      expect(yield* remembered.remove(dir, 1)).toEqual(Either.right(npmTest))
      expect(yield* remembered.remove(dir, 5)).toEqual(Either.left("no remembered approval 5"))
      expect((yield* remembered.read(dir)).scopes).toEqual([exact])
    }).pipe(Effect.provide(layer)))

  it.effect("one file per real path: a link to the project finds the same answers, another project none", () =>
    Effect.gen(function*() {
      const dir = project()
      const other = project()
      const link = path.join(other, "link")
      fs.symlinkSync(dir, link)
      const remembered = yield* RememberedApprovals
      // an edit of the project given through the link holds through either path
      const everyEdit: Scope = { _tag: "Project", dir: link }
      yield* remembered.add(dir, npmTest)
      yield* remembered.add(link, everyEdit)
      expect(rememberedFileOf(link)).toBe(rememberedFileOf(dir))
      expect((yield* remembered.read(link)).scopes).toEqual([npmTest, everyEdit])
      expect((yield* remembered.read(dir)).scopes).toEqual([npmTest, everyEdit])
      expect((yield* remembered.read(other)).scopes).toEqual([])
    }).pipe(Effect.provide(layer)))

  it.effect("a file that is edited, names another project or others may write is refused whole, in one line, and never overwritten", () =>
    Effect.gen(function*() {
      const remembered = yield* RememberedApprovals
      const cases: ReadonlyArray<(dir: string) => string> = [
        () => "{ broken",
        (dir) => JSON.stringify({ version: 1, project: dir, approvals: [npmTest, { _tag: "Shell", command: "x" }] }),
        (dir) => JSON.stringify({ version: 1, project: dir, approvals: [npmTest], extra: true }),
        (dir) => JSON.stringify({ version: 2, project: dir, approvals: [] }),
        () => JSON.stringify({ version: 1, approvals: [npmTest] }),
        () => JSON.stringify({ version: 1, project: "/elsewhere", approvals: [npmTest] }),
        (dir) => JSON.stringify({ version: 1, project: dir, approvals: [{ _tag: "Project", dir: "/elsewhere" }] }),
        (dir) => JSON.stringify({ version: 1, project: dir, approvals: [{ _tag: "File", path: "relative.txt" }] })
      ]
      const refusedOnce = function*(dir: string, text: string, why: RegExp) {
        const file = rememberedFileOf(dir)
        const state = yield* remembered.read(dir)
        expect(state.scopes).toEqual([])
        expect(state.problem).toMatch(/^remembered approvals not used: .*permissions\.json .*; fix or delete it$/)
        expect(state.problem).toMatch(why)
        expect(state.problem).not.toContain("\n")
        expect(yield* remembered.add(dir, exact)).toMatch(/kept for this run only/)
        expect(yield* remembered.remove(dir, 1)).toEqual(Either.left(state.problem))
        expect(fs.readFileSync(file, "utf8")).toBe(text)
      }
      for (const make of cases) {
        const dir = project()
        const file = rememberedFileOf(dir)
        fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
        const text = make(dir)
        fs.writeFileSync(file, text, { mode: 0o600 })
        yield* refusedOnce(dir, text, /is not a valid permissions file|names another project/)
      }
      // a valid file others may write grants nothing either
      const dir = project()
      const file = rememberedFileOf(dir)
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
      const text = JSON.stringify({ version: 1, project: dir, approvals: [npmTest] })
      fs.writeFileSync(file, text)
      fs.chmodSync(file, 0o622)
      yield* refusedOnce(dir, text, /is writable by others/)
    }).pipe(Effect.provide(layer)))

  it.effect("a project's own .mm/permissions.json grants nothing, and is named in one line", () =>
    Effect.gen(function*() {
      const dir = project()
      const remembered = yield* RememberedApprovals
      expect(yield* remembered.ignoredLine(dir)).toBeUndefined()
      fs.mkdirSync(path.join(dir, ".mm"))
      const planted = JSON.stringify({ version: 1, approvals: [{ _tag: "Tool", name: "bash" }] })
      fs.writeFileSync(path.join(dir, ".mm/permissions.json"), planted)
      expect((yield* remembered.read(dir)).scopes).toEqual([])
      expect(yield* remembered.ignoredLine(dir)).toBe(
        `.mm/permissions.json in this project is ignored: approvals are kept in ${
          rememberedFileOf(dir)
        }; /permissions import shows its rows`
      )
      // an answer given now goes to the user's file; the project's is left as it was
      yield* remembered.add(dir, npmTest)
      expect((yield* remembered.read(dir)).scopes).toEqual([npmTest])
      expect(fs.readFileSync(path.join(dir, ".mm/permissions.json"), "utf8")).toBe(planted)
    }).pipe(Effect.provide(layer)))
})
