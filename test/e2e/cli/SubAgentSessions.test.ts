import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import type { ParentRef } from "../../../src/domain/Session"
import * as FileSessionStore from "../../../src/sessions/FileSessionStore"
import { Keeper } from "../../../src/sessions/Keeper"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { coreLayer, testConfig } from "../../support/layers"
import { runMm, sessionFiles, sessionsDir, tempProject, withSessions } from "../../support/MmProcess"
import { writeAnsweredSession } from "../../support/store-fixtures"

// A sub-agent's conversation is a session file of its own beside its parent's, with `parent`
// (the `task` call that ran it). The files are written here as mm writes them; what a user sees
// of them from the shell is checked: hidden from the listing unless --all, shown with its parent
// by `show`, found by `search`, never the one --continue takes but resumable by its id, and
// deleted with its parent.

const PARENT = "20261201-100000-0000000a"
const CHILD_1 = "20261201-100100-0000000b"
const CHILD_2 = "20261201-100200-0000000c"
const OTHER = "20261130-090000-0000000d"

/** A one-turn session file of the project, as mm writes it. */
const writeSession = (
  project: string,
  id: string,
  fields: { readonly question: string; readonly answer: string; readonly minute: number; readonly parent?: ParentRef }
) => writeAnsweredSession(sessionsDir(project), { id, cwd: project, ...fields })

/** A parent that ran two sub-agents in its first turn (their files newer than its own), and an older conversation. */
const family = (url: string): string => {
  const project = tempProject(withSessions(url))
  writeSession(project, OTHER, { question: "an older question", answer: "old answer", minute: -60 })
  writeSession(project, PARENT, { question: "refactor the loader", answer: "done with help", minute: 0 })
  writeSession(project, CHILD_1, {
    question: "find every caller of load()",
    answer: "three callers, one in the zebracorn module",
    minute: 1,
    parent: { id: PARENT, turn: 1, callId: "call_task_1" }
  })
  writeSession(project, CHILD_2, {
    question: "read the loader's tests",
    answer: "they cover the cache",
    minute: 2,
    parent: { id: PARENT, turn: 1, callId: "call_task_2" }
  })
  return project
}

