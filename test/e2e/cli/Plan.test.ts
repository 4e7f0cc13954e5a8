import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { onlySession, runMm, tempProject, withSessions } from "../../support/MmProcess"
import { PLANS, todoStep } from "../../support/plans"

describe("the model's plan in a script (mm -p)", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("--output-format json emits a plan event at each change; plain -p prints the answer alone", async () => {
    const project = tempProject(withSessions(server.url))
    server.push(todoStep(0), todoStep(1), todoStep(2), { text: "planned" })
    const run = await runMm(project, [], ["-p", "--output-format", "json", "plan it"])
    expect(run.code).toBe(0)
    const events = run.stdout.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(events.filter((e) => e.type === "plan")).toEqual(PLANS.map((entries) => ({ type: "plan", entries })))
    // each between its call and its result
    const first = events.findIndex((e) => e.type === "plan")
    expect(events[first - 1]).toMatchObject({ type: "tool_call", name: "todo", id: "todo_1" })
    expect(events[first + 1]).toMatchObject({
      type: "tool_result",
      id: "todo_1",
      status: "completed",
      output: "plan kept: 3 items, 0 done"
    })

    server.push(todoStep(0), { text: "planned again" })
    const plain = await runMm(project, [], ["-p", "plan it again"])
    expect(plain.code).toBe(0)
    expect(plain.stdout).toBe("planned again\n")
  })

  it("a failed turn gives the plan back as it was; a resume says it in one line", async () => {
    const project = tempProject(withSessions(server.url))
    server.push(todoStep(0), { text: "first plan made" })
    expect((await runMm(project, [], ["-p", "plan it"])).code).toBe(0)
    expect(onlySession(project).plan).toEqual({ turn: 1, entries: PLANS[0] })

    server.push(todoStep(1), { kind: "status", status: 500, body: { error: { message: "kaput" } } })
    const failed = await runMm(project, [], ["--continue", "-p", "go on"])
    expect(failed.code).toBe(1)
    expect(onlySession(project).plan).toEqual({ turn: 1, entries: PLANS[0] })

    server.push({ text: "still there" })
    const resumed = await runMm(project, [], ["--continue", "-p", "--verbose", "where are we?"])
    expect(resumed.code).toBe(0)
    expect(resumed.stderr.split("\n").filter((line) => line.startsWith("plan:"))).toEqual([
      "plan: 0 of 3 done · now: read the code"
    ])
  })
})
