import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"

import type { Session } from "../../src/domain/Session"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { SessionStore } from "../../src/sessions/SessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

/** One write of the session file: when, and the running call it marked. */
interface Write {
  readonly at: number
  readonly running: { readonly id: string; readonly output: string } | undefined
  readonly inProgress: boolean
}

describe("a turn saved while it runs", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it.live("marks the running call before it starts, saves its output as it comes, at most once a second", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-progress-")
      const memory = MemorySessionStore.make()
      const writes: Array<Write> = []
      const seen = (session: Session) =>
        writes.push({
          at: Date.now(),
          running: session.inProgress?.running,
          inProgress: session.inProgress !== undefined
        })
      const spied = Layer.succeed(SessionStore, {
        ...memory.store,
        saveAsNew: (dir, session) =>
          Effect.zipRight(Effect.sync(() => seen(session)), memory.store.saveAsNew(dir, session)),
        save: (dir, session, expected) =>
          Effect.zipRight(Effect.sync(() => seen(session)), memory.store.save(dir, session, expected))
      })
      // a burst of 300 lines, then a wait; one more line, then another wait
      const gate = (name: string) => `while [ ! -e ${name} ]; do sleep 0.02; done`
      const command = `for i in $(seq 300); do echo burst-$i; done; ${gate("go1")}; echo after-go1; ${gate("go2")}`
      server.push({ toolCalls: [{ id: "c1", name: "bash", arguments: { command } }] }, { text: "done" })
      const running = (text: string) => () => writes.some((w) => w.running?.output.includes(text) === true)
      yield* Effect.gen(function*() {
        const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
        const turn = yield* Effect.fork(runTurn(conversation, "print a lot"))
        yield* Effect.promise(() => until(running("burst-300"), "the burst saved while the call runs", 30_000))
        fs.writeFileSync(path.join(cwd, "go1"), "")
        yield* Effect.promise(() => until(running("after-go1"), "the line after the first gate saved", 30_000))
        fs.writeFileSync(path.join(cwd, "go2"), "")
        yield* Fiber.join(turn)

        const marked = writes.filter((w) => w.running !== undefined)
        // the first mark is written before the call has printed anything
        expect(marked[0].running).toEqual({ id: "c1", output: "" })
        expect(marked.at(-1)?.running?.output).toContain("burst-1\n")
        expect(marked.at(-1)?.running?.output).toContain("after-go1\n")
        // 300 lines and more came in pieces, yet the output was saved at most once a second after the mark
        const span = marked.at(-1)!.at - marked[0].at
        expect(marked.length - 1).toBeLessThanOrEqual(1 + Math.floor(span / 1000))
        // once the call has its result no write marks it any more, and the turn's last write has no marker
        const afterRun = writes.findIndex((w, i) =>
          i > 0 && w.running === undefined && writes[i - 1].running !== undefined
        )
        expect(writes.slice(afterRun).every((w) => w.running === undefined)).toBe(true)
        expect(writes.at(-1)?.inProgress).toBe(false)
      }).pipe(
        Effect.provide(coreLayer(testConfig(server.url, { sessions: { enabled: true } }), spied, scriptedApprover([])))
      )
    }))
})
