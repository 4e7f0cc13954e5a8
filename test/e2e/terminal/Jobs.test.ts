// Background jobs on a terminal: the prompt and the status line count the running jobs, `/jobs`
// lists them (id, state, runtime, command, last line), `/jobs kill N` ends one, and Ctrl-D ends
// the rest with mm: nothing of them is left.
import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { pidsWith, sleepMarker } from "../../support/jobs"
import { configFor, tempProject } from "../../support/MmProcess"
import { gate, heldText } from "../../support/plans"
import { waitUntilGone } from "../../support/processes"
import { PtyMm } from "../../support/PtyMm"
import { until } from "../../support/until"

describe("background jobs on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("are counted at the prompt, listed and killed with /jobs, and end with mm", async () => {
    const project = tempProject(configFor(server.url, ["jobs:", "  enabled: true"]))
    const [first, second] = [sleepMarker(), sleepMarker()]
    server.push(
      {
        toolCalls: [
          { id: "a", name: "bash", arguments: { command: `echo first up; sleep ${first}`, background: true } },
          { id: "b", name: "bash", arguments: { command: `echo second up; sleep ${second}`, background: true } }
        ]
      },
      { text: "both started" }
    )
    const mm = new PtyMm(project, {}, ["--trust"], { columns: 120, rows: 30 })
    await mm.waitForText(/> /)
    let mark = mm.out.length
    mm.type("start two jobs\r")
    await mm.waitForText(/both started[^]*2 jobs > /, mark)
    await until(() => pidsWith(`sleep ${first}`).length > 0 && pidsWith(`sleep ${second}`).length > 0, "both sleeps")
    const pids = [...pidsWith(`sleep ${first}`), ...pidsWith(`sleep ${second}`)]

    // during a turn, the status line counts them too
    const answer = gate()
    server.push(heldText("still there", answer.held))
    mark = mm.out.length
    mm.type("are they running?\r")
    await mm.waitForText(/waiting for fake-model · \d+ s · 2 jobs · Esc to cancel/, mark)
    answer.release()
    await mm.waitForText(/still there[^]*2 jobs > /, mark)

    mark = mm.out.length
    mm.type("/jobs\r")
    const listed = await mm.waitForText(/\/jobs kill N ends one/, mark)
    expect(listed).toMatch(/ {2}1 {2}running · \d+ s · echo first up; sleep \S+ — first up/)
    expect(listed).toMatch(/ {2}2 {2}running · \d+ s · echo second up; sleep \S+ — second up/)

    mark = mm.out.length
    mm.type("/jobs kill 1\r")
    const killed = await mm.waitForText(/1 job > /, mark)
    expect(killed).toMatch(/job 1 killed \(killed by signal SIG(TERM|KILL)\)\s+last output:\s+first up/)
    for (const pid of pidsWith(`sleep ${first}`)) expect(await waitUntilGone(pid, 10_000)).toBe(true)

    mark = mm.out.length
    mm.type("/jobs\r")
    const after = await mm.waitForText(/\/jobs kill N ends one/, mark)
    expect(after).toMatch(/ {2}1 {2}killed by signal SIG(TERM|KILL) · /)
    expect(after).toMatch(/ {2}2 {2}running · /)

    mm.type("\u0004")
    expect(await mm.exit()).toBe(0)
    for (const pid of pids) expect(await waitUntilGone(pid, 10_000)).toBe(true)
  })
})

describe("/new on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("ends the conversation's jobs before it starts the new one; /resume names them", async () => {
    const project = tempProject(configFor(server.url, ["jobs:", "  enabled: true"]))
    const marker = sleepMarker()
    server.push(
      { toolCalls: [{ id: "a", name: "bash", arguments: { command: `sleep ${marker}`, background: true } }] },
      { text: "started" }
    )
    const mm = new PtyMm(project, {}, ["--trust"], { columns: 120, rows: 30 })
    await mm.waitForText(/> /)
    let mark = mm.out.length
    mm.type("start a job\r")
    await mm.waitForText(/started[^]*1 job > /, mark)
    await until(() => pidsWith(`sleep ${marker}`).length > 0, "the job's sleep")
    const pids = pidsWith(`sleep ${marker}`)
    mark = mm.out.length
    mm.type("/new\r")
    const said = await mm.waitForText(/new conversation[^]*> \s*$/, mark)
    expect(said).toContain("ended 1 background job of the conversation")
    for (const pid of pids) expect(await waitUntilGone(pid, 10_000)).toBe(true)
    mm.type("/jobs\r")
    await mm.waitForText(/no background jobs in this conversation/, mark)
    // back in the first conversation, its file's record of the job is said in a line
    const id = /new conversation — (\S+) stays as it is/.exec(said)![1]
    mark = mm.out.length
    mm.type(`/resume ${id}\r`)
    const resumed = await mm.waitForText(/background jobs earlier in this session: [^\n]*\)/, mark)
    expect(resumed).toMatch(/background jobs earlier in this session: 1 sleep \S+ \(killed by signal SIG(TERM|KILL)\)/)
    mm.type("\u0004")
    expect(await mm.exit()).toBe(0)
  })
})
