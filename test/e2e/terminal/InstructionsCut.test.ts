// An instruction file larger than the cap is cut: the banner's line that names it says so.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

describe("the banner and a cut instruction file", () => {
  it("says the file was cut, and how much was read, on the line that names it", async () => {
    const server = await startFakeModelServer()
    try {
      const xdg = fs.mkdtempSync(path.join(os.tmpdir(), "mm-xdg-"))
      const project = tempProject(configFor(server.url))
      fs.writeFileSync(path.join(project, "AGENTS.md"), "rule of the project\n".repeat(12_000))
      fs.mkdirSync(path.join(project, "pkg"))
      fs.writeFileSync(path.join(project, "pkg", "AGENTS.md"), "small rules\n")
      fs.mkdirSync(path.join(project, ".git"))
      fs.writeFileSync(path.join(project, ".git", "HEAD"), "ref: refs/heads/main\n")
      const { stderr } = await runMm(path.join(project, "pkg"), [], ["--config", path.join(project, "agent.yaml")], {
        XDG_CONFIG_HOME: xdg
      })
      expect(stderr.split("\n")).toContain(
        `instructions: ${path.join(project, "AGENTS.md")} (cut: 234 KiB, first 32 KiB read), AGENTS.md`
      )
    } finally {
      await server.close()
    }
  })
})
