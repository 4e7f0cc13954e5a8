import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { SessionStore } from "../../src/sessions/SessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, testConfig } from "../support/layers"

const DIR = "/project/.mm/sessions"

describe("the keeper when the disk says no, then yes again", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
    server.setFallback({ text: "answer" })
  })
  afterAll(() => server.close())

  const setup = (readOnly: boolean) => {
    const memory = MemorySessionStore.make({ readOnlyDirs: readOnly ? [DIR] : [] })
    const layer = coreLayer(
      testConfig(server.url, { sessions: { enabled: true } }),
      Layer.succeed(SessionStore, memory.store)
    )
    return { memory, layer }
  }
  const notices = (events: ReadonlyArray<{ _tag: string; text?: string }>) =>
    events.flatMap((e) => (e._tag === "Notice" ? [e.text] : []))

  it.live("says 'not saved' once, keeps trying, and says when saving works again; nothing is lost", () => {
    const { memory, layer } = setup(false)
    return Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open("/project", { createFile: "later" }))
      expect(notices(yield* runTurn(conversation, "one"))).toEqual([])
      const id = (yield* conversation.snapshot).id
      memory.controls.setReadOnly(DIR, true)
      const second = notices(yield* runTurn(conversation, "two"))
      expect(second).toHaveLength(1)
      expect(second[0]).toMatch(/^not saved \(/)
      expect(notices(yield* runTurn(conversation, "three"))).toEqual([])
      expect((yield* conversation.status)._tag).toBe("NotSaved")
      memory.controls.setReadOnly(DIR, false)
      expect(notices(yield* runTurn(conversation, "four"))).toEqual([`saved again under ${DIR}`])
      const stored = JSON.parse(memory.controls.readRaw(DIR, `${id}.json`)!)
      expect(stored.turns).toBe(4)
      expect(stored.messages.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual([
        "one",
        "two",
        "three",
        "four"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.live("a terminal that could not save at launch creates its file once the directory can be written", () => {
    const { memory, layer } = setup(true)
    return Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open("/project", { createFile: "later" }))
      expect((yield* conversation.status)._tag).toBe("NotSaved")
      expect(notices(yield* runTurn(conversation, "one"))).toEqual([])
      memory.controls.setReadOnly(DIR, false)
      expect(notices(yield* runTurn(conversation, "two"))).toEqual([`saved again under ${DIR}`])
      const [name] = memory.controls.names(DIR)
      const stored = JSON.parse(memory.controls.readRaw(DIR, name)!)
      expect(stored.turns).toBe(2)
      expect(stored.title).toBe("one")
    }).pipe(Effect.provide(layer))
  })

  /** Another process's write: the same session with one more exchange and a later updatedAt. */
  const writeBehindOurBack = (memory: ReturnType<typeof setup>["memory"], id: string) => {
    const theirs = JSON.parse(memory.controls.readRaw(DIR, `${id}.json`)!)
    theirs.messages.push({ role: "user", content: "their question" }, { role: "assistant", content: "their answer" })
    theirs.turns += 1
    theirs.updatedAt = new Date(Date.parse(theirs.updatedAt) + 1000).toISOString()
    memory.controls.writeRaw(DIR, `${id}.json`, JSON.stringify(theirs, null, 2) + "\n")
  }
  const userQuestions = (text: string | undefined) =>
    JSON.parse(text!).messages.filter((m: any) => m.role === "user").map((m: any) => m.content)

  it.live("terminal: when another mm wrote the session meanwhile, this conversation moves to a new id; nothing is overwritten", () => {
    const { memory, layer } = setup(false)
    return Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open("/project", { createFile: "later" }))
      yield* runTurn(conversation, "mine one")
      const id = (yield* conversation.snapshot).id
      writeBehindOurBack(memory, id)
      const said = notices(yield* runTurn(conversation, "mine two"))
      const forked = (yield* conversation.snapshot).id
      expect(forked).not.toBe(id)
      expect(said).toEqual([`session ${id} was changed by another mm; this conversation continues as ${forked}`])
      expect(userQuestions(memory.controls.readRaw(DIR, `${id}.json`))).toEqual(["mine one", "their question"])
      expect(userQuestions(memory.controls.readRaw(DIR, `${forked}.json`))).toEqual(["mine one", "mine two"])
      expect(notices(yield* runTurn(conversation, "mine three"))).toEqual([])
      expect(userQuestions(memory.controls.readRaw(DIR, `${forked}.json`))).toEqual([
        "mine one",
        "mine two",
        "mine three"
      ])
    }).pipe(Effect.provide(layer))
  })

  it.live("editor: the thread keeps its id and the other version is kept under a new one", () => {
    const { memory, layer } = setup(false)
    return Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (k) => k.open("/project", { createFile: "now" }))
      const id = (yield* conversation.snapshot).id
      yield* runTurn(conversation, "mine one")
      writeBehindOurBack(memory, id)
      const said = notices(yield* runTurn(conversation, "mine two"))
      expect(said).toHaveLength(1)
      const kept = /kept as (\S+)$/.exec(said[0]!)![1]
      expect((yield* conversation.snapshot).id).toBe(id)
      expect(userQuestions(memory.controls.readRaw(DIR, `${id}.json`))).toEqual(["mine one", "mine two"])
      expect(userQuestions(memory.controls.readRaw(DIR, `${kept}.json`))).toEqual(["mine one", "their question"])
    }).pipe(Effect.provide(layer))
  })
})
