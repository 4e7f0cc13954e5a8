import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Layer from "effect/Layer"

import type { Scope } from "../../src/approvals/ApprovalScope"
import { makeRememberedApprovals, RememberedApprovals } from "../../src/approvals/RememberedApprovals"
import { AppConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"

const layer = (sessions: boolean) =>
  Layer.effect(RememberedApprovals, makeRememberedApprovals).pipe(
    Layer.provide(
      Layer.succeed(AppConfig, {
        config: { ...defaultConfig(), sessions: { ...defaultConfig().sessions, enabled: sessions } },
        file: undefined
      })
    )
  )

const project = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-remembered-")))
const npmTest: Scope = { _tag: "CommandPrefix", words: ["npm", "test"] }
const exact: Scope = { _tag: "ExactCommand", command: "make && make install" }

describe("RememberedApprovals", () => {
  it.effect("on disk: kept once each, 0600 in a 0700 .mm, read back, removed by number", () =>
    Effect.gen(function*() {
      const dir = project()
      const remembered = yield* RememberedApprovals
      expect(yield* remembered.add(dir, npmTest)).toBeUndefined()
      expect(yield* remembered.add(dir, exact)).toBeUndefined()
      expect(yield* remembered.add(dir, npmTest)).toBeUndefined()
      const file = path.join(dir, ".mm/permissions.json")
      expect(fs.statSync(file).mode & 0o777).toBe(0o600)
      expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700)
      expect(fs.readdirSync(path.dirname(file))).toEqual(["permissions.json"])
      expect((yield* remembered.read(dir)).scopes).toEqual([npmTest, exact])
      expect(yield* remembered.remove(dir, 1)).toEqual(Either.right(npmTest))
      expect(yield* remembered.remove(dir, 5)).toEqual(Either.left("no remembered approval 5"))
      expect((yield* remembered.read(dir)).scopes).toEqual([exact])
    }).pipe(Effect.provide(layer(true))))

  it.effect("an edited file is refused whole, in one line, and never overwritten", () =>
    Effect.gen(function*() {
      const remembered = yield* RememberedApprovals
      const cases = [
        "{ broken",
        JSON.stringify({ version: 1, approvals: [npmTest, { _tag: "Shell", command: "x" }] }),
        JSON.stringify({ version: 1, approvals: [npmTest], extra: true }),
        JSON.stringify({ version: 2, approvals: [] }),
        JSON.stringify({ version: 1, approvals: [{ _tag: "Project", dir: "/elsewhere" }] }),
        JSON.stringify({ version: 1, approvals: [{ _tag: "File", path: "relative.txt" }] })
      ]
      for (const text of cases) {
        const dir = project()
        fs.mkdirSync(path.join(dir, ".mm"))
        fs.writeFileSync(path.join(dir, ".mm/permissions.json"), text)
        const state = yield* remembered.read(dir)
        expect(state.scopes).toEqual([])
        expect(state.problem).toMatch(/^remembered approvals not used: .*permissions\.json .*; fix or delete it$/)
        expect(state.problem).not.toContain("\n")
        expect(yield* remembered.add(dir, exact)).toMatch(/kept for this run only/)
        expect(yield* remembered.remove(dir, 1)).toEqual(Either.left(state.problem))
        expect(fs.readFileSync(path.join(dir, ".mm/permissions.json"), "utf8")).toBe(text)
      }
    }).pipe(Effect.provide(layer(true))))

  it.effect("with sessions off: in memory only, nothing written", () =>
    Effect.gen(function*() {
      const dir = project()
      const remembered = yield* RememberedApprovals
      yield* remembered.add(dir, npmTest)
      const state = yield* remembered.read(dir)
      expect(state.scopes).toEqual([npmTest])
      expect(state.where).toMatch(/^in memory/)
      expect(fs.existsSync(path.join(dir, ".mm"))).toBe(false)
      expect(yield* remembered.remove(dir, 1)).toEqual(Either.right(npmTest))
      expect((yield* remembered.read(dir)).scopes).toEqual([])
    }).pipe(Effect.provide(layer(false))))
})
