// Background jobs through the whole core: `bash` with `background: true` starts a real process
// (in the sandbox when it is on) and answers at once; `job_output` reads what it printed since
// the last read; `job_kill` ends its whole group; the session records it; the conversation's end
// ends it. A file the test creates tells the job when to print its second line.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Schedule from "effect/Schedule"

import { Jobs, type JobView } from "../../src/agent/Jobs"
import type { ApprovalRequest } from "../../src/approvals/Approver"
import type { AgentConfig } from "../../src/config/Config"
import type { Conversation } from "../../src/sessions/Conversation"
import { Keeper } from "../../src/sessions/Keeper"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../support/FakeModelServer"
import { pidsWith, sleepMarker } from "../support/jobs"
import { coreLayer, runTurn, type ScriptedAnswer, scriptedApprover, testConfig } from "../support/layers"
import { tempDir, waitUntilGone } from "../support/processes"
import { until } from "../support/until"

/** Prints `one`, waits for the file `go`, prints `two`, then waits for ever (a `sleep` naming `marker`). */
const waitingJob = (marker: string) => `echo one; while [ ! -e go ]; do sleep 0.02; done; echo two; sleep ${marker}`

describe("background jobs", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const jobsOn = (overrides: Partial<AgentConfig["jobs"]> = {}, permissions: "ask" | "allow" = "allow") => ({
    ...testConfig(server.url, { permissions }),
    jobs: { enabled: true, maxBuffer: 1024 * 1024, ...overrides }
  })

  const layer = (config: AgentConfig, answers: Array<ScriptedAnswer> = [], asked: Array<ApprovalRequest> = []) =>
    coreLayer(config, MemorySessionStore.layer(), scriptedApprover(answers, asked))

  /** One turn: the model makes `call`, then says "ok"; the call's result as the model read it. */
  const call = (conversation: Conversation, name: string, args: object) =>
    Effect.gen(function*() {
      server.push({ toolCalls: [{ id: `call-${server.completions().length}`, name, arguments: args }] }, {
        text: "ok"
      })
      yield* runTurn(conversation, `use ${name}`)
      return Object.values(lastToolResults(server)).at(-1)!
    })

  /** Waits until job `id`'s last line is `line` (its output has reached mm); fails saying what it printed last. */
  const lastLineIs = (conversation: Conversation, id: number, line: string) =>
    Effect.gen(function*() {
      const jobs = yield* Jobs
      let last: JobView | undefined
      yield* Effect.map(jobs.list(conversation), (list) => (last = list.find((job) => job.id === id))).pipe(
        Effect.repeat({ until: (job) => job?.lastLine === line, schedule: Schedule.spaced("10 millis") }),
        Effect.timeoutFail({
          duration: "30 seconds",
          onTimeout: () => new Error(`job ${id} did not print ${line}; it is ${JSON.stringify(last)}`)
        }),
        Effect.orDie
      )
    })

  it.live("a job is read twice, then killed with its whole group, and recorded in the session", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-jobs-")
      const marker = sleepMarker()
      const conversation = yield* (yield* Keeper).open(cwd, { createFile: "later" })
      const started = yield* call(conversation, "bash", { command: waitingJob(marker), background: true })
      expect(started).toMatch(/^started job 1 \(pid \d+\): echo one;/)
      const pid = Number(/pid (\d+)/.exec(started)![1])

      yield* lastLineIs(conversation, 1, "one")
      const first = yield* call(conversation, "job_output", { id: 1 })
      expect(first.split("\n")).toEqual(["job 1 is running", "one", ""])

      fs.writeFileSync(path.join(cwd, "go"), "")
      yield* lastLineIs(conversation, 1, "two")
      const second = yield* call(conversation, "job_output", { id: 1 })
      expect(second).toContain("two")
      expect(second).not.toContain("one")
      yield* Effect.promise(() => until(() => pidsWith(`sleep ${marker}`).length > 0, "the job's sleep"))
      const sleeps = pidsWith(`sleep ${marker}`)

      const killed = yield* call(conversation, "job_kill", { id: 1 })
      expect(killed).toMatch(/^job 1 killed \(killed by signal SIG(TERM|KILL)\)\nlast output:\none\ntwo/)
      for (const gone of [pid, ...sleeps]) expect(yield* Effect.promise(() => waitUntilGone(gone, 10_000))).toBe(true)

      const unknown = yield* call(conversation, "job_output", { id: 7 })
      expect(unknown).toBe("no job 7; no job is running")
      const { jobs } = yield* conversation.snapshot
      expect(jobs).toHaveLength(1)
      expect(jobs![0]).toMatchObject({
        id: 1,
        command: waitingJob(marker),
        callId: "call-0",
        exit: { code: null },
        output: "one\ntwo\n"
      })
      expect(jobs![0].endedAt).toBeDefined()
    }).pipe(Effect.provide(layer(jobsOn()))))

  it.live("a job ends with its conversation, and its numbers go on after those its session records", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-jobs-")
      const marker = sleepMarker()
      const conversation = yield* (yield* Keeper).open(cwd, { createFile: "later" })
      yield* call(conversation, "bash", { command: `sleep ${marker}`, background: true })
      const second = yield* call(conversation, "bash", { command: `echo done`, background: true })
      expect(second).toMatch(/^started job 2 /)
      yield* Effect.promise(() => until(() => pidsWith(`sleep ${marker}`).length > 0, "the job's sleep"))
      const sleeps = pidsWith(`sleep ${marker}`)
      const unknown = yield* call(conversation, "job_kill", { id: 9 })
      expect(unknown).toMatch(/^no job 9; running: 1 \(sleep /)
      yield* (yield* Jobs).end(conversation)
      for (const gone of sleeps) expect(yield* Effect.promise(() => waitUntilGone(gone, 10_000))).toBe(true)
      expect((yield* Jobs).running()).toBe(0)
      const { jobs } = yield* conversation.snapshot
      expect(jobs?.map((job) => [job.id, job.endedAt !== undefined])).toEqual([[1, true], [2, true]])
      const third = yield* call(conversation, "bash", { command: "true", background: true })
      expect(third).toMatch(/^started job 3 /)
    }).pipe(Effect.provide(layer(jobsOn()))))

  it.live("a job's output beyond jobs.maxBuffer is dropped, and the read says how much", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-jobs-")
      const conversation = yield* (yield* Keeper).open(cwd, { createFile: "later" })
      yield* call(conversation, "bash", { command: "seq 1 1000; echo last", background: true })
      yield* lastLineIs(conversation, 1, "last")
      const read = yield* call(conversation, "job_output", { id: 1 })
      const lines = read.split("\n")
      expect(lines[1]).toMatch(/^\[\d+ bytes of older output were dropped: the buffer was full\]$/)
      expect(lines.at(-2)).toBe("last")
      expect(read.length).toBeLessThan(200)
    }).pipe(Effect.provide(layer(jobsOn({ maxBuffer: 64 })))))

  it.live("under permissions: ask a background command is asked as a foreground one, and refused it never starts", () => {
    const asked: Array<ApprovalRequest> = []
    return Effect.gen(function*() {
      const cwd = tempDir("mm-jobs-")
      const conversation = yield* (yield* Keeper).open(cwd, { createFile: "later" })
      const refused = yield* call(conversation, "bash", { command: "touch made", background: true })
      expect(refused).toBe("denied by the user")
      const ran = yield* call(conversation, "bash", { command: "touch made" })
      expect(ran.split("\n")[0]).toBe("exit code 0")
      expect(asked.map((request) => [request.tool, request.title, request.preview])).toEqual([
        ["bash", "touch made", { _tag: "Command", command: "touch made", timeout: undefined }],
        ["bash", "touch made", { _tag: "Command", command: "touch made", timeout: undefined }]
      ])
      const read = yield* call(conversation, "job_output", { id: 1 })
      expect(read).toBe("no job 1; no job is running")
      expect(asked).toHaveLength(2)
    }).pipe(Effect.provide(layer(jobsOn({}, "ask"), ["deny", "once"], asked)))
  })

  it.live("with jobs off the model is given neither job tool nor `background`; with them on, what it costs", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-jobs-")
      const sizes: Array<number> = []
      for (const config of [testConfig(server.url), jobsOn()]) {
        yield* Effect.gen(function*() {
          const conversation = yield* (yield* Keeper).open(cwd, { createFile: "later" })
          server.push({ text: "hi" })
          yield* runTurn(conversation, "hello")
        }).pipe(Effect.provide(layer(config)))
        const request = server.completions().at(-1)!
        sizes.push(JSON.stringify(request.body).length)
        const tools = request.body.tools as Array<{ function: { name: string; parameters: { properties: object } } }>
        const bash = tools.find((tool) => tool.function.name === "bash")!
        const names = tools.map((tool) => tool.function.name)
        if (config.jobs.enabled) {
          expect(names.slice(-2)).toEqual(["job_output", "job_kill"])
          expect(Object.keys(bash.function.parameters.properties)).toEqual(["command", "timeout", "background"])
        } else {
          expect(names).not.toContain("job_output")
          expect(names).not.toContain("job_kill")
          expect(Object.keys(bash.function.parameters.properties)).toEqual(["command", "timeout"])
        }
      }
      console.log(`first request: ${sizes[0]} bytes with jobs off, ${sizes[1]} with jobs on (+${sizes[1] - sizes[0]})`)
    }))
})
