import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { Agent } from "../../src/agent/Agent"
import { DENIED, NO_TERMINAL } from "../../src/agent/ToolCalls"
import { Approval, type ApprovalRequest, Approver } from "../../src/approvals/Approver"
import type { Session } from "../../src/domain/Session"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { SessionStore } from "../../src/sessions/SessionStore"
import { builtinTools } from "../../src/tools/Registry"
import { type FakeModelServer, startFakeModelServer } from "../support/FakeModelServer"
import { type ConfigOverrides, coreLayer, runTurn, scriptedApprover, testConfig } from "../support/layers"
import { tempDir } from "../support/processes"
import { processesRunning } from "../support/sandbox"
import { until } from "../support/until"

describe("the turn loop", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const layer = (overrides: ConfigOverrides = {}, approver = scriptedApprover([])) =>
    coreLayer(
      testConfig(server.url, { sessions: { enabled: true }, ...overrides }),
      MemorySessionStore.layer(),
      approver
    )

  const open = (cwd: string) => Effect.flatMap(Keeper, (keeper) => keeper.open(cwd, { createFile: "later" }))

  it.live("a first question makes the session's file holding it: one write, then two per tool call and one at the end", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      const memory = MemorySessionStore.make()
      const writes: Array<string> = []
      const said = (session: Session) =>
        `${session.messages.filter((m) => m.role === "user").length} question(s)${
          session.inProgress ? ", in progress" : ""
        }${session.inProgress?.running ? `, ${session.inProgress.running.id} running` : ""}`
      const spied = Layer.succeed(SessionStore, {
        ...memory.store,
        createNew: (dir, cwd) =>
          Effect.zipRight(Effect.sync(() => writes.push("createNew: empty")), memory.store.createNew(dir, cwd)),
        saveAsNew: (dir, session) =>
          Effect.zipRight(
            Effect.sync(() => writes.push(`saveAsNew: ${said(session)}`)),
            memory.store.saveAsNew(dir, session)
          ),
        save: (dir, session, expected) =>
          Effect.zipRight(
            Effect.sync(() => writes.push(`save: ${said(session)}`)),
            memory.store.save(dir, session, expected)
          )
      })
      server.push({ toolCalls: [{ id: "c1", name: "bash", arguments: { command: "true" } }] }, { text: "done" })
      yield* Effect.gen(function*() {
        const conversation = yield* open(cwd)
        yield* runTurn(conversation, "run true")
      }).pipe(
        Effect.provide(coreLayer(testConfig(server.url, { sessions: { enabled: true } }), spied, scriptedApprover([])))
      )
      expect(writes).toEqual([
        "saveAsNew: 1 question(s), in progress",
        // before the call runs: marked as running, then after it with its result
        "save: 1 question(s), in progress, c1 running",
        "save: 1 question(s), in progress",
        "save: 1 question(s)"
      ])
    }))

  it.live("runs bash, then write_file, then answers; the history holds every call and result", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      fs.writeFileSync(path.join(cwd, "seed.txt"), "seed\n")
      server.push(
        { toolCalls: [{ id: "c1", name: "bash", arguments: { command: "ls" } }] },
        { toolCalls: [{ id: "c2", name: "write_file", arguments: { path: "out/hello.txt", content: "hi there\n" } }] },
        { text: "Done: wrote out/hello.txt" }
      )
      const conversation = yield* open(cwd)
      const events = yield* runTurn(conversation, "list, then write a file")
      // a running bash tells what it prints as it comes, before its result
      const live = events.flatMap((e) => (e._tag === "ToolOutput" ? [e] : []))
      expect(live.map((e) => e.text).join("")).toBe("seed.txt\n")
      expect(live.every((e) => e.id === "c1")).toBe(true)
      expect(events.findIndex((e) => e._tag === "ToolOutput")).toBeLessThan(
        events.findIndex((e) => e._tag === "ToolCallFinished")
      )
      expect(events.filter((e) => e._tag !== "ToolOutput").map((e) => e._tag)).toEqual([
        "Usage",
        "ToolCallStarted",
        "ToolCallFinished",
        "Usage",
        "ToolCallStarted",
        "ToolCallFinished",
        "TextDelta",
        "TextDelta",
        "TextDelta",
        "Usage",
        "TurnFinished"
      ])
      expect(fs.readFileSync(path.join(cwd, "out/hello.txt"), "utf8")).toBe("hi there\n")
      const session = yield* conversation.snapshot
      expect(session.turns).toBe(1)
      expect(session.title).toBe("list, then write a file")
      const [system, user, call1, result1, call2, result2, answer] = session.messages
      expect(system.role).toBe("system")
      expect(user).toEqual({ role: "user", content: "list, then write a file" })
      expect(call1).toEqual({
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: "{\"command\":\"ls\"}" } }]
      })
      expect(result1.role).toBe("tool")
      expect(result1.tool_call_id).toBe("c1")
      expect(result1.content).toContain("seed.txt")
      expect(call2.tool_calls?.[0].function.name).toBe("write_file")
      expect(result2).toMatchObject({ role: "tool", tool_call_id: "c2" })
      expect(result2.failed).toBeUndefined()
      expect(answer).toEqual({ role: "assistant", content: "Done: wrote out/hello.txt" })
      const third = server.completions().at(-1)!.body
      expect(third.messages.at(-1)).toEqual({ role: "tool", tool_call_id: "c2", content: result2.content })
      expect(third.tools.map((t: any) => t.function.name)).toEqual(builtinTools.map((tool) => tool.name))
    }).pipe(Effect.provide(layer())))

  it.live("an edit_file with zero or two occurrences is a failed result the model sees", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      fs.writeFileSync(path.join(cwd, "a.txt"), "x x\n")
      server.push(
        { toolCalls: [{ id: "e0", name: "edit_file", arguments: { path: "a.txt", old: "missing", new: "y" } }] },
        { toolCalls: [{ id: "e2", name: "edit_file", arguments: { path: "a.txt", old: "x", new: "y" } }] },
        { text: "I could not edit it." }
      )
      const conversation = yield* open(cwd)
      const events = yield* runTurn(conversation, "edit")
      const finished = events.filter((e) => e._tag === "ToolCallFinished")
      expect(finished.map((e) => e._tag === "ToolCallFinished" && e.failed)).toEqual([true, true])
      const last = server.completions().at(-1)!.body.messages
      const results = last.filter((m: any) => m.role === "tool")
      expect(results[0].content).toMatch(/not found/)
      expect(results[1].content).toMatch(/2 times/)
      expect(results[0].failed).toBeUndefined()
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("x x\n")
      const session = yield* conversation.snapshot
      expect(session.messages.flatMap((m) => (m.role === "tool" ? [m.failed] : []))).toEqual([true, true])
    }).pipe(Effect.provide(layer())))

  it.live("a 1 MB command output reaches the model cut to maxOutput, with the marker", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      server.push(
        {
          toolCalls: [{
            id: "big",
            name: "bash",
            arguments: { command: "head -c 1048576 /dev/zero | tr '\\0' 'a'; echo; echo THE-END" }
          }]
        },
        { text: "long" }
      )
      yield* runTurn(yield* open(cwd), "make noise")
      const result = server.completions().at(-1)!.body.messages.find((m: any) => m.role === "tool")
      expect(result.content.length).toBeLessThan(2000 + 200)
      expect(result.content).toMatch(/characters cut/)
      expect(result.content).toContain("THE-END")
    }).pipe(Effect.provide(layer({ maxOutput: 2000 }))))

  it.live("a bash that sleeps past its timeout is killed with its children", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      // a sleep no other test runs: in the sandbox its pid is not the host's, so it is found by its command line
      const child = ["sleep", `30.${process.pid}1`]
      server.push(
        {
          toolCalls: [{
            id: "slow",
            name: "bash",
            arguments: { command: `${child.join(" ")} & echo started > child.pid; sleep 30`, timeout: 1 }
          }]
        },
        { text: "it timed out" }
      )
      const events = yield* runTurn(yield* open(cwd), "wait")
      const finished = events.find((e) => e._tag === "ToolCallFinished")
      expect(finished?._tag === "ToolCallFinished" && finished.failed).toBe(true)
      expect(fs.readFileSync(path.join(cwd, "child.pid"), "utf8")).toBe("started\n")
      yield* Effect.promise(() => until(() => processesRunning(child).length === 0, "the child to be killed"))
    }).pipe(Effect.provide(layer())))

  it.live("maxSteps stops a model that calls tools forever, with a clear line", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      for (let i = 0; i < 3; i++) server.push({ toolCalls: [{ name: "bash", arguments: { command: "true" } }] })
      const conversation = yield* open(cwd)
      const events = yield* runTurn(conversation, "loop forever")
      const notice = events.find((e) => e._tag === "Notice")
      expect(notice?._tag === "Notice" && notice.text).toMatch(/stopped after 3 model calls in one turn \(maxSteps\)/)
      expect(events.at(-1)).toEqual({ _tag: "TurnFinished", stopReason: "max_steps" })
      expect((yield* conversation.snapshot).turns).toBe(1)
    }).pipe(Effect.provide(layer({ maxSteps: 3 }))))

  it.live("a failure at the third model call leaves the messages exactly as before the question", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      server.push({ text: "first answer" })
      const conversation = yield* open(cwd)
      yield* runTurn(conversation, "first question")
      const before = yield* conversation.snapshot
      server.push(
        { toolCalls: [{ name: "bash", arguments: { command: "echo one" } }] },
        { toolCalls: [{ name: "bash", arguments: { command: "echo two" } }] },
        { kind: "status", status: 500, body: { error: { message: "boom: out of memory" } } }
      )
      const events = yield* runTurn(conversation, "second question\nwith two lines")
      const failed = events.at(-1)
      expect(failed?._tag).toBe("TurnFailed")
      const after = yield* conversation.snapshot
      expect(after.messages).toEqual(before.messages)
      expect(after.turns).toBe(1)
      expect(after.errors).toHaveLength(1)
      const record = after.errors[0]
      expect(record.kind).toBe("generation")
      expect(record.question).toBe("second question")
      expect(record.turns).toBe(1)
      expect(record.line).toBe(failed?._tag === "TurnFailed" ? failed.error.message : "")
      expect(record.line).toMatch(/HTTP 500.*boom: out of memory/)
      expect(Number.isNaN(Date.parse(record.at))).toBe(false)
    }).pipe(Effect.provide(layer())))

  it.live("a refused approval reaches the model as 'denied by the user'; 'always' covers only its scope", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      server.push(
        { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "no.txt", content: "x" } }] },
        { toolCalls: [{ id: "b1", name: "bash", arguments: { command: "echo ok > yes.txt" } }] },
        { toolCalls: [{ id: "b2", name: "bash", arguments: { command: "echo again >> yes.txt" } }] },
        { toolCalls: [{ id: "b3", name: "bash", arguments: { command: "echo ok > yes.txt" } }] },
        { toolCalls: [{ id: "t1", name: "bash", arguments: { command: "touch told" } }] },
        { toolCalls: [{ id: "r1", name: "read_file", arguments: { path: "yes.txt" } }] },
        { text: "ok" }
      )
      yield* runTurn(yield* open(cwd), "try things")
      expect(fs.existsSync(path.join(cwd, "no.txt"))).toBe(false)
      expect(fs.existsSync(path.join(cwd, "told"))).toBe(false)
      expect(fs.readFileSync(path.join(cwd, "yes.txt"), "utf8")).toBe("ok\n")
      const results = server.completions().at(-1)!.body.messages.filter((m: any) => m.role === "tool")
      expect(results.map((m: any) => m.content)).toEqual([
        DENIED,
        "exit code 0\n(no output)",
        DENIED,
        "exit code 0\n(no output)",
        `${DENIED}: use yarn instead`,
        "ok"
      ])
      // a compound command's "always" covers that exact line only: b2 was asked, b3 was not
      expect(asked.map((a) => [a.tool, a.toolCallId])).toEqual([
        ["write_file", "w1"],
        ["bash", "b1"],
        ["bash", "b2"],
        ["bash", "t1"]
      ])
      expect(asked[1].preview).toEqual({ _tag: "Command", command: "echo ok > yes.txt", timeout: undefined })
      expect(asked[1].always.map((c) => [c.label, c.keep])).toEqual([
        ["run exactly this command", "project"],
        ["session only", "session"]
      ])
    }).pipe(
      Effect.provide(
        layer(
          { permissions: "ask" },
          scriptedApprover(["deny", "always", "deny", Approval.denyWith("  use yarn instead ")], asked)
        )
      )
    )
  })

  it.live("an edit is previewed as a diff of the file on disk; 'project' then covers every edit inside it", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      fs.writeFileSync(path.join(cwd, "a.txt"), "one\ntwo\nthree\n")
      server.push(
        { toolCalls: [{ id: "e1", name: "edit_file", arguments: { path: "a.txt", old: "two", new: "TWO" } }] },
        { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "sub/b.txt", content: "b\n" } }] },
        { toolCalls: [{ id: "e2", name: "edit_file", arguments: { path: "a.txt", old: "one", new: "ONE" } }] },
        { text: "ok" }
      )
      const events = yield* runTurn(yield* open(cwd), "edit")
      expect(fs.readFileSync(path.join(cwd, "a.txt"), "utf8")).toBe("ONE\nTWO\nthree\n")
      expect(fs.readFileSync(path.join(cwd, "sub/b.txt"), "utf8")).toBe("b\n")
      expect(asked.map((a) => a.toolCallId)).toEqual(["e1"])
      const preview = asked[0].preview
      expect(preview._tag === "FileChange" && preview.diff).toBe(
        "--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
      )
      expect(asked[0].always.map((c) => c.label)).toEqual(["a.txt", "every edit in this project"])
      // each finished file call carries the file before and after it
      const changes = events.flatMap((
        e
      ) => (e._tag === "ToolCallFinished" && e.change !== undefined ? [[e.id, e.change.before, e.change.after]] : []))
      expect(changes).toEqual([
        ["e1", "one\ntwo\nthree\n", "one\nTWO\nthree\n"],
        ["w1", undefined, "b\n"],
        ["e2", "one\nTWO\nthree\n", "ONE\nTWO\nthree\n"]
      ])
    }).pipe(Effect.provide(layer({ permissions: "ask" }, scriptedApprover(["project"], asked))))
  })

  it.live("with no one to ask, the call is refused with a line that says how to allow it", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      server.push({ toolCalls: [{ id: "b1", name: "bash", arguments: { command: "touch x" } }] }, { text: "ok" })
      const events = yield* runTurn(yield* open(cwd), "go")
      expect(fs.existsSync(path.join(cwd, "x"))).toBe(false)
      expect(events.find((e) => e._tag === "ToolCallFinished")).toMatchObject({ output: NO_TERMINAL, failed: true })
      expect(NO_TERMINAL).toBe("not approved: no terminal to ask (set permissions: allow, or run mm in a terminal)")
    }).pipe(Effect.provide(layer({ permissions: "ask" }, scriptedApprover([Approval.noOneToAsk])))))

  it.live("an answer cut at the output limit, or empty, says so in one line", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      const conversation = yield* open(cwd)
      server.push({ text: "half an ans", finishReason: "length" })
      const cut = yield* runTurn(conversation, "long answer please")
      expect(cut.filter((e) => e._tag === "Notice")).toEqual([
        {
          _tag: "Notice",
          text:
            "the answer was cut at the model's output limit (finish_reason: length) — set model.maxTokens higher (the server's own output limit applies now)"
        }
      ])
      server.push({ text: "" })
      const empty = yield* runTurn(conversation, "say nothing")
      expect(empty.filter((e) => e._tag === "Notice")).toEqual([{
        _tag: "Notice",
        text: "the model returned an empty answer"
      }])
      expect(empty.at(-1)?._tag).toBe("TurnFinished")
    }).pipe(Effect.provide(layer())))

  it.live("parallel calls before one the length limit cut: they run, the cut one is said and told to the model", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      fs.writeFileSync(path.join(cwd, "a.txt"), "alpha\n")
      const conversation = yield* open(cwd)
      server.push({
        toolCalls: [
          { id: "r1", name: "read_file", arguments: { path: "a.txt" } },
          { id: "g1", name: "glob", arguments: { pattern: "*.txt" } },
          { id: "w1", name: "write_file", arguments: "{\"path\": \"b.txt\", \"content\": \"the start of a lo" }
        ],
        finishReason: "length"
      }, { text: "done" })
      const before = server.completions().length
      const events = yield* runTurn(conversation, "read, list and write")
      expect(events.filter((e) => e._tag === "Notice")).toEqual([{
        _tag: "Notice",
        text:
          "the model's output limit cut tool call \"write_file\" before its arguments were complete (finish_reason: length) — set model.maxTokens higher (the server's own output limit applies now)"
      }])
      expect(events.flatMap((e) => (e._tag === "ToolCallFinished" ? [[e.id, e.failed]] : []))).toEqual([
        ["r1", false],
        ["g1", false]
      ])
      expect(fs.existsSync(path.join(cwd, "b.txt"))).toBe(false)
      expect(events.at(-1)).toEqual({ _tag: "TurnFinished", stopReason: "end_turn" })
      const requests = server.completions().slice(before)
      expect(requests).toHaveLength(2)
      const sent = requests[1].body.messages.slice(-4)
      expect(sent[0].tool_calls.map((call: { id: string }) => call.id)).toEqual(["r1", "g1"])
      expect(sent.slice(1, 3).map((m: { role: string; tool_call_id: string }) => [m.role, m.tool_call_id])).toEqual([
        ["tool", "r1"],
        ["tool", "g1"]
      ])
      expect(sent[1].content).toContain("alpha")
      expect(sent[3].role).toBe("user")
      expect(sent[3].content).toMatch(
        /^\[mm\] your tool call "write_file" was cut by the output limit before its arguments were complete, so it did not run/
      )
    }).pipe(Effect.provide(layer())))

  it.live("an answer cut because the window filled up is told apart from the output limit", () =>
    Effect.gen(function*() {
      const conversation = yield* open(tempDir("mm-agent-"))
      server.push({
        text: "the files are",
        finishReason: "length",
        usage: { prompt_tokens: 990, completion_tokens: 10 }
      })
      const cut = yield* runTurn(conversation, "list them")
      expect(cut.filter((e) => e._tag === "Notice")).toEqual([{
        // a window of 1,000 tokens is also too small for mm's prompt and tools: said once, first
        _tag: "Notice",
        text: expect.stringMatching(/^the server's window of 1,000 tokens is too small to work in: /)
      }, {
        _tag: "Notice",
        text:
          "the answer was cut because the context window filled up (finish_reason: length) — /compact, or start the server with a larger context window"
      }])
    }).pipe(Effect.provide(layer({ model: { contextWindow: 1000 } }))))

  it.live("the tool line is shown before the approval is asked", () => {
    const log: Array<string> = []
    const approver = Layer.succeed(Approver, {
      ask: () => Effect.sync(() => (log.push("ask"), Approval.once))
    })
    return Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      server.push(
        { toolCalls: [{ id: "w", name: "write_file", arguments: { path: "x.txt", content: "x" } }] },
        { text: "ok" }
      )
      const agent = yield* Agent
      yield* agent.turn(yield* open(cwd), "write").pipe(
        Stream.runForEach((e) => Effect.sleep("30 millis").pipe(Effect.zipRight(Effect.sync(() => log.push(e._tag)))))
      )
      expect(log.filter((tag) => tag !== "Usage").slice(0, 3)).toEqual(["ToolCallStarted", "ask", "ToolCallFinished"])
    }).pipe(Effect.provide(layer({ permissions: "ask" }, approver)))
  })

  it.live("skills are listed in the system prompt; a broken one is skipped with a warning", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      fs.mkdirSync(path.join(cwd, ".mm/skills/release"), { recursive: true })
      fs.writeFileSync(
        path.join(cwd, ".mm/skills/release/SKILL.md"),
        "---\nname: release\ndescription: How to cut a release\n---\nSteps…\n"
      )
      fs.mkdirSync(path.join(cwd, ".mm/skills/broken"), { recursive: true })
      fs.writeFileSync(path.join(cwd, ".mm/skills/broken/SKILL.md"), "---\nname: [oops\n---\n")
      server.push({ text: "ok" })
      const events = yield* runTurn(yield* open(cwd), "hi")
      const system = server.completions().at(-1)!.body.messages[0].content as string
      expect(system).toContain("release")
      expect(system).toContain("How to cut a release")
      expect(system).toContain(path.join(cwd, ".mm/skills/release/SKILL.md"))
      const warnings = events.filter((e) => e._tag === "Notice")
      expect(warnings).toHaveLength(1)
      expect(warnings[0]._tag === "Notice" && warnings[0].text).toContain("broken/SKILL.md")
      expect(events.at(-1)?._tag).toBe("TurnFinished")
    }).pipe(Effect.provide(layer({ skills: { dirs: [".mm/skills"] } }))))

  it.live("a cancel keeps the question and the partial answer, closes open tool calls, counts the turn, records nothing", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-agent-")
      const sleeperArgv = ["sleep", `20.${process.pid}2`]
      server.push({ text: ["partial ", "answer ", "that ", "never ", "ends"], chunkDelayMs: 300 })
      const agent = yield* Agent
      const conversation = yield* open(cwd)
      const seen: Array<string> = []
      const fiber = yield* agent.turn(conversation, "tell me a story").pipe(
        Stream.runForEach((e) => Effect.sync(() => e._tag === "TextDelta" && seen.push(e.text))),
        Effect.fork
      )
      yield* Effect.promise(() => until(() => seen.length >= 2, "two pieces of the answer"))
      yield* Fiber.interrupt(fiber)
      const session = yield* conversation.snapshot
      expect(session.messages.slice(1)).toEqual([
        { role: "user", content: "tell me a story" },
        { role: "assistant", content: seen.join("") }
      ])
      expect(session.errors).toEqual([])
      // the cancelled turn stays, and counts
      expect(session.turns).toBe(1)

      server.push({
        toolCalls: [{
          id: "s1",
          name: "bash",
          arguments: { command: `${sleeperArgv.join(" ")} & echo $! > sleeper.pid; wait` }
        }]
      })
      let started = false
      const second = yield* agent.turn(conversation, "sleep").pipe(
        Stream.runForEach((e) => Effect.sync(() => (started ||= e._tag === "ToolCallStarted"))),
        Effect.fork
      )
      // the background sleep has started once its pid is written whole
      const pidFile = path.join(cwd, "sleeper.pid")
      const written = () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, "utf8").endsWith("\n")
      yield* Effect.promise(() => until(() => started && written(), "the command's pid"))
      // the forked child may not have become sleep yet when its pid is written
      yield* Effect.promise(() => until(() => processesRunning(sleeperArgv).length === 1, "the sleeper to run"))
      yield* Fiber.interrupt(second)
      yield* Effect.promise(() => until(() => processesRunning(sleeperArgv).length === 0, "the sleeper to be killed"))
      const after = yield* conversation.snapshot
      expect(after.messages.at(-1)).toEqual({
        role: "tool",
        tool_call_id: "s1",
        content: "cancelled by the user",
        failed: true
      })
      expect(after.errors).toEqual([])
      expect(after.turns).toBe(2)
    }).pipe(Effect.provide(layer())))
})
