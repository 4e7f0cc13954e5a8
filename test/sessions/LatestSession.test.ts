import { spawn } from "node:child_process"
import * as os from "node:os"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { emptySession, type Session } from "../../src/domain/Session"
import { systemProbe } from "../../src/lib/ProcessIdentity"
import { STOPPED_LINE } from "../../src/sessions/Interrupted"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { encodeSession } from "../../src/sessions/SessionCodec"
import { SessionStore } from "../../src/sessions/SessionStore"
import { coreLayer, testConfig } from "../support/layers"

// Which session a bare /resume and --continue take: the newest with a turn, or a newer one
// whose only question mm was killed during; never one whose only question failed, nor an
// empty one.

const DIR = "/project/.mm/sessions"

const session = (id: string, minute: number, fields: Partial<Session>): Session => ({
  ...emptySession(id, "/project", new Date(Date.UTC(2026, 11, 7, 10, minute))),
  ...fields
})
const at = (minute: number) => new Date(Date.UTC(2026, 11, 7, 10, minute)).toISOString()
const record = (line: string, question: string, minute: number) => ({
  kind: "generation" as const,
  at: at(minute),
  turns: 0,
  question,
  line
})

const answered = session("20261207-100100-0000000a", 1, {
  title: "answered",
  turns: 1,
  messages: [{ role: "user", content: "answered" }, { role: "assistant", content: "yes" }]
})
const failed = session("20261207-100300-0000000b", 3, {
  title: "failed",
  errors: [record("the model server did not answer", "failed", 3)]
})
const empty = session("20261207-100400-0000000c", 4, {})
const killed = session("20261207-100200-0000000d", 2, {
  title: "killed while streaming",
  messages: [{ role: "user", content: "killed while streaming" }],
  inProgress: { question: "killed while streaming", at: at(2), start: 0 }
})
const closedEarlier = session("20261207-100200-0000000e", 2, {
  title: "closed by an earlier load",
  errors: [record(STOPPED_LINE, "closed by an earlier load", 2)]
})

const resumeIn = (memory: ReturnType<typeof MemorySessionStore.make>, id: string | undefined) => {
  const layer = coreLayer(
    testConfig("http://127.0.0.1:9/v1", { sessions: { enabled: true } }),
    Layer.succeed(SessionStore, memory.store)
  )
  return Effect.gen(function*() {
    const conversation = yield* Effect.flatMap(Keeper, (k) => k.open("/project", { createFile: "later" }))
    return yield* conversation.resume(id)
  }).pipe(Effect.provide(layer))
}

const storeOf = (sessions: ReadonlyArray<Session>) => {
  const memory = MemorySessionStore.make()
  for (const s of sessions) memory.controls.writeRaw(DIR, `${s.id}.json`, encodeSession(s))
  return memory
}

const latest = (sessions: ReadonlyArray<Session>) => resumeIn(storeOf(sessions), undefined)

describe("the latest session", () => {
  it.effect("is the newest with a turn when the newer ones failed or are empty", () =>
    Effect.gen(function*() {
      const report = yield* latest([answered, failed, empty])
      expect(report?.id).toBe(answered.id)
      expect(yield* latest([failed, empty])).toBeUndefined()
    }))

  it.effect("is a newer one whose only question mm was killed during, closed as it is taken", () =>
    Effect.gen(function*() {
      const report = yield* latest([answered, failed, empty, killed])
      expect(report).toMatchObject({ id: killed.id, interrupted: "killed while streaming", messages: 0 })
      expect(yield* latest([failed, killed])).toMatchObject({ id: killed.id })
    }))

  it.effect("is one an earlier load closed, while its stopped record is the latest", () =>
    Effect.gen(function*() {
      expect(yield* latest([answered, closedEarlier, failed])).toMatchObject({ id: closedEarlier.id })
      // a question that failed after it: no longer a conversation to go on with
      const failedSince: Session = {
        ...closedEarlier,
        errors: [...closedEarlier.errors, record("the model server did not answer", "again", 3)]
      }
      expect(yield* latest([answered, failedSince])).toMatchObject({ id: answered.id })
    }))
})

describe("a session whose turn another mm is answering", () => {
  /** Another process of this host, as the mm answering the turn, while `body` runs. */
  const withOtherProcess = <A, E>(body: (by: { pid: number; host: string; start?: number }) => Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.async<ReturnType<typeof spawn>>((resume) => {
        const child = spawn("sleep", ["60"], { stdio: "ignore" })
        child.on("spawn", () => resume(Effect.succeed(child)))
      }),
      (child) => {
        const start = systemProbe.startOf(child.pid!)
        return body({ pid: child.pid!, host: os.hostname(), ...(start === undefined ? {} : { start }) })
      },
      (child) =>
        Effect.async<void>((resume) => {
          child.on("exit", () => resume(Effect.void))
          child.kill("SIGKILL")
        })
    )

  const live = (by: { pid: number; host: string; start?: number }): Session => ({
    ...killed,
    id: "20261207-100500-0000000f",
    updatedAt: at(5),
    inProgress: { ...killed.inProgress!, by }
  })

  it.effect("is refused by --continue (the latest) and by its id, and its file is left as it is", () =>
    withOtherProcess((by) =>
      Effect.gen(function*() {
        const { id } = live(by)
        const memory = storeOf([answered, live(by)])
        const before = memory.controls.readRaw(DIR, `${id}.json`)
        const line =
          `session ${id} is answering a question in another mm (pid ${by.pid}); wait for it to finish, or start a new conversation`
        for (const asked of [undefined, id]) {
          const error = yield* Effect.flip(resumeIn(memory, asked))
          expect(error).toMatchObject({ _tag: "ResumeError", reason: "live", message: line })
        }
        expect(memory.controls.readRaw(DIR, `${id}.json`)).toBe(before)
      })
    ))

  it.effect("is closed as interrupted once that mm is gone, or when it ran on another host", () =>
    Effect.gen(function*() {
      const gone = yield* withOtherProcess((by) => Effect.succeed(by))
      for (const by of [gone, { ...gone, host: `not-${os.hostname()}` }]) {
        const report = yield* latest([answered, live(by)])
        expect(report).toMatchObject({ id: live(by).id, interrupted: "killed while streaming" })
      }
    }))
})
