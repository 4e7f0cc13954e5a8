import * as fs from "node:fs"
import * as path from "node:path"

import { afterEach, describe, expect, it } from "vitest"

import { removeProjects, replayOf, startAgent } from "../../support/acp-agent"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { type FakeResponsesServer, responsesYaml, startFakeResponsesServer } from "../../support/FakeResponsesServer"
import { configFor, runMm, sessionFiles, tempProject } from "../../support/MmProcess"

const KEY_ENV = "MM_ACP_RESPONSES_KEY"
const env = { [KEY_ENV]: "sk-acp-responses-0123456789" }
const THOUGHT = "The user wants a greeting file."
const COMMAND = "echo hi > hi.txt && cat hi.txt"

const sse = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`
const delta = (d: object, finish: string | null = null) =>
  sse({ choices: [{ index: 0, delta: d, finish_reason: finish }] })

/** The same tool turn, reasoning first, told by a chat-completions server. */
const chatTurn = (server: FakeModelServer) =>
  server.push(
    {
      kind: "raw",
      chunks: [
        delta({ role: "assistant", reasoning_content: THOUGHT }),
        delta({
          tool_calls: [{
            index: 0,
            id: "call_hi",
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command: COMMAND }) }
          }]
        }),
        delta({}, "tool_calls"),
        "data: [DONE]\n\n"
      ]
    },
    { text: "Wrote hi.txt.", usage: { prompt_tokens: 1600, completion_tokens: 6 } }
  )

/** …and by a Responses server. */
const responsesTurn = (server: FakeResponsesServer) =>
  server.push(
    {
      reasoning: { summary: [THOUGHT], encrypted: "ENC-ONE" },
      calls: [{ name: "bash", arguments: { command: COMMAND }, callId: "call_hi" }]
    },
    { text: "Wrote hi.txt.", usage: { input_tokens: 1600, output_tokens: 6 } }
  )

/** A replay as an editor sees it, without what differs between any two runs (times, ids, token counts). */
const seen = (updates: ReadonlyArray<any>) =>
  updates.map((u) => {
    switch (u.sessionUpdate) {
      case "usage_update":
      case "session_info_update":
      case "available_commands_update":
        return { sessionUpdate: u.sessionUpdate }
      case "tool_call":
        return {
          sessionUpdate: u.sessionUpdate,
          toolCallId: u.toolCallId,
          title: u.title,
          status: u.status,
          rawInput: u.rawInput,
          rawOutput: u.rawOutput
        }
      default:
        return u
    }
  })

/** Runs the turn with `mm -p` in a new project, then loads its session in `mm acp`: the replay. */
const replayAfterPrint = async (yaml: ReadonlyArray<string>) => {
  const project = tempProject(yaml)
  const run = await runMm(project, [], ["-p", "make hi.txt"], env)
  expect(run.stdout).toBe("Wrote hi.txt.\n")
  const [file] = sessionFiles(project)
  const config = path.join(project, "agent.yaml")
  const agent = startAgent({ cwd: project, config, env })
  try {
    const replay = await replayOf(agent, file.replace(/\.json$/, ""), project)
    expect(agent.invalid()).toEqual([])
    return replay
  } finally {
    await agent.kill()
    fs.rmSync(project, { recursive: true, force: true })
  }
}

describe("mm acp: a Responses session reloads as a chat-completions one does", () => {
  afterEach(() => removeProjects())

  it("session/load replays the question, the thought, the call and the answer alike", async () => {
    const chat = await startFakeModelServer()
    const responses = await startFakeResponsesServer()
    try {
      chatTurn(chat)
      const chatReplay = await replayAfterPrint(configFor(chat.url, ["sessions:", "  enabled: true"]))
      responsesTurn(responses)
      const responsesReplay = await replayAfterPrint(responsesYaml(responses.url, KEY_ENV))

      expect(seen(responsesReplay)).toEqual(seen(chatReplay))
      expect(responsesReplay.map((u) => u.sessionUpdate)).toEqual([
        "user_message_chunk",
        "agent_thought_chunk",
        "tool_call",
        "agent_message_chunk",
        "usage_update",
        "session_info_update",
        "available_commands_update"
      ])
      expect(responsesReplay[1].content).toEqual({ type: "text", text: THOUGHT })
      expect(responsesReplay[2]).toMatchObject({ toolCallId: "call_hi", status: "completed", title: COMMAND })
      // nothing ran again, and nothing was asked of the model
      expect(responses.posts()).toHaveLength(2)
    } finally {
      await chat.close()
      await responses.close()
    }
  }, 60_000)
})
