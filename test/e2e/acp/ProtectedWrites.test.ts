// mm acp: in the modes that let edits through (Edits, Auto), a write to the project's .git/,
// .mm/ or agent.yaml is still a permission request, saying why, with no "always" option;
// rejected, the file stays as it was, while the project's other files are written unasked.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { beforeAll, describe, expect, it } from "vitest"

import { configYaml, makeProject, readSession, useAgents } from "../../support/acp-agent"
import { requireSandbox } from "../../support/sandbox"

const harness = useAgents()

const PROTECTED = [".git/config", ".mm/permissions.json", "agent.yaml"]
const snapshot = (dir: string) => PROTECTED.map((f) => fs.readFileSync(path.join(dir, f), "utf8"))

describe("mm acp: protected paths in the Edits and Auto modes", () => {
  beforeAll(() => requireSandbox())

  it("each protected write is asked, with the reason and no always; the rest goes ahead", async () => {
    const project = makeProject(configYaml({ url: harness.fake().url, permissions: "ask" }))
    execFileSync("git", ["init", "-q"], { cwd: project.dir })
    fs.mkdirSync(path.join(project.dir, ".mm"), { recursive: true })
    fs.writeFileSync(path.join(project.dir, ".mm", "permissions.json"), JSON.stringify({ version: 1, approvals: [] }))
    fs.symlinkSync(".git/config", path.join(project.dir, "cfg"))
    const agent = harness.start({
      cwd: project.dir,
      config: project.config,
      onPermission: () => ({ outcome: { outcome: "selected", optionId: "reject" } })
    })
    await agent.initialize()
    const { sessionId } = await agent.agent.request(acp.methods.agent.session.new, {
      cwd: project.dir,
      mcpServers: []
    })
    const before = snapshot(project.dir)

    for (const mode of ["edits", "auto"]) {
      expect(await agent.agent.request(acp.methods.agent.session.setMode, { sessionId, modeId: mode })).toEqual({})
      const asked = agent.permissionRequests.length
      harness.fake().push(
        {
          toolCalls: [
            { id: `${mode}-git`, name: "write_file", arguments: { path: ".git/config", content: "[core]\n" } },
            { id: `${mode}-link`, name: "write_file", arguments: { path: "cfg", content: "[core]\n" } },
            {
              id: `${mode}-mm`,
              name: "edit_file",
              arguments: { path: ".mm/permissions.json", old: `{"version":1`, new: `{"version":1,"x":1` }
            },
            {
              id: `${mode}-yaml`,
              name: "edit_file",
              arguments: { path: "agent.yaml", old: "permissions: ask", new: "permissions: allow" }
            },
            { id: `${mode}-src`, name: "write_file", arguments: { path: `src/${mode}.txt`, content: mode } }
          ]
        },
        { text: "done" }
      )
      const answer = await agent.agent.request(acp.methods.agent.session.prompt, {
        sessionId,
        prompt: [{ type: "text", text: `try in ${mode}` }]
      })
      expect(answer.stopReason).toBe("end_turn")

      const requests = agent.permissionRequests.slice(asked)
      expect(requests.map((r) => r.toolCall.toolCallId)).toEqual(
        ["git", "link", "mm", "yaml"].map((id) => `${mode}-${id}`)
      )
      for (const request of requests) {
        expect(request.options.map((o) => o.kind)).toEqual(["allow_once", "reject_once"])
        expect(JSON.stringify(request.toolCall.content)).toContain("protected, asked as if outside the project")
      }
      expect(JSON.stringify(requests[0].toolCall.content)).toContain(
        "(it is in .git/, where a line of config can make git run a program)"
      )
      expect(JSON.stringify(requests[1].toolCall.content)).toContain("(cfg is a link: it is in .git/")
      expect(JSON.stringify(requests[3].toolCall.content)).toContain("agent.yaml, which says what mm may run")
      expect(snapshot(project.dir)).toEqual(before)
      expect(fs.readFileSync(path.join(project.dir, "src", `${mode}.txt`), "utf8")).toBe(mode)
    }

    const results = Object.fromEntries(
      readSession(path.join(project.dir, ".mm", "sessions", `${sessionId}.json`)).messages
        .filter((m: { role: string }) => m.role === "tool")
        .map((m: { tool_call_id: string; content: string }) => [m.tool_call_id, m.content])
    )
    expect(results["auto-git"]).toContain("denied by the user")
    expect(results["auto-src"]).toMatch(/^created src\/auto\.txt/)
    expect(agent.invalid()).toEqual([])
  })
})
