import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "vitest"

import { makeProject, removeProjects, replayOf, startAgent } from "../../support/acp-agent"
import { type FakeAnthropicServer, startFakeAnthropicServer } from "../../support/FakeAnthropicServer"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { runMm } from "../../support/MmProcess"

const KEY_ENV = "MM_E2E_ANTHROPIC_ACP_KEY"
const env = { [KEY_ENV]: "sk-ant-acp-9a8b7c6d5e4f" }

const yaml = (model: ReadonlyArray<string>): string =>
  [
    "model:",
    ...model,
    "  name: claude-fake",
    // the window both report: the replay's usage line names it
    "  contextWindow: 200000",
    `  apiKeyEnv: ${KEY_ENV}`,
    "watchdogTimeout: 10",
    "permissions: allow",
    "compaction:",
    "  auto: false",
    "sessions:",
    "  enabled: true",
    "skills:",
    "  dirs: []"
  ].join("\n")

const THOUGHT = "The user wants the files listed."
const sse = (chunk: object) => `data: ${JSON.stringify(chunk)}\n\n`

/** One conversation, the same in both APIs: a thought, a tool call, its result, an answer. */
const converse = async (dir: string): Promise<string> => {
  const run = await runMm(dir, [], ["-p", "list the files"], env)
  expect(run.stdout).toBe("There is one file.\n")
  const [file] = fs.readdirSync(path.join(dir, ".mm/sessions")).filter((f) => f.endsWith(".json"))
  return file.replace(/\.json$/, "")
}

/** The replay with what differs by nature between two projects (their paths, their times) taken out. */
const replayed = async (dir: string, id: string) => {
  const agent = startAgent({ cwd: dir, config: path.join(dir, "agent.yaml"), env })
  try {
    const updates = await replayOf(agent, id, dir)
    expect(agent.invalid()).toEqual([])
    const text = JSON.stringify(updates).split(dir).join("<project>")
    return JSON.parse(text.replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, "\"<time>\""))
  } finally {
    await agent.kill()
  }
}

describe("mm acp: a session written over Anthropic Messages", () => {
  let anthropic: FakeAnthropicServer
  let chat: FakeModelServer
  beforeAll(async () => {
    anthropic = await startFakeAnthropicServer()
    chat = await startFakeModelServer()
  })
  afterAll(async () => {
    await anthropic.close()
    await chat.close()
    removeProjects()
  })

  it("reloads with the same replay as the same conversation over chat completions", async () => {
    anthropic.push(
      {
        thinking: { text: THOUGHT, signature: "sig-acp" },
        toolUses: [{ id: "toolu_acp", name: "bash", input: { command: "echo one-file" } }]
      },
      { text: "There is one file." }
    )
    const overAnthropic = makeProject(yaml(["  api: anthropic", `  url: ${anthropic.url}`]))
    const anthropicId = await converse(overAnthropic.dir)

    chat.push(
      {
        kind: "raw",
        chunks: [
          sse({ choices: [{ index: 0, delta: { role: "assistant", reasoning_content: THOUGHT } }] }),
          sse({
            choices: [{
              index: 0,
              delta: {
                tool_calls: [{
                  index: 0,
                  id: "toolu_acp",
                  type: "function",
                  function: { name: "bash", arguments: JSON.stringify({ command: "echo one-file" }) }
                }]
              },
              finish_reason: "tool_calls"
            }]
          }),
          "data: [DONE]\n\n"
        ]
      },
      { text: "There is one file." }
    )
    const overChat = makeProject(yaml([`  url: ${chat.url}`]))
    const chatId = await converse(overChat.dir)

    const fromAnthropic = await replayed(overAnthropic.dir, anthropicId)
    const fromChat = await replayed(overChat.dir, chatId)
    const kinds = fromAnthropic.map((u: any) => u.sessionUpdate)
    expect(kinds).toContain("agent_thought_chunk")
    expect(kinds).toContain("tool_call")
    expect(kinds).toContain("agent_message_chunk")
    expect(fromAnthropic).toEqual(fromChat)
  })
})
