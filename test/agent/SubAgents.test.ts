import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

import { Agent } from "../../src/agent/Agent"
import type { TurnEvent } from "../../src/agent/TurnEvent"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import type { AgentConfig } from "../../src/config/Config"
import { SUB_AGENT_SYSTEM } from "../../src/config/DefaultSystem"
import type { Session } from "../../src/domain/Session"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { coreLayer, runTurn, type ScriptedAnswer, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

/** One SSE chunk of a chat completion. */
const sse = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** An answer held back until `gate` settles: the request is in, the answer waits. */
const heldAnswer = (text: string, gate: Promise<unknown>) => ({
  kind: "raw" as const,
  chunks: [gate, sse({ role: "assistant", content: text }), sse({}, "stop"), "data: [DONE]\n\n"]
})

const taskCall = (id: string, description: string, prompt: string, agent?: string) => ({
  id,
  name: "task",
  arguments: { description, prompt, ...(agent === undefined ? {} : { agent }) }
})

type Wire = { role: string; content: string | null; tool_call_id?: string }

describe("sub-agents (task)", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const layer = (
    overrides: Partial<AgentConfig> = {},
    answers: Array<ScriptedAnswer> = [],
    asked: Array<ApprovalRequest> = []
  ) =>
    coreLayer(
      { ...testConfig(server.url, { permissions: "ask", sessions: { enabled: true } }), ...overrides },
      MemorySessionStore.layer(),
      scriptedApprover(answers, asked)
    )

  const open = (cwd: string) => Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))
  const load = (cwd: string, id: string) =>
    Effect.flatMap(Keeper, (keeper) => Effect.flatMap(keeper.load(cwd, id), (c) => c.snapshot))

  const project = () => {
    const cwd = tempDir("mm-subagents-")
    fs.mkdirSync(path.join(cwd, "src"))
    fs.writeFileSync(path.join(cwd, "src", "loop.ts"), "export function turnLoop() {}\n")
    return cwd
  }

  /** The id a `task` result names: `[sub-agent NAME, session ID]`. */
  const childIdIn = (output: string): string => /session ([^\]]+)\]/.exec(output)?.[1] ?? ""

  it.live("runs a sub-agent in a context of its own, saves it as a session with its parent, and hands back its answer", () =>
    Effect.gen(function*() {
      const cwd = project()
      server.push(
        { toolCalls: [taskCall("t1", "find the loop", "Find where turnLoop is defined; answer with the path.")] },
        {
          toolCalls: [{ id: "g1", name: "grep", arguments: { pattern: "function turnLoop" } }],
          usage: { prompt_tokens: 900, completion_tokens: 20 }
        },
        { text: "turnLoop is defined in src/loop.ts:1", usage: { prompt_tokens: 1000, completion_tokens: 12 } },
        { text: "It is in src/loop.ts." }
      )
      const before = server.completions().length
      const conversation = yield* open(cwd)
      const events = yield* runTurn(conversation, "Where is the turn loop? Use a sub-agent.")
      const [parentFirst, childFirst, childSecond, parentLast] = server.completions().slice(before)

      // the sub-agent's requests hold its own system prompt and the task, nothing of the parent's conversation
      const childMessages = childFirst.body.messages as Array<Wire>
      expect(childMessages.map((m) => m.role)).toEqual(["system", "user"])
      expect(childMessages[0].content).toContain(SUB_AGENT_SYSTEM.split("\n")[0])
      expect(childMessages[1].content).toBe("Find where turnLoop is defined; answer with the path.")
      expect(JSON.stringify(childSecond.body.messages)).not.toContain("Where is the turn loop")
      expect(childFirst.body.tools.map((t: { function: { name: string } }) => t.function.name).sort()).toEqual(
        ["bash", "glob", "grep", "read_file"]
      )
      expect(parentFirst.body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain("task")

      // its answer is the task call's result, naming the sub-agent's session
      const result = (parentLast.body.messages as Array<Wire>).find((m) => m.tool_call_id === "t1")!
      expect(result.content).toContain("turnLoop is defined in src/loop.ts:1")
      const childId = childIdIn(result.content ?? "")
      expect(childId).not.toBe("")

      // the sub-agent's conversation is a session whose parent is that call
      const parent = yield* conversation.snapshot
      const child: Session = yield* load(cwd, childId)
      expect(child.parent).toEqual({ id: parent.id, turn: 1, callId: "t1" })
      expect(child.title).toBe("general: find the loop")
      expect(child.turns).toBe(1)
      expect(child.messages.at(-1)).toMatchObject({
        role: "assistant",
        content: "turnLoop is defined in src/loop.ts:1"
      })

      // its steps are the task call's output as they come; what it spent is told apart
      const output = events.flatMap((e) => (e._tag === "ToolOutput" && e.id === "t1" ? [e.text] : [])).join("")
      expect(output).toContain("grep function turnLoop")
      expect(events.filter((e) => e._tag === "SubAgentUsage")).toEqual([
        {
          _tag: "SubAgentUsage",
          id: "t1",
          agent: "general",
          promptTokens: 1900,
          completionTokens: 32,
          estimated: false
        }
      ])
      const report = yield* Effect.flatMap(Agent, (agent) => agent.context(conversation))
      expect(report.subAgents).toEqual({ runs: 1, promptTokens: 1900, completionTokens: 32 })
    }).pipe(Effect.provide(layer())))

  it.live("asks the user about a sub-agent's call under its name, and shares the conversation's answers", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = project()
      server.push(
        { toolCalls: [taskCall("t1", "make a file", "Create notes.txt with the word hi.")] },
        { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "notes.txt", content: "hi\n" } }] },
        { text: "notes.txt written" },
        { text: "done" }
      )
      yield* runTurn(yield* open(cwd), "make notes")
      expect(asked).toHaveLength(1)
      // its call ids are its model's own: the question's id is kept apart from the parent's calls
      expect(asked[0]).toMatchObject({ tool: "write_file", agent: "general", toolCallId: "t1/w1" })
      expect(fs.readFileSync(path.join(cwd, "notes.txt"), "utf8")).toBe("hi\n")
    }).pipe(
      Effect.provide(layer({ agents: { general: { description: "g", tools: ["write_file"] } } }, ["once"], asked))
    )
  })

  it.live("runs two tasks of one answer side by side", () =>
    Effect.gen(function*() {
      const cwd = project()
      const before = server.completions().length
      // neither sub-agent is answered before both have asked: run one after the other, they never would
      const bothAsked = until(() => server.completions().length >= before + 3, "both sub-agents' requests", 20_000)
      server.push(
        { toolCalls: [taskCall("a", "look at a", "Task A"), taskCall("b", "look at b", "Task B")] },
        heldAnswer("one answer", bothAsked),
        heldAnswer("another answer", bothAsked),
        { text: "both done" }
      )
      const events = yield* runTurn(yield* open(cwd), "two things")
      // the results come in the order of the calls, whichever ended first
      const results = (server.completions().at(-1)!.body.messages as Array<Wire>).filter((m) => m.role === "tool")
      expect(results.map((m) => m.tool_call_id)).toEqual(["a", "b"])
      expect(results.map((m) => (m.content ?? "").split("\n")[0]).sort()).toEqual(["another answer", "one answer"])
      const asked = server.completions().slice(before + 1, before + 3).map((r) =>
        (r.body.messages as Array<Wire>)[1].content
      )
      expect(asked.sort()).toEqual(["Task A", "Task B"])
      expect(events.at(-1)).toMatchObject({ _tag: "TurnFinished", stopReason: "end_turn" })
    }).pipe(Effect.provide(layer())))

  it.live("a cancel stops every sub-agent, and each keeps its cancelled turn", () =>
    Effect.gen(function*() {
      const cwd = project()
      const before = server.completions().length
      const abortedBefore = server.aborted()
      server.push(
        { toolCalls: [taskCall("a", "wait a", "Task A"), taskCall("b", "wait b", "Task B")] },
        { kind: "silent" },
        { kind: "silent" }
      )
      const agent = yield* Agent
      const conversation = yield* open(cwd)
      const seen: Array<TurnEvent> = []
      const fiber = yield* agent.turn(conversation, "two slow things").pipe(
        Stream.runForEach((e) => Effect.sync(() => seen.push(e))),
        Effect.fork
      )
      yield* Effect.promise(() => until(() => server.completions().length >= before + 3, "both sub-agents asking"))
      yield* Fiber.interrupt(fiber)
      // both requests were given up
      yield* Effect.promise(() => until(() => server.aborted() >= abortedBefore + 2, "both requests aborted"))
      const parent = yield* conversation.snapshot
      const results = parent.messages.filter((m) => m.role === "tool")
      expect(results.map((m) => m.tool_call_id).sort()).toEqual(["a", "b"])
      expect(results.every((m) => m.failed === true && (m.content ?? "").includes("cancelled by the user"))).toBe(true)
      // a cancelled task still names its sub-agent's session
      expect(results.every((m) => /\[sub-agent general, session \d{8}-\d{6}-[0-9a-f]{8}\]/.test(m.content ?? ""))).toBe(
        true
      )
      // each sub-agent's own file holds its task, its turn counted as a cancelled one is
      // a plain listing hides sub-agents' sessions: they are asked for
      const hidden = yield* Effect.flatMap(Keeper, (keeper) => keeper.list(cwd))
      expect(hidden._tag === "Listed" && hidden.entries.length).toBe(1)
      const listing = yield* Effect.flatMap(Keeper, (keeper) => keeper.list(cwd, { subAgents: true }))
      const ids = listing._tag === "Listed"
        ? listing.entries.flatMap((e) => (e._tag === "Readable" && e.summary.id !== parent.id ? [e.summary.id] : []))
        : []
      const children = yield* Effect.forEach(ids, (id) => load(cwd, id))
      expect(children.map((c) => c.parent?.id)).toEqual([parent.id, parent.id])
      expect(children.map((c) => c.messages.find((m) => m.role === "user")?.content).sort()).toEqual([
        "Task A",
        "Task B"
      ])
      expect(children.map((c) => c.turns)).toEqual([1, 1])
      expect(children.every((c) => c.inProgress === undefined && c.errors.length === 0)).toBe(true)
    }).pipe(Effect.provide(layer())))

  it.live("a sub-agent's failure is a failed result, recorded in its own file", () =>
    Effect.gen(function*() {
      const cwd = project()
      server.push(
        { toolCalls: [taskCall("t1", "fail", "Do the impossible.")] },
        { kind: "status", status: 400, body: { error: { message: "bad request for the sub-agent" } } },
        { text: "it failed" }
      )
      yield* runTurn(yield* open(cwd), "try it")
      const result = (server.completions().at(-1)!.body.messages as Array<Wire>).find((m) => m.tool_call_id === "t1")!
      expect(result.content).toMatch(/^sub-agent general failed: .*bad request for the sub-agent/)
      const child = yield* load(cwd, childIdIn(result.content ?? ""))
      expect(child.errors).toHaveLength(1)
      expect(child.errors[0]).toMatchObject({ kind: "generation", question: "Do the impossible." })
      // what it did is kept: its file is the record, a failed turn included
      expect(child.turns).toBe(1)
      expect(child.messages.map((m) => m.role)).toEqual(["system", "user"])
    }).pipe(Effect.provide(layer())))

  it.live("a declared agent brings its own prompt, tools and model; an unknown name is refused", () =>
    Effect.gen(function*() {
      const cwd = project()
      server.push(
        {
          toolCalls: [taskCall("t1", "review", "Review src/loop.ts.", "reviewer"), taskCall("t2", "x", "X", "nobody")]
        },
        { text: "looks fine" },
        { text: "reviewed" }
      )
      const before = server.completions().length
      yield* runTurn(yield* open(cwd), "review it")
      const [parentFirst, child, parentLast] = server.completions().slice(before)
      const task = parentFirst.body.tools.find((t: { function: { name: string } }) => t.function.name === "task")
      expect(task.function.description).toContain("reviewer: Reviews code for bugs")
      expect(child.body.model).toBe("m2")
      expect((child.body.messages as Array<Wire>)[0].content).toMatch(/^You review code\./)
      expect(child.body.tools.map((t: { function: { name: string } }) => t.function.name)).toEqual(["read_file"])
      const unknown = (parentLast.body.messages as Array<Wire>).find((m) => m.tool_call_id === "t2")!
      expect(unknown.content).toBe("no agent named \"nobody\"; the agents are general, reviewer")
    }).pipe(Effect.provide(layer({
      agents: {
        reviewer: {
          description: "Reviews code for bugs",
          system: "You review code.",
          tools: ["read_file"],
          model: "m2"
        }
      }
    }))))

  it.live("a sub-agent works in its parent's mode: in plan mode its write is refused", () =>
    Effect.gen(function*() {
      const cwd = project()
      server.push(
        { toolCalls: [taskCall("t1", "write", "Write notes.txt.")] },
        { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "notes.txt", content: "hi\n" } }] },
        { text: "refused" },
        { text: "ok" }
      )
      const conversation = yield* open(cwd)
      yield* Ref.update(conversation.settings, (settings) => ({ ...settings, mode: "plan" as const }))
      yield* runTurn(conversation, "plan it")
      const childRequest = server.completions().at(-2)!.body.messages as Array<Wire>
      expect(childRequest.find((m) => m.tool_call_id === "w1")?.content).toMatch(/^refused in plan mode/)
      expect(childRequest[0].content).toContain("You are in plan mode")
      expect(fs.existsSync(path.join(cwd, "notes.txt"))).toBe(false)
    }).pipe(Effect.provide(layer({ agents: { general: { description: "g", tools: ["write_file"] } } }))))

  it.live("a sub-agent stopped by maxSteps says so in its result", () =>
    Effect.gen(function*() {
      const cwd = project()
      server.push(
        { toolCalls: [taskCall("t1", "loop", "Keep looking.")] },
        { toolCalls: [{ id: "g1", name: "glob", arguments: { pattern: "*.ts" } }] },
        { toolCalls: [{ id: "g2", name: "glob", arguments: { pattern: "*.md" } }] },
        { text: "stopped" }
      )
      yield* runTurn(yield* open(cwd), "look")
      const result = (server.completions().at(-1)!.body.messages as Array<Wire>).find((m) => m.tool_call_id === "t1")!
      expect(result.content).toMatch(/^sub-agent general stopped after 2 model calls \(maxSteps\) without an answer\n/)
    }).pipe(Effect.provide(layer({ maxSteps: 2 }))))
})
