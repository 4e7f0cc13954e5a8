import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { Keeper } from "../src/Keeper"
import * as MemorySessionStore from "../src/MemorySessionStore"
import { SessionStore } from "../src/SessionStore"
import { type FakeModelServer, startFakeModelServer } from "./support/FakeModelServer"
import { coreLayer, runTurn, testConfig } from "./support/layers"

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
    const layer = coreLayer(testConfig(server.url, { sessions: { enabled: true } }), Layer.succeed(SessionStore, memory.store))
    return { memory, layer }
  }
  const notices = (events: ReadonlyArray<{ _tag: string; text?: string }>) => events.flatMap((e) => (e._tag === "Notice" ? [e.text] : []))

  it.live("says 'not saved' once, keeps trying, and says when saving works again; nothing is lost", () => {
    const { memory, layer } = setup(false)
    return Effect.gen(function* () {
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
      expect(stored.messages.filter((m: any) => m.role === "user").map((m: any) => m.content)).toEqual(["one", "two", "three", "four"])
    }).pipe(Effect.provide(layer))
  })

  it.live("a terminal that could not save at launch creates its file once the directory can be written", () => {
    const { memory, layer } = setup(true)
    return Effect.gen(function* () {
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
})
