import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, useAgents } from "../../support/acp-agent"
import { llamaOverflow } from "../../support/FakeModelServer"
import { MmProcess } from "../../support/MmProcess"

// A conversation continued with `mm -p --continue` until the server refuses its third question
// as over its window, as a llama-server started with `-c 4096` does: what a script is told.

const harness = useAgents()

/** About 1,500 tokens of answer. */
const LONG_ANSWER = "word ".repeat(1200)

/** Two turns answered at length, then `mm -p --continue` on a third: its exit code and output. */
const thirdTurn = async (dir: string) => {
  const env = { AGENT_CONFIG: path.join(dir, "agent.yaml") }
  for (const [i, args] of [["-p", "question 1"], ["-p", "--continue", "question 2"]].entries()) {
    const mm = new MmProcess(dir, args, env)
    mm.child.stdin!.end()
    expect(await mm.exited, mm.stderr).toBe(0)
    expect(mm.stdout).toContain(`${i + 1}`)
  }
  const third = new MmProcess(dir, ["-p", "--continue", "question 3"], env)
  third.child.stdin!.end()
  return { code: await third.exited, mm: third }
}

describe("mm -p and a request over the server's window", () => {
  it("compacts the short history, asks again and answers the third question", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    fake.push({ text: `${LONG_ANSWER}1` }, { text: `${LONG_ANSWER}2` })
    fake.push(llamaOverflow(4858, 4096), { text: "summary of the first two questions" }, { text: "answer 3" })
    const { code, mm } = await thirdTurn(dir)
    expect(code, mm.stderr).toBe(0)
    expect(mm.stdout.trim()).toBe("answer 3")
    expect(mm.stderr.trim().split("\n")).toEqual([
      "the request (4,858 tokens, over the server's window of 4,096) did not fit: history compacted — 4 older message(s) replaced by a summary — asking again"
    ])
    expect(fake.completions().at(-1)!.body.messages.at(-1).content).toBe("question 3")
  }, 90_000)

  it("says in one line how large the conversation is and what to do when compacting was not enough", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    fake.push({ text: `${LONG_ANSWER}1` }, { text: `${LONG_ANSWER}2` })
    fake.push(llamaOverflow(4858, 4096), { text: LONG_ANSWER.repeat(2) }, llamaOverflow(4300, 4096))
    const { code, mm } = await thirdTurn(dir)
    expect(code).toBe(1)
    expect(mm.stdout).toBe("")
    const lines = mm.stderr.trim().split("\n")
    expect(lines.at(-1)).toBe(
      "this conversation is 4,300 tokens; the server takes 4,096 — /compact, /new, or a larger window (llama-server -c)"
    )
    expect(mm.stderr).not.toMatch(/the question/)
  }, 90_000)

  it("tells a window smaller than mm's own prompt and tools from a question too long", async () => {
    const fake = harness.fake()
    const { dir } = makeProject(configYaml({ url: fake.url }))
    // what a llama-server started with -c 512 answers to `hello there`
    fake.push(llamaOverflow(1207, 512))
    const mm = new MmProcess(dir, ["-p", "hello there"], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
    mm.child.stdin!.end()
    expect(await mm.exited).toBe(1)
    expect(mm.stderr.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^mm's own system prompt and tools are about 1,\d{3} tokens; the server takes 512 — start it with a larger window \(llama-server -c\)$/
      )
    ])
    expect(fake.completions()).toHaveLength(1)
  }, 60_000)
})