describe("a sub-agent's session from the shell", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("mm sessions list hides it and says so; --all shows each under its parent", async () => {
    const project = family(server.url)
    const plain = await runMm(project, [], ["sessions", "list"])
    expect(plain.code).toBe(0)
    const rows = plain.stdout.split("\n").filter((line) => /^\s*\d+ [ *] \d{8}-/.test(line))
    expect(rows.map((row) => row.match(/\d{8}-\d{6}-[0-9a-f]{8}/)?.[0])).toEqual([PARENT, OTHER])
    expect(plain.stdout).toContain("2 session(s) in")
    expect(plain.stdout).toContain("\n2 sub-agent session(s) not shown (mm sessions list --all)\n")

    const all = await runMm(project, [], ["sessions", "list", "--all"])
    expect(all.code).toBe(0)
    const allRows = all.stdout.split("\n").filter((line) => /^\s*\d+ [ *] \d{8}-/.test(line))
    // the parent, the two it ran in the order it ran them, then the older conversation
    expect(allRows.map((row) => row.match(/\d{8}-\d{6}-[0-9a-f]{8}/)?.[0])).toEqual([PARENT, CHILD_1, CHILD_2, OTHER])
    expect(allRows[1]).toMatch(/find every caller of load\(\) · ↳ sub-agent of 20261201-100000-0000000a at turn 1$/)
    expect(allRows[0]).not.toContain("sub-agent")
    expect(all.stdout).not.toContain("not shown")

    const json = JSON.parse((await runMm(project, [], ["sessions", "--json"])).stdout)
    expect(json.sessions.map((s: { id: string }) => s.id)).toEqual([PARENT, OTHER])
    const jsonAll = JSON.parse((await runMm(project, [], ["sessions", "--json", "--all"])).stdout)
    expect(jsonAll.sessions.find((s: { id: string }) => s.id === CHILD_2)).toMatchObject({
      parent: { id: PARENT, turn: 1, callId: "call_task_2" }
    })
  })

  it("mm sessions show lists a parent's sub-agents, and shows one naming its parent", async () => {
    const project = family(server.url)
    const parent = await runMm(project, [], ["sessions", "show", PARENT])
    expect(parent.code).toBe(0)
    expect(parent.stdout).toContain(
      [
        `- ↳ sub-agent \`${CHILD_1}\` (call \`call_task_1\` at turn 1, 1 turn(s)): find every caller of load()`,
        `- ↳ sub-agent \`${CHILD_2}\` (call \`call_task_2\` at turn 1, 1 turn(s)): read the loader's tests`
      ].join("\n")
    )
    // by its 8-hex suffix, as any session
    const child = await runMm(project, [], ["sessions", "show", "0000000b"])
    expect(child.code).toBe(0)
    expect(child.stdout).toContain(`- id: \`${CHILD_1}\``)
    expect(child.stdout).toContain(`- ↳ sub-agent of \`${PARENT}\`, run by its call \`call_task_1\` at turn 1`)
    expect(child.stdout).toContain("three callers, one in the zebracorn module")
    expect(child.stdout).not.toContain("↳ sub-agent `")
  })

  it("mm sessions search finds what a sub-agent said, marked as a sub-agent's", async () => {
    const project = family(server.url)
    const found = await runMm(project, [], ["sessions", "search", "zebracorn"])
    expect(found.code).toBe(0)
    expect(found.stdout.trim().split("\n")).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${CHILD_1}  \\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d  sub-agent of ${PARENT}  turn 1  assistant  three callers`
        )
      )
    ])
    const json = JSON.parse((await runMm(project, [], ["sessions", "search", "--json", "zebracorn"])).stdout)
    expect(json).toMatchObject({ id: CHILD_1, parent: { id: PARENT, turn: 1, callId: "call_task_1" } })
  })

  it("-p --continue goes on with the parent, never a newer sub-agent's; --resume takes one by its id", async () => {
    const project = family(server.url)
    server.push({ text: "continued" })
    const continued = await runMm(project, [], ["--continue", "-p", "and now?"])
    expect(continued.code).toBe(0)
    expect(server.completions().at(-1)!.body.messages.slice(1, 3)).toEqual([
      { role: "user", content: "refactor the loader" },
      { role: "assistant", content: "done with help" }
    ])
    server.push({ text: "resumed" })
    const resumed = await runMm(project, [], ["--resume", CHILD_2, "-p", "anything else?"])
    expect(resumed.code).toBe(0)
    expect(server.completions().at(-1)!.body.messages.slice(1, 3)).toEqual([
      { role: "user", content: "read the loader's tests" },
      { role: "assistant", content: "they cover the cache" }
    ])
    // the sub-agent's file kept its parent as it grew
    const child = JSON.parse(fs.readFileSync(path.join(sessionsDir(project), `${CHILD_2}.json`), "utf8"))
    expect(child).toMatchObject({ turns: 2, parent: { id: PARENT, turn: 1, callId: "call_task_2" } })
  })

  it("mm sessions rm deletes a parent with the sub-agents' sessions it ran, and one of those alone", async () => {
    const project = family(server.url)
    const one = await runMm(project, [], ["sessions", "rm", "--yes", CHILD_2])
    expect(one.code).toBe(0)
    expect(one.stdout).toBe(`deleted ${CHILD_2}\n`)
    expect(sessionFiles(project)).toEqual([`${OTHER}.json`, `${PARENT}.json`, `${CHILD_1}.json`])
    const run = await runMm(project, [], ["sessions", "rm", "--yes", PARENT])
    expect(run.code).toBe(0)
    expect(run.stdout).toBe(`deleted ${PARENT}\ndeleted ${CHILD_1} (a sub-agent session of ${PARENT})\n`)
    expect(sessionFiles(project)).toEqual([`${OTHER}.json`])
  })

  it("after ACP /new moved the parent's conversation, show and rm find its sub-agents under the new id", async () => {
    const project = family(server.url)
    // what `/new` does in an editor's thread on PARENT, over the project's files
    const moved = await Effect.runPromise(
      Effect.gen(function*() {
        const thread = yield* Effect.flatMap(Keeper, (keeper) => keeper.load(project, PARENT))
        return yield* thread.archiveAndReset
      }).pipe(
        Effect.provide(coreLayer(testConfig(server.url, { sessions: { enabled: true } }), FileSessionStore.layer))
      )
    )
    expect(moved!.warnings).toEqual([])
    const movedId = moved!.id
    const shown = await runMm(project, [], ["sessions", "show", movedId])
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain("done with help")
    expect(shown.stdout).toContain(
      [
        `- ↳ sub-agent \`${CHILD_1}\` (call \`call_task_1\` at turn 1, 1 turn(s)): find every caller of load()`,
        `- ↳ sub-agent \`${CHILD_2}\` (call \`call_task_2\` at turn 1, 1 turn(s)): read the loader's tests`
      ].join("\n")
    )
    // the editor's id starts over: no sub-agent is its own
    const thread = await runMm(project, [], ["sessions", "show", PARENT])
    expect(thread.code).toBe(0)
    expect(thread.stdout).toContain(`- id: \`${PARENT}\``)
    expect(thread.stdout).not.toContain("sub-agent")
    for (const [child, call] of [[CHILD_1, "call_task_1"], [CHILD_2, "call_task_2"]]) {
      const one = await runMm(project, [], ["sessions", "show", child])
      expect(one.code).toBe(0)
      expect(one.stdout).toContain(`- ↳ sub-agent of \`${movedId}\`, run by its call \`${call}\` at turn 1`)
    }
    // deleting the emptied thread leaves the moved conversation's sub-agents where they are
    const removed = await runMm(project, [], ["sessions", "rm", "--yes", PARENT])
    expect(removed.stdout).toBe(`deleted ${PARENT}\n`)
    expect(sessionFiles(project)).toEqual([`${OTHER}.json`, `${CHILD_1}.json`, `${CHILD_2}.json`, `${movedId}.json`])
  })
})
