// Plan mode in the core: what reads runs (unasked inside the project, asked outside it as in any
// mode), everything else is refused with a line the model reads in its next request, before
// anyone is asked; the system prompt says plan mode only while the conversation is in it.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"

import type { ApprovalRequest } from "../../src/approvals/Approver"
import type { ApprovalMode } from "../../src/approvals/SessionSettings"
import type { AgentConfig } from "../../src/config/Config"
import type { Conversation } from "../../src/sessions/Conversation"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { MCP_TEST_SERVER } from "../support/paths"
import { tempDir } from "../support/processes"

const REFUSED = /^refused in plan mode: /

describe("plan mode", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
    process.env.XDG_CONFIG_HOME = tempDir("mm-xdg-")
  })
  afterAll(() => server.close())

  /** Asks before anything changes; the approver denies whatever it is asked, and remembers it. */
  const layer = (asked: Array<ApprovalRequest>, config: AgentConfig = testConfig(server.url, { permissions: "ask" })) =>
    coreLayer(config, MemorySessionStore.layer(), scriptedApprover(["deny", "deny", "deny"], asked))

  const project = () => {
    const root = tempDir("mm-plan-mode-")
    execFileSync("git", ["init", "-q"], { cwd: root })
    fs.mkdirSync(path.join(root, "src"))
    fs.writeFileSync(path.join(root, "src", "loop.ts"), "export function turnLoop() {}\n")
    fs.writeFileSync(path.join(root, "notes.txt"), "keep me\n")
    return root
  }

  /** A conversation in `cwd`, in `mode`. */
  const opened = (cwd: string, mode: ApprovalMode) =>
    Effect.gen(function*() {
      const conversation = yield* (yield* Keeper).open(cwd, { createFile: "later" })
      yield* setMode(conversation, mode)
      return conversation
    })

  const setMode = (conversation: Conversation, mode: ApprovalMode) =>
    Ref.update(conversation.settings, (settings) => ({ ...settings, mode }))

  it.live("refuses a write and an rm before anyone is asked; the model reads why", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = project()
      const conversation = yield* opened(cwd, "plan")
      server.push(
        {
          toolCalls: [
            { id: "w1", name: "write_file", arguments: { path: "new.txt", content: "x" } },
            { id: "e1", name: "edit_file", arguments: { path: "notes.txt", old: "keep", new: "lose" } },
            { id: "b1", name: "bash", arguments: { command: "rm notes.txt" } }
          ]
        },
        { text: "planned" }
      )
      yield* runTurn(conversation, "tidy up")
      const results = lastToolResults(server)
      expect(results.w1).toMatch(REFUSED)
      expect(results.w1).toContain("write_file changes files")
      expect(results.e1).toMatch(REFUSED)
      expect(results.b1).toMatch(REFUSED)
      expect(results.b1).toContain("this command is not one mm knows to only read (rm is not a read-only command)")
      expect(fs.existsSync(path.join(cwd, "new.txt"))).toBe(false)
      expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("keep me\n")
      expect(asked).toEqual([])
    }).pipe(Effect.provide(layer(asked)))
  })

  it.live("runs grep and read-only commands unasked; a read outside the project is still asked", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = project()
      const conversation = yield* opened(cwd, "plan")
      server.push(
        {
          toolCalls: [
            { id: "g1", name: "grep", arguments: { pattern: "function turnLoop" } },
            { id: "b1", name: "bash", arguments: { command: "ls src" } },
            { id: "b2", name: "bash", arguments: { command: "git status --short" } },
            { id: "r1", name: "read_file", arguments: { path: "/etc/hostname" } }
          ]
        },
        { text: "planned" }
      )
      yield* runTurn(conversation, "where is the loop?")
      const results = lastToolResults(server)
      expect(results.g1).toBe("src/loop.ts:1: export function turnLoop() {}")
      expect(results.b1).toContain("loop.ts")
      expect(results.b2).toContain("notes.txt")
      // asked, as in every mode, and denied by the script
      expect(results.r1).toBe("denied by the user")
      expect(asked.map((request) => request.tool)).toEqual(["read_file"])
    }).pipe(Effect.provide(layer(asked)))
  })

  it.live("refuses an MCP tool, even one its server's approval lets through", () => {
    const asked: Array<ApprovalRequest> = []
    const config: AgentConfig = {
      ...testConfig(server.url, { permissions: "ask" }),
      mcpServers: {
        test: { command: process.execPath, args: [MCP_TEST_SERVER], env: {}, enabled: true, approval: "allow" }
      }
    }
    return Effect.gen(function*() {
      const cwd = project()
      const conversation = yield* opened(cwd, "plan")
      server.push(
        { toolCalls: [{ id: "m1", name: "mcp__test__echo", arguments: { text: "hi" } }] },
        { text: "planned" }
      )
      yield* runTurn(conversation, "say hi")
      const request = server.completions().at(-2)!
      // the tool was offered: the refusal is plan mode's, not a missing tool's
      expect(request.body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain(
        "mcp__test__echo"
      )
      expect(lastToolResults(server).m1).toMatch(REFUSED)
      expect(lastToolResults(server).m1).toContain("mcp__test__echo is run by another program")
      expect(asked).toEqual([])
    }).pipe(Effect.provide(layer(asked, config)))
  })

  it.live("the system prompt says plan mode only while in it; out of it, the write goes ahead", () =>
    Effect.gen(function*() {
      const cwd = project()
      const conversation = yield* opened(cwd, "plan")
      const systemOf = (at: number) => server.completions()[at].body.messages[0].content as string
      server.push(
        { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
        { text: "the plan: write a.txt" }
      )
      const first = server.completions().length
      yield* runTurn(conversation, "plan it")
      // the configured prompt, then plan mode's words after it
      expect(systemOf(first)).toMatch(/^You are mm[\s\S]*\n\n# Plan mode\n[\s\S]*decides when you carry it out\.$/)
      expect(fs.existsSync(path.join(cwd, "a.txt"))).toBe(false)

      yield* setMode(conversation, "edits")
      server.push(
        { toolCalls: [{ id: "w2", name: "write_file", arguments: { path: "a.txt", content: "A" } }] },
        { text: "done" }
      )
      const second = server.completions().length
      yield* runTurn(conversation, "do it")
      expect(systemOf(second)).toMatch(/^You are mm/)
      expect(systemOf(second)).not.toContain("# Plan mode")
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("A")
      // the earlier refusal stays in the history the model reads
      const tools = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool")
      expect(tools.map((m: { content: string }) => m.content.slice(0, 22))).toEqual([
        "refused in plan mode: ",
        expect.stringMatching(/^created a\.txt/)
      ])
    }).pipe(Effect.provide(layer([]))))
})
