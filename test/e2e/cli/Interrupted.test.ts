import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, replayOf, useAgents } from "../../support/acp-agent"
import { MmProcess, sessionFiles } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

// mm killed in the middle of a turn: the question, and every tool call that completed with its
// output, are in the session file; the next load closes the turn and offers the question back.

const harness = useAgents()

/** A slow answer: mm is killed while it streams. */
const slowAnswer = (mark: string) => ({
  text: [`${mark} `, ...Array.from({ length: 40 }, () => "more ")],
  chunkDelayMs: 250
})

const theSession = (dir: string) => {
  const files = sessionFiles(dir)
  expect(files).toHaveLength(1)
  return readSession(path.join(dir, ".mm", "sessions", files[0]))
}

/** `mm -p --continue QUESTION`, SIGKILLed once `mark` of the streamed answer is on its stdout. */
const killDuring = async (dir: string, question: string, mark: string) => {
  const mm = new MmProcess(dir, ["-p", "--continue", question], { AGENT_CONFIG: path.join(dir, "agent.yaml") })
  mm.child.stdin!.end()
  await mm.waitFor(mark, 0, 30_000)
  mm.kill()
  await mm.exited
  return mm.stderr
}

describe("a turn in flight is saved as it goes", () => {
  it(
    "survives 10 kills mid-stream and 10 after a tool call; --continue offers the question, session/load replays the call",
    async () => {
      const fake = harness.fake()
      const project = makeProject(configYaml({ url: fake.url }))
      const { dir } = project
      fake.push({ text: "first answer" })
      const first = new MmProcess(dir, ["-p", "first question"])
      first.child.stdin!.end()
      expect(await first.exited).toBe(0)

      // 10 kills while the second turn's answer streams (no tool): the question is in the file
      for (let i = 1; i <= 10; i++) {
        fake.push(slowAnswer(`streaming-${i}`))
        await killDuring(dir, `question ${i} with no tool`, `streaming-${i}`)
        const session = theSession(dir)
        expect(session.inProgress).toMatchObject({ question: `question ${i} with no tool` })
        const users = session.messages.filter((m: any) => m.role === "user").map((m: any) => m.content)
        expect(users).toEqual(["first question", `question ${i} with no tool`])
        if (i > 1) {
          // the load closed the previous interrupted turn: out of messages, one record
          expect(session.errors.at(-1)).toMatchObject({
            kind: "generation",
            line: "mm stopped during this turn",
            question: `question ${i - 1} with no tool`
          })
        }
      }

      // 10 kills after a tool call completed: the call and its output are in the file
      for (let i = 1; i <= 10; i++) {
        fake.push(
          {
            toolCalls: [{
              id: `call_${i}`,
              name: "bash",
              arguments: { command: `echo ran-${i} > ran-${i}.txt; echo out-${i}` }
            }]
          },
          slowAnswer(`after-tool-${i}`)
        )
        await killDuring(dir, `question ${i} with a tool`, `after-tool-${i}`)
        expect(fs.readFileSync(path.join(dir, `ran-${i}.txt`), "utf8")).toBe(`ran-${i}\n`)
        const session = theSession(dir)
        expect(session.inProgress).toMatchObject({ question: `question ${i} with a tool` })
        const result = session.messages.find((m: any) => m.role === "tool" && m.tool_call_id === `call_${i}`)
        expect(result?.content).toContain(`out-${i}`)
        if (i > 1) {
          // the previous turn's question stays, since a tool ran in it
          const users = session.messages.filter((m: any) => m.role === "user").map((m: any) => m.content)
          expect(users).toContain(`question ${i - 1} with a tool`)
          expect(session.messages.some((m: any) => m.tool_call_id === `call_${i - 1}`)).toBe(true)
        }
      }

      // the terminal: the interrupted line, and the question waiting on the prompt line
      const pty = new PtyMm(dir, { AGENT_CONFIG: project.config }, ["--continue"])
      await pty.waitForText(/the last question was interrupted: "question 10 with a tool"/, 0, 30_000)
      await pty.waitForText(/> question 10 with a tool/, 0, 30_000)
      const closed = theSession(dir)
      expect(closed.inProgress).toBeUndefined()
      expect(closed.messages.some((m: any) => m.tool_call_id === "call_10")).toBe(true)
      expect(closed.errors.at(-1)).toMatchObject({
        line: "mm stopped during this turn",
        question: "question 10 with a tool"
      })
      // Enter sends it as it is
      fake.push({ text: "answered at last" })
      const before = fake.completions().length
      pty.type("\r")
      await pty.waitForText(/answered at last/, 0, 30_000)
      const sent = fake.completions()[before].body.messages
      expect(sent.at(-1)).toEqual({ role: "user", content: "question 10 with a tool" })
      // the model saw the call that ran, closed: every tool call has its result
      const calls = sent.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.id))
      const results = new Set(sent.filter((m: any) => m.role === "tool").map((m: any) => m.tool_call_id))
      expect(calls.filter((id: string) => !results.has(id))).toEqual([])
      pty.type("\u0004")
      await pty.exit()

      // the editor: one more interrupted turn, then session/load replays the completed call and says so
      fake.push(
        { toolCalls: [{ id: "call_acp", name: "bash", arguments: { command: "echo for-the-editor" } }] },
        slowAnswer("editor-mark")
      )
      await killDuring(dir, "question for the editor", "editor-mark")
      const id = sessionFiles(dir)[0].slice(0, 24)
      const agent = harness.start({ cwd: dir, config: project.config })
      const updates = await replayOf(agent, id, dir)
      const replayed = updates.find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_acp")
      expect(replayed).toMatchObject({ status: "completed" })
      expect(JSON.stringify(replayed.rawOutput ?? replayed.content)).toContain("for-the-editor")
      const said = updates.filter((u) => u.sessionUpdate === "agent_message_chunk").map((u) => u.content.text)
      expect(said.at(-1)).toBe("the last question was interrupted: \"question for the editor\"")
    },
    300_000
  )
})
