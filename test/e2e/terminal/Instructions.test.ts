// The banner names the instruction files the system message holds.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

describe("the terminal and the project's instructions", () => {
  it("the banner names each instruction file read; without any, it says nothing of them", async () => {
    const server = await startFakeModelServer()
    try {
      const xdg = fs.mkdtempSync(path.join(os.tmpdir(), "mm-xdg-"))
      const project = tempProject(configFor(server.url))
      fs.mkdirSync(path.join(project, "pkg"))
      const plain = await runMm(path.join(project, "pkg"), [], ["--config", path.join(project, "agent.yaml")], {
        XDG_CONFIG_HOME: xdg
      })
      expect(plain.stderr).not.toContain("instructions:")
      fs.writeFileSync(path.join(project, "AGENTS.md"), "root rules\n")
      fs.writeFileSync(path.join(project, "pkg", "AGENTS.md"), "package rules\n")
      fs.mkdirSync(path.join(project, ".git"))
      fs.writeFileSync(path.join(project, ".git", "HEAD"), "ref: refs/heads/main\n")
      const { stderr } = await runMm(path.join(project, "pkg"), [], ["--config", path.join(project, "agent.yaml")], {
        XDG_CONFIG_HOME: xdg
      })
      expect(stderr.split("\n")).toContain(`instructions: ${path.join(project, "AGENTS.md")}, AGENTS.md`)
    } finally {
      await server.close()
    }
  })
})
