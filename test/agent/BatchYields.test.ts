import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { builtinTools, registryOf } from "../../src/tools/Registry"
import { defineTool } from "../../src/tools/ToolRecord"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

/**
 * Issue 44: a batch of calls that never wait on anything (small writes) must still let Node's
 * event loop run between two calls, or no key, signal or editor's cancel is read until the
 * batch ends. The tool here is synchronous; the first call schedules a callback on the loop.
 */
const log: Array<string> = []
const tickTool = defineTool({
  name: "tick",
  description: "Records that it ran.",
  parameters: Schema.Struct({ n: Schema.Number }),
  access: "read",
  kind: "other",
  purpose: "tick with `tick`",
  describe: () => ({ title: "tick", locations: [] }),
  run: (args) =>
    Effect.sync(() => {
      if (args.n === 1) setImmediate(() => log.push("event loop"))
      log.push(`call ${args.n}`)
      return { output: "ok", failed: false }
    })
})

describe("a batch of tool calls", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it.live("gives the event loop a turn between two calls", () =>
    Effect.gen(function*() {
      server.push(
        { toolCalls: Array.from({ length: 20 }, (_, i) => ({ name: "tick", arguments: { n: i + 1 } })) },
        { text: "done" }
      )
      const conversation = yield* Effect.flatMap(Keeper, (keeper) =>
        keeper.open(tempDir("mm-batch-"), { createFile: "later" }))
      yield* runTurn(conversation, "tick twenty times")
      // the callback the first call scheduled ran right after it, before the second call
      expect(log.slice(0, 3)).toEqual(["call 1", "event loop", "call 2"])
      expect(log.filter((entry) =>
        entry.startsWith("call")
      )).toHaveLength(20)
    }).pipe(
      Effect.provide(
        coreLayer(testConfig(server.url), MemorySessionStore.layer(), scriptedApprover([]), {
          tools: registryOf([...builtinTools, tickTool])
        })
      )
    ))
})
