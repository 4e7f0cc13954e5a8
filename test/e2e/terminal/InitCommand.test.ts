// /init in the terminal: a turn with mm's fixed prompt, whose write of AGENTS.md goes through
// the approvals as any other.
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { INIT_PROMPT } from "../../../src/commands/ModelChoice"
import { startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

describe("/init in the terminal", () => {
  it("sends the prompt that asks for AGENTS.md, and the model's write is asked about", async () => {
    const server = await startFakeModelServer()
    try {
      const project = tempProject(
        configFor(server.url).map((line) => (line === "permissions: allow" ? "permissions: ask" : line))
      )
      server.push(
        { toolCalls: [{ id: "w1", name: "write_file", arguments: { path: "AGENTS.md", content: "# Build\n" } }] },
        { text: "wrote AGENTS.md" }
      )
      const mm = new PtyMm(project)
      await mm.waitForText(/> /)
      mm.type("/init\r")
      await mm.waitForText(/write_file[\s\S]*\[y\]es/)
      mm.type("y")
      await mm.waitForText(/wrote AGENTS\.md[\s\S]*> /)
      mm.type("\u0004")
      expect(await mm.exit()).toBe(0)
      const [request] = server.completions()
      const users = request.body.messages.filter((message: any) => message.role === "user")
      expect(users[users.length - 1].content).toBe(INIT_PROMPT)
      expect(INIT_PROMPT).toContain("AGENTS.md")
      expect(fs.readFileSync(path.join(project, "AGENTS.md"), "utf8")).toBe("# Build\n")
    } finally {
      await server.close()
    }
  })
})
