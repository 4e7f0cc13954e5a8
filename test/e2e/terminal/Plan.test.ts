import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, onlySession, tempProject } from "../../support/MmProcess"
import { gate, heldText, heldTodoStep, PLANS, todoStep } from "../../support/plans"
import { PtyMm } from "../../support/PtyMm"
import { Screen } from "../../support/Screen"
import { until } from "../../support/until"

const SIZE = { columns: 100, rows: 30 }

/** What the terminal shows now, and everything it holds (scrollback first). */
const screenOf = (out: string) => {
  const screen = new Screen(SIZE.columns, SIZE.rows)
  screen.play(out)
  return screen
}

/** The rows holding `text`. */
const rowsWith = (rows: ReadonlyArray<string>, text: string) => rows.filter((row) => row.includes(text))

describe("the model's plan on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("updates in place under the turn, is printed once at its end, and comes back with /plan and /resume", async () => {
    const project = tempProject(configFor(server.url))
    const mm = new PtyMm(project, {}, [], SIZE)
    await mm.waitFor(/> /)
    const third = gate()
    const answer = gate()
    server.push(todoStep(0), todoStep(1), heldTodoStep(2, third.held), heldText("all three done", answer.held))
    const mark = mm.out.length
    mm.type("fix the bug\r")

    // the second plan, live above the status line: the first is gone from the screen
    await mm.waitForText(/☒ read the code[^]*◼ write the fix[^]*waiting for fake-model/, mark)
    let shown = screenOf(mm.out).shown
    expect(rowsWith(shown, "read the code")).toEqual(["  ☒ read the code"])
    expect(rowsWith(shown, "write the fix")).toEqual(["  ◼ write the fix"])
    third.release()

    await mm.waitForText(/◼ run the tests \(high\)[^]*waiting for fake-model/, mark)
    shown = screenOf(mm.out).shown
    expect(rowsWith(shown, "write the fix")).toEqual(["  ☒ write the fix"])
    expect(rowsWith(shown, "run the tests")).toEqual(["  ◼ run the tests (high)"])
    answer.release()

    await mm.waitForText(/all three done[^]*> \s*$/, mark)
    // in the scrollback: the last plan once, after the answer; no result line of the todo calls
    const all = screenOf(mm.out).lines
    expect(rowsWith(all, "read the code")).toEqual(["  ☒ read the code"])
    expect(rowsWith(all, "run the tests")).toEqual(["  ◼ run the tests (high)"])
    expect(all.findIndex((row) => row.includes("run the tests"))).toBeGreaterThan(
      all.findIndex((row) => row.includes("all three done"))
    )
    expect(rowsWith(all, "plan kept")).toEqual([])
    expect(rowsWith(all, "⚙ todo")).toEqual([
      "⚙ todo  3 items, 0 done",
      "⚙ todo  3 items, 1 done",
      "⚙ todo  3 items, 2 done"
    ])
    // the file keeps the latest plan, with the turn that wrote it
    expect(onlySession(project).plan).toEqual({ turn: 1, entries: PLANS[2] })

    const before = mm.out.length
    mm.type("/plan\r")
    await mm.waitForText(/run the tests[^]*> \s*$/, before)
    const planned = screenOf(mm.out.slice(before)).lines.filter((row) => row.trim() !== "")
    expect(planned.slice(1, 5)).toEqual([
      "plan of turn 1 · 2 of 3 done · now: run the tests",
      "  ☒ read the code",
      "  ☒ write the fix",
      "  ◼ run the tests (high)"
    ])
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)

    // a new launch: /resume says the plan in one line; /plan shows it again
    const again = new PtyMm(project, {}, [], SIZE)
    await again.waitFor(/> /)
    const at = again.out.length
    again.type("/resume\r")
    await again.waitForText(/resumed [^]*> \s*$/, at)
    const resumed = screenOf(again.out.slice(at)).lines
    expect(rowsWith(resumed, "plan:")).toEqual(["plan: 2 of 3 done · now: run the tests"])
    const requests = server.completions().length
    again.type("/plan\r")
    await again.waitForText(/◼ run the tests \(high\)[^]*> \s*$/, at)
    expect(server.completions().length).toBe(requests)
    again.type("\x04")
    expect(await again.exit()).toBe(0)
  })

  it("a cancelled turn keeps its plan and prints it once; a failed one prints none and keeps the one before", async () => {
    const project = tempProject(configFor(server.url))
    const mm = new PtyMm(project, {}, [], SIZE)
    await mm.waitFor(/> /)
    const never = gate()
    server.push(todoStep(0), heldText("never said", never.held))
    let mark = mm.out.length
    const asked = server.completions().length
    mm.type("plan it\r")
    await mm.waitForText(/◼ read the code[^]*waiting for fake-model/, mark)
    // the held answer's request is in (the status line may come first): cancelled, it is used up
    await until(() => server.completions().length >= asked + 2, "the second request")
    mm.type("\x03")
    await mm.waitForText(/cancelled[^]*> \s*$/, mark)
    let rows = screenOf(mm.out.slice(mark)).lines
    expect(rowsWith(rows, "read the code")).toEqual(["  ◼ read the code"])
    expect(onlySession(project).plan).toEqual({ turn: 1, entries: PLANS[0] })
    never.release()

    server.push(todoStep(1), { kind: "status", status: 500, body: { error: { message: "kaput" } } })
    mark = mm.out.length
    mm.type("go on\r")
    await mm.waitForText(/kaput[^]*> \s*$/, mark)
    rows = screenOf(mm.out.slice(mark)).lines
    // drawn live while it ran, then erased: nothing of it stays
    expect(rowsWith(rows, "read the code")).toEqual([])
    expect(onlySession(project).plan).toEqual({ turn: 1, entries: PLANS[0] })
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("/plan in a conversation without one says so", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), {}, [], SIZE)
    await mm.waitFor(/> /)
    const mark = mm.out.length
    mm.type("/plan\r")
    await mm.waitForText(/no plan in this conversation/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })
})
