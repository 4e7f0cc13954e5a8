import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"
import { MmProcess } from "../../support/MmProcess"

// What mm -p tells a script before its turn. A project whose `.mm` is a file (not mm's) cannot be saved, and
// says so; the question is still answered ("not saved (reason)" and goes on).

const harness = useAgents()

describe("a project whose .mm is a file", () => {
  it("answers mm -p, unsaved, with no internal error", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    fs.writeFileSync(path.join(dir, ".mm"), "not mm's\n")
    fake.push({ text: "the answer" })
    const mm = new MmProcess(dir, ["-p", "a question"], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
    mm.child.stdin!.end()
    expect(await mm.exited).toBe(0)
    expect(mm.stdout).toContain("the answer")
    expect(mm.stderr).not.toContain("internal error")
    // a script is told, in one line, that the answer is not kept and why
    expect(mm.stderr).toMatch(/^sessions: not saved \(.*\.mm.*\)$/m)
    expect(fs.readFileSync(path.join(dir, ".mm"), "utf8")).toBe("not mm's\n")
  }, 60_000)

  it("says so as a notice under --output-format json; --continue cannot look for a session, in one line", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    fs.writeFileSync(path.join(dir, ".mm"), "not mm's\n")
    fake.push({ text: "the answer" })
    const env = { AGENT_CONFIG: path.join(dir, "agent.yaml") }
    const mm = new MmProcess(dir, ["-p", "--output-format", "json", "a question"], env)
    mm.child.stdin!.end()
    expect(await mm.exited).toBe(0)
    const events = mm.stdout.trim().split("\n").map((line) => JSON.parse(line))
    expect(events[0]).toMatchObject({ type: "notice", text: expect.stringMatching(/^sessions: not saved \(/) })
    expect(events.at(-1)).toMatchObject({ type: "result", status: "answered", sessionId: null })

    const again = new MmProcess(dir, ["-p", "--continue", "another"], env)
    again.child.stdin!.end()
    expect(await again.exited).toBe(1)
    expect(again.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^mm: cannot list .*not a directory$/)])
  }, 60_000)
})

describe("mm -p --continue with nothing to continue", () => {
  it("says in one line on stderr that it starts a new conversation, and answers", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    fake.push({ text: "the answer" })
    const mm = new MmProcess(dir, ["-p", "--continue", "a question"], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
    mm.child.stdin!.end()
    expect(await mm.exited).toBe(0)
    expect(mm.stdout).toContain("the answer")
    expect(mm.stderr.trim().split("\n")).toEqual([expect.stringMatching(/^no earlier session to continue/)])
  }, 60_000)
})
