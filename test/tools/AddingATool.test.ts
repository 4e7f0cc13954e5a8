import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { toolsTable } from "../../scripts/tools-table"
import { permissionOptions } from "../../src/acp/AcpApprover"
import { replayUpdates } from "../../src/acp/Replay"
import { makeTurnRenderer } from "../../src/acp/TurnUpdates"
import type { TurnEvent } from "../../src/agent/TurnEvent"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { builtinTools, registryOf } from "../../src/tools/Registry"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { lineCountTool } from "../support/LineCountTool"
import { tempDir } from "../support/processes"

/** The tools of this test: the built-in ones and the small tool, added by one line, as CONTRIBUTING.md says. */
const tools = registryOf([...builtinTools, lineCountTool])

describe("a tool added by one module and one line of the registry", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const turn = (cwd: string, question: string, asked: Array<ApprovalRequest>, answers = ["once" as const]) =>
    Effect.gen(function*() {
      const conversation = yield* Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
      return yield* runTurn(conversation, question)
    }).pipe(
      Effect.provide(
        coreLayer(
          testConfig(server.url, { permissions: "ask" }),
          MemorySessionStore.layer(),
          scriptedApprover([...answers], asked),
          { tools }
        )
      )
    )

  it.live("is told to the model, named in the system prompt, run, and asked only for a path outside the project", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-new-tool-")
      fs.writeFileSync(path.join(cwd, "notes.txt"), "one\ntwo\nthree\n")
      const outside = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "mm-outside-")), "far.txt")
      fs.writeFileSync(outside, "far\n")
      server.push(
        { toolCalls: [{ id: "n1", name: "line_count", arguments: { path: "notes.txt" } }] },
        { toolCalls: [{ id: "n2", name: "line_count", arguments: { path: outside } }] },
        { toolCalls: [{ id: "n3", name: "line_count", arguments: {} }] },
        { toolCalls: [{ id: "n4", name: "word_count", arguments: { path: "notes.txt" } }] },
        { text: "three lines" }
      )
      const asked: Array<ApprovalRequest> = []
      const events = yield* turn(cwd, "how long are the notes?", asked)
      const request = server.completions().at(-1)!.body
      // what the model is told: the JSON Schema derived from the tool's one schema, and its purpose
      expect(request.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("line_count")
      expect(request.tools.find((t: { function: { name: string } }) => t.function.name === "line_count").function)
        .toEqual({
          name: "line_count",
          description: "Count the lines of a text file, relative to the project directory.",
          parameters: {
            type: "object",
            required: ["path"],
            properties: { path: { type: "string", description: "the file whose lines to count" } }
          }
        })
      expect(request.messages[0].content.split("\n")[1]).toContain("count lines with `line_count`")
      expect(request.messages[0].content.split("\n")[1]).toContain("`line_count` need no approval inside the project")
      // run: inside the project without a question; outside it asked, with "always" for reading that file
      const finished = events.filter((e): e is Extract<TurnEvent, { _tag: "ToolCallFinished" }> =>
        e._tag === "ToolCallFinished"
      )
      expect(finished.map((e) => [e.id, e.output, e.failed])).toEqual([
        ["n1", "notes.txt: 3 lines", false],
        ["n2", `${outside}: 1 line`, false],
        ["n3", "invalid arguments for line_count: missing required parameter \"path\"", true],
        ["n4", expect.stringMatching(/^unknown tool "word_count"; the tools are bash, .*, todo, line_count$/), true]
      ])
      expect(asked.map((r) => [r.tool, r.access, r.title])).toEqual([["line_count", "read", outside]])
      expect(asked[0].always.map((choice) => choice.covers)).toEqual([`reading ${fs.realpathSync(outside)}`])
      expect(permissionOptions(asked[0]).map((o) => o.name)).toContain(
        `Always allow reading ${fs.realpathSync(outside)}`
      )
      // shown: its title, kind and location, in the events and to an editor
      const started = events.find((e) => e._tag === "ToolCallStarted" && e.id === "n1")
      expect(started).toMatchObject({
        name: "line_count",
        title: "notes.txt",
        kind: "read",
        locations: [{ path: path.join(cwd, "notes.txt") }],
        asks: false
      })
      expect(makeTurnRenderer(cwd, undefined, tools).render(started!)).toEqual([
        expect.objectContaining({ sessionUpdate: "tool_call", kind: "read", title: "notes.txt", status: "in_progress" })
      ])
    }))

  it("is replayed to an editor, and listed in the docs' table", () => {
    const replayed = replayUpdates(
      [
        { role: "user", content: "count" },
        {
          role: "assistant",
          content: null,
          tool_calls: [{
            id: "c1",
            type: "function",
            function: { name: "line_count", arguments: "{\"path\":\"a.txt\"}" }
          }]
        },
        { role: "tool", tool_call_id: "c1", content: "a.txt: 2 lines" }
      ],
      "/p",
      { tools }
    )
    expect(replayed.find((u) => u.sessionUpdate === "tool_call")).toMatchObject({
      kind: "read",
      title: "a.txt",
      locations: [{ path: "/p/a.txt" }],
      status: "completed",
      rawOutput: "a.txt: 2 lines"
    })
    expect(toolsTable(tools.tools).split("\n").at(-1)).toBe(
      "| [`line_count`](#line_count) | `path` | reads the project | only for a `path` outside the project, or a file that [looks secret](#files-that-look-secret) | `read` |"
    )
  })
})
