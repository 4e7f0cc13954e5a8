import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import type { ApprovalRequest } from "../../src/approvals/Approver"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"

/** The budget of the first request in a project without instruction files (SPEC §13). */
const FIRST_REQUEST_BUDGET = 5000
/** The same with every optional tool enabled (web_fetch, background jobs): what enabling them costs. */
const ALL_TOOLS_BUDGET = 6500

describe("grep and glob in a turn, under permissions: ask", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
    process.env.XDG_CONFIG_HOME = tempDir("mm-xdg-")
  })
  afterAll(() => server.close())

  const layer = (asked: Array<ApprovalRequest>) =>
    coreLayer(
      testConfig(server.url, { permissions: "ask", sessions: { enabled: true } }),
      MemorySessionStore.layer(),
      scriptedApprover(["deny", "deny", "deny"], asked)
    )

  const open = (cwd: string) => Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))

  const project = () => {
    const root = tempDir("mm-turn-search-")
    execFileSync("git", ["init", "-q"], { cwd: root })
    fs.writeFileSync(path.join(root, ".gitignore"), "build/\n")
    fs.mkdirSync(path.join(root, "src"))
    fs.mkdirSync(path.join(root, "build"))
    fs.writeFileSync(path.join(root, "src", "loop.ts"), "export function turnLoop() {}\n")
    fs.writeFileSync(path.join(root, "build", "loop.js"), "function turnLoop() {}\n")
    return root
  }

  it.live("inside the project they run unasked and respect .gitignore; a path outside asks", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = project()
      server.push(
        { toolCalls: [{ id: "g1", name: "grep", arguments: { pattern: "function turnLoop" } }] },
        { toolCalls: [{ id: "g2", name: "glob", arguments: { pattern: "loop.*" } }] },
        { toolCalls: [{ id: "g3", name: "grep", arguments: { pattern: "root", path: "/etc" } }] },
        { text: "found it" }
      )
      const before = server.completions().length
      yield* runTurn(yield* open(cwd), "where is the turn loop?")
      const requests = server.completions().slice(before)
      expect(requests[0].body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(
        expect.arrayContaining(["grep", "glob"])
      )
      const results = requests.at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
      expect(results[0].content).toBe("src/loop.ts:1: export function turnLoop() {}")
      expect(results[0].content).not.toContain("build/")
      expect(results[1].content).toBe("src/loop.ts")
      expect(results[2].content).toBe("denied by the user")
      // only the search outside the project was asked
      expect(asked.map((request) => request.tool)).toEqual(["grep"])
    }).pipe(Effect.provide(layer(asked)))
  })

  /** The request of a project's first question, as the server received it. */
  const firstRequest = Effect.gen(function*() {
    const cwd = project()
    server.push({ text: "ok" })
    const before = server.completions().length
    yield* runTurn(yield* open(cwd), "Where is the function that runs the turn loop, and what calls it?")
    return server.completions()[before]
  })

  it.live(`the first request of a project without instruction files is at most ${FIRST_REQUEST_BUDGET} bytes`, () =>
    Effect.gen(function*() {
      const request = yield* firstRequest
      // the system message, every tool's schema and the question, as sent
      const bytes = Buffer.byteLength(JSON.stringify(request.body))
      expect(request.body.messages[0].content).toContain("# Environment")
      expect(bytes).toBeLessThanOrEqual(FIRST_REQUEST_BUDGET)
    }).pipe(Effect.provide(layer([]))))

  it.live(`with web_fetch and background jobs enabled, it holds their tools and is at most ${ALL_TOOLS_BUDGET} bytes`, () =>
    Effect.gen(function*() {
      const request = yield* firstRequest
      const tools = request.body.tools.map((tool: { function: { name: string } }) => tool.function.name)
      expect(tools).toEqual(expect.arrayContaining(["web_fetch", "job_output", "job_kill"]))
      const bash = request.body.tools.find((tool: { function: { name: string } }) => tool.function.name === "bash")
      expect(Object.keys(bash.function.parameters.properties)).toContain("background")
      // 6,138 bytes when written (4,919 without them)
      expect(Buffer.byteLength(JSON.stringify(request.body))).toBeLessThanOrEqual(ALL_TOOLS_BUDGET)
    }).pipe(Effect.provide(
      coreLayer(
        {
          ...testConfig(server.url, { permissions: "ask", sessions: { enabled: true } }),
          webFetch: { ...defaultConfig().webFetch, enabled: true },
          jobs: { ...defaultConfig().jobs, enabled: true }
        },
        MemorySessionStore.layer(),
        scriptedApprover([], [])
      )
    )))
})
