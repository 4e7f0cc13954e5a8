import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"

import { DENIED } from "../../src/agent/ToolCalls"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, type ScriptedAnswer, scriptedApprover, testConfig } from "../support/layers"
import { MCP_TEST_SERVER } from "../support/paths"

const SERVER = MCP_TEST_SERVER

let fake: FakeModelServer
let scratch: string
beforeEach(async () => {
  fake = await startFakeModelServer()
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "mm-mcp-agent-"))
})
afterEach(async () => {
  await fake.close()
  fs.rmSync(scratch, { recursive: true, force: true })
})

const calls = (file: string): Array<any> =>
  fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l)) : []

/** A turn of the real core, with one stdio server of the given approval, answering approvals from a script. */
const turnWith = (approval: "ask" | "allow", answers: Array<ScriptedAnswer>, questions: ReadonlyArray<string>) => {
  const log = path.join(scratch, "calls.log")
  const config = {
    ...testConfig(fake.url, { permissions: "ask" }),
    mcpServers: {
      test: { command: process.execPath, args: [SERVER], env: { MCP_TEST_LOG: log }, enabled: true, approval }
    }
  }
  const asked: Array<ApprovalRequest> = []
  const layer = coreLayer(config, MemorySessionStore.layer(), scriptedApprover(answers, asked), { projectDir: scratch })
  const program = Effect.gen(function*() {
    const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(scratch, { createFile: "later" }))
    const events = []
    for (const question of questions) events.push(...(yield* runTurn(conversation, question)))
    return { events, messages: (yield* conversation.snapshot).messages }
  })
  return Effect.runPromise(Effect.scoped(Effect.provide(program, layer))).then((result) => ({
    ...result,
    asked,
    calls: calls(log)
  }))
}

describe("approving MCP tools", () => {
  it(
    "asks like bash; 'always' covers that tool for the rest of the session, not the server's other tools",
    async () => {
      fake.push(
        { toolCalls: [{ name: "mcp__test__echo", arguments: { text: "one" } }] },
        { toolCalls: [{ name: "mcp__test__echo", arguments: { text: "two" } }] },
        { toolCalls: [{ name: "mcp__test__look", arguments: { what: "three" } }] },
        { text: "done" }
      )
      const { asked, calls } = await turnWith("ask", ["always", "deny"], ["go"])
      expect(asked.map((a) => [a.tool, a.title])).toEqual([
        ["mcp__test__echo", "one"],
        ["mcp__test__look", "three"]
      ])
      expect(calls).toEqual([
        { tool: "echo", text: "one" },
        { tool: "echo", text: "two" }
      ])
      expect(fake.completions()[3].body.messages.at(-1)).toMatchObject({ role: "tool", content: DENIED })
    },
    30_000
  )

  it("a server with approval: allow is never asked about", async () => {
    fake.push({ toolCalls: [{ name: "mcp__test__echo", arguments: { text: "free" } }] }, { text: "done" })
    const { asked, calls, events } = await turnWith("allow", [], ["go"])
    expect(asked).toEqual([])
    expect(calls).toEqual([{ tool: "echo", text: "free" }])
    expect(events.find((e) => e._tag === "ToolCallFinished")).toMatchObject({ output: "echo: free", failed: false })
  }, 30_000)
})
