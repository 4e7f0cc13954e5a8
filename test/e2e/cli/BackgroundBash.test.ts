// Background jobs through the built mm: a job `mm -p` started is gone once mm has exited, its end
// recorded in the session file; when mm is SIGKILLed, nothing of the job is left either (the
// watchdog, and the sandbox's --die-with-parent when it is on).
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { pidsWith, sleepMarker } from "../../support/jobs"
import { MmProcess, onlySession, tempProject, withSessions } from "../../support/MmProcess"
import { gate, heldText } from "../../support/plans"
import { waitUntilGone } from "../../support/processes"
import { until } from "../../support/until"

const JOBS_ON = ["jobs:", "  enabled: true"]

describe("a background job and the mm that started it", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  /** `mm -p` whose model starts `sleep MARKER` in the background, then holds its answer until released. */
  const startJob = async (extra: ReadonlyArray<string> = []) => {
    const project = tempProject(withSessions(server.url, [...JOBS_ON, ...extra]))
    const marker = sleepMarker()
    const answer = gate()
    const before = server.completions().length
    server.push(
      {
        toolCalls: [{
          id: "call_job",
          name: "bash",
          arguments: { command: `echo up; sleep ${marker}`, background: true }
        }]
      },
      heldText("the job runs", answer.held)
    )
    const mm = new MmProcess(project, ["-p", "--yes", "start a job"], {
      AGENT_CONFIG: path.join(project, "agent.yaml")
    })
    mm.child.stdin!.end()
    await until(() => pidsWith(`sleep ${marker}`).length > 0, "the job's sleep", 30_000)
    await until(() => server.completions().length === before + 2, "the request after the job started", 30_000)
    return { project, mm, answer, pids: pidsWith(`sleep ${marker}`) }
  }

  it("is gone when mm -p ends, and the session file records how it ended", async () => {
    const { answer, mm, pids, project } = await startJob()
    const started = server.completions().at(-1)!.body.messages.at(-1).content as string
    expect(started).toMatch(/^started job 1 \(pid \d+\): echo up; sleep /)
    const leader = Number(/pid (\d+)/.exec(started)![1])
    answer.release()
    expect(await mm.exited).toBe(0)
    expect(mm.stdout).toContain("the job runs")
    for (const pid of [leader, ...pids]) expect(await waitUntilGone(pid, 10_000)).toBe(true)
    const [job] = onlySession(project).jobs
    expect(job).toMatchObject({ id: 1, callId: "call_job", output: "up\n" })
    expect(job.endedAt).toBeDefined()
    expect(job.exit).toEqual({ code: null, signal: expect.stringMatching(/^SIG(TERM|KILL)$/) })
  })

  it("is gone when mm gets SIGTERM, and its end is recorded", async () => {
    const { answer, mm, pids, project } = await startJob()
    try {
      mm.child.kill("SIGTERM")
      expect(await mm.exited).toBe(130)
      for (const pid of pids) expect(await waitUntilGone(pid, 10_000)).toBe(true)
      expect(onlySession(project).jobs[0].endedAt).toBeDefined()
    } finally {
      answer.release()
    }
  })

  it.each([["on"], ["off"]])("is gone when mm is SIGKILLed (sandbox %s)", async (sandbox) => {
    const { answer, mm, pids } = await startJob(sandbox === "off" ? ["sandbox: off"] : [])
    try {
      mm.kill()
      expect(await mm.exited).toBeNull()
      for (const pid of pids) expect(await waitUntilGone(pid, 10_000)).toBe(true)
    } finally {
      answer.release()
    }
  })
})
