import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { describe, expect, it } from "vitest"

import type { ParentRef } from "../../../src/domain/Session"
import { configYaml, makeProject, replayOf, useAgents } from "../../support/acp-agent"
import { writeAnsweredSession } from "../../support/store-fixtures"

const harness = useAgents()

const PARENT = "20261201-100000-0000000a"
const CHILD = "20261201-100100-0000000b"

/** A one-turn session file in `dir`, as mm writes it. */
const writeSession = (dir: string, cwd: string, id: string, question: string, minute: number, parent?: ParentRef) =>
  writeAnsweredSession(dir, { id, cwd, question, minute, ...(parent === undefined ? {} : { parent }) })

describe("a sub-agent's session over ACP", () => {
  it("is left out of session/list, and session/load replays it by its id", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url }))
    const dir = path.join(project.dir, ".mm", "sessions")
    fs.mkdirSync(dir, { recursive: true })
    writeSession(dir, project.dir, PARENT, "refactor the loader", 0)
    // newer than its parent: still not offered
    writeSession(dir, project.dir, CHILD, "find every caller of load()", 1, { id: PARENT, turn: 1, callId: "call_1" })
    const agent = harness.start({ cwd: project.dir, config: project.config })
    await agent.initialize()
    const listed = await agent.agent.request(acp.methods.agent.session.list, { cwd: project.dir })
    expect(listed.sessions.map((s) => s.sessionId)).toEqual([PARENT])
    const replay = await replayOf(agent, CHILD, project.dir)
    expect(replay).toContainEqual(
      expect.objectContaining({
        sessionUpdate: "user_message_chunk",
        content: expect.objectContaining({ text: "find every caller of load()" })
      })
    )
    expect(agent.invalid()).toEqual([])
  })
})
