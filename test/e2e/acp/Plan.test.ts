import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, replayOf, useAgents } from "../../support/acp-agent"
import { PLANS, todoStep } from "../../support/plans"

const harness = useAgents()

/** A plan as an editor gets it: every entry with a priority (medium when the model gave none). */
const shown = (n: number) => PLANS[n].map((entry) => ({ priority: "medium", ...entry }))

describe("mm acp: the model's plan", () => {
  it("is sent whole at each change, kept in the file, and sent again after its turn on session/load", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    harness.fake().push(todoStep(0), todoStep(1), todoStep(2), { text: "planned" }, { text: "second answer" })
    const first = harness.start({ cwd: project.dir, config: project.config })
    await first.initialize()
    const { sessionId } = await first.agent.request(acp.methods.agent.session.new, { cwd: project.dir, mcpServers: [] })
    const ask = (text: string) =>
      first.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] })
    expect((await ask("plan it")).stopReason).toBe("end_turn")
    expect((await ask("and then?")).stopReason).toBe("end_turn")

    const live = first.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update) as Array<any>
    const plans = live.filter((u) => u.sessionUpdate === "plan")
    expect(plans.map((u) => u.entries)).toEqual([shown(0), shown(1), shown(2)])
    // each plan update comes while its call runs: after its tool_call, before its result
    const todo = live.findIndex((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "todo_1")
    expect(live[todo]).toMatchObject({ kind: "think", title: "3 items, 0 done" })
    expect(live.indexOf(plans[0])).toBeGreaterThan(todo)
    expect(live.indexOf(plans[0])).toBeLessThan(
      live.findIndex((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "todo_1")
    )
    expect(first.invalid()).toEqual([])
    await first.kill()

    const file = readSession(path.join(project.dir, ".mm", "sessions", `${sessionId}.json`))
    expect(file.plan).toEqual({ turn: 1, entries: PLANS[2] })

    const requests = harness.fake().completions().length
    const second = harness.start({ cwd: project.dir, config: project.config })
    const replayed = await replayOf(second, sessionId, project.dir)
    const kinds = replayed.map((u) => u.sessionUpdate)
    // after the first turn (its three calls and its answer), before the second question
    expect(kinds.slice(0, 7)).toEqual([
      "user_message_chunk",
      "tool_call",
      "tool_call",
      "tool_call",
      "agent_message_chunk",
      "plan",
      "user_message_chunk"
    ])
    expect(replayed[5].entries).toEqual(shown(2))
    expect(kinds.filter((kind) => kind === "plan")).toHaveLength(1)
    expect(harness.fake().completions()).toHaveLength(requests)
    expect(second.invalid()).toEqual([])
  })
})
