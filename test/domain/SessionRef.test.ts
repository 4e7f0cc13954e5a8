import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { resolveSessionRef, sessionRefProblem } from "../../src/domain/SessionRef"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { SessionStore } from "../../src/sessions/SessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, testConfig } from "../support/layers"

const ids = [
  "20261128-164210-9c03be11",
  "20261128-093000-77be01d3",
  "20261127-120000-9c03aa00",
  "20261020-080000-0000be11"
]

describe("resolving what a person typed to a session id", () => {
  it("takes a full id, a unique prefix, a unique hex suffix of the random part", () => {
    expect(resolveSessionRef("20261128-093000-77be01d3", ids)).toEqual({
      _tag: "Found",
      id: "20261128-093000-77be01d3"
    })
    expect(resolveSessionRef("20261128-09", ids)).toEqual({ _tag: "Found", id: "20261128-093000-77be01d3" })
    expect(resolveSessionRef("2026102", ids)).toEqual({ _tag: "Found", id: "20261020-080000-0000be11" })
    expect(resolveSessionRef("77be01d3", ids)).toEqual({ _tag: "Found", id: "20261128-093000-77be01d3" })
    expect(resolveSessionRef("aa00", ids)).toEqual({ _tag: "Found", id: "20261127-120000-9c03aa00" })
    expect(resolveSessionRef("  9c03be11 ", ids)).toEqual({ _tag: "Found", id: "20261128-164210-9c03be11" })
  })

  it("lists the candidates, in the order given, when several match", () => {
    expect(resolveSessionRef("20261128", ids)).toEqual({
      _tag: "Ambiguous",
      typed: "20261128",
      candidates: ["20261128-164210-9c03be11", "20261128-093000-77be01d3"]
    })
    const both = resolveSessionRef("be11", ids)
    expect(both).toEqual({
      _tag: "Ambiguous",
      typed: "be11",
      candidates: ["20261128-164210-9c03be11", "20261020-080000-0000be11"]
    })
    expect(sessionRefProblem(both as Exclude<typeof both, { _tag: "Found" }>)).toBe(
      "\"be11\" matches 2 sessions: 20261128-164210-9c03be11, 20261020-080000-0000be11 — type more of the id"
    )
  })

  it("finds nothing for what names no session (a suffix needs 4 hex digits; no infix)", () => {
    for (
      const typed of ["", "   ", "2025", "e11", "164210", "9c03be1", "../../etc/passwd", "20261128-164210-9c03be11x"]
    ) {
      expect(resolveSessionRef(typed, ids)._tag).toBe("NotFound")
    }
    expect(sessionRefProblem({ _tag: "NotFound", typed: "2025" })).toBe("no session \"2025\" in this project")
    expect(resolveSessionRef("2026", [])._tag).toBe("NotFound")
  })

  it("cuts a long list of candidates", () => {
    const many = Array.from({ length: 8 }, (_, i) => `20261128-16421${i}-9c03be1${i}`)
    const ref = resolveSessionRef("2026", many)
    expect(ref._tag).toBe("Ambiguous")
    expect(sessionRefProblem(ref as Exclude<typeof ref, { _tag: "Found" }>)).toMatch(
      /matches 8 sessions: (\S+, ){4}\S+ and 3 more — type more of the id$/
    )
  })
})

describe("the keeper resolves typed ids for /resume and the command line", () => {
  const DIR = "/project/.mm/sessions"
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
    server.setFallback({ text: "answer" })
  })
  afterAll(() => server.close())

  it.live("/resume with a prefix or a suffix; an ambiguous or unknown one fails with one line", () => {
    const fresh = ["20261128-164210-9c03be11", "20261128-170000-00ff00aa"]
    const memory = MemorySessionStore.make({ newId: () => fresh.shift()! })
    const layer = coreLayer(
      testConfig(server.url, { sessions: { enabled: true } }),
      Layer.succeed(SessionStore, memory.store)
    )
    return Effect.gen(function*() {
      const keeper = yield* Keeper
      const first = yield* keeper.open("/project", { createFile: "later" })
      yield* runTurn(first, "the first topic")
      const firstId = (yield* first.snapshot).id
      const second = yield* keeper.open("/project", { createFile: "later" })
      yield* runTurn(second, "the second topic")
      const secondId = (yield* second.snapshot).id

      expect(yield* keeper.resolve("/project", firstId.slice(-8))).toBe(firstId)
      expect(yield* keeper.resolve("/project", secondId)).toBe(secondId)

      const report = yield* second.resume(firstId.slice(-8))
      expect(report?.id).toBe(firstId)
      expect(report?.title).toBe("the first topic")

      expect(yield* keeper.resolve("/project", "20261128-17")).toBe(secondId)
      const ambiguous = yield* Effect.flip(keeper.resolve("/project", "20261128"))
      expect(ambiguous.reason).toBe("ambiguous")
      expect(ambiguous.message).toBe(`"20261128" matches 2 sessions: ${secondId}, ${firstId} — type more of the id`)
      const missing = yield* Effect.flip(second.resume("1999"))
      expect(missing.message).toBe("no session \"1999\" in this project")
      const bad = yield* Effect.flip(keeper.resolve("/project", "../x"))
      expect(bad.reason).toBe("bad-id")
      // a failed /resume is recorded in the current session, as before
      const stored = JSON.parse(memory.controls.readRaw(DIR, `${firstId}.json`)!)
      expect(stored.errors.map((e: { line: string }) => e.line)).toEqual(["no session \"1999\" in this project"])
    }).pipe(Effect.provide(layer))
  })

  it.live("with sessions off, a typed id is refused with the reason", () => {
    const memory = MemorySessionStore.make()
    const config = testConfig(server.url, { sessions: { enabled: false } })
    const layer = coreLayer(config, Layer.succeed(SessionStore, memory.store))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(Effect.flatMap(Keeper, (k) => k.resolve("/project", "2026")))
      expect(error.reason).toBe("disabled")
      expect(error.message).toBe("sessions are off (sessions.enabled: false): no conversation is kept")
    }).pipe(Effect.provide(layer))
  })
})
