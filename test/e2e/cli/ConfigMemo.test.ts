// The built mm keeps the configurations it decoded under the user's cache directory, and takes
// one from there only for the very same agent.yaml (src/config/ConfigMemo.ts).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { startFakeModelServer } from "../../support/FakeModelServer"
import { runMm, tempProject } from "../../support/MmProcess"

/** agent.yaml's lines: the model (and more of its keys), then the rest. */
const linesFor = (url: string, name: string, model: ReadonlyArray<string> = [], rest: ReadonlyArray<string> = []) => [
  "model:",
  `  url: ${url}`,
  `  name: ${name}`,
  ...model,
  "watchdogTimeout: 5",
  "permissions: allow",
  ...rest
]
const yamlFor = (url: string, name: string, rest: ReadonlyArray<string> = []) =>
  linesFor(url, name, [], rest).join("\n") + "\n"

describe("mm and the configurations it decoded before", () => {
  it("an agent.yaml changed between two runs is the one in force; an error in it is found afresh", async () => {
    const server = await startFakeModelServer()
    try {
      const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-home-"))
      const env = { XDG_CACHE_HOME: cacheHome }
      const project = tempProject(undefined)
      const config = path.join(project, "agent.yaml")
      const memo = path.join(cacheHome, "mm", "config-memo.json")
      server.push({ text: "one" }, { text: "two" }, { text: "three" })

      fs.writeFileSync(config, yamlFor(server.url, "model-one"))
      expect((await runMm(project, [], ["-p", "hello"], env)).stdout).toBe("one\n")
      expect(fs.statSync(memo).mode & 0o777).toBe(0o600)

      fs.writeFileSync(config, yamlFor(server.url, "model-two"))
      expect((await runMm(project, [], ["-p", "hello"], env)).stdout).toBe("two\n")
      expect(server.completions().map((request) => request.body.model)).toEqual(["model-one", "model-two"])

      // the first text again: taken from the memo, which is left as it was
      const before = fs.statSync(memo)
      fs.writeFileSync(config, yamlFor(server.url, "model-one"))
      expect((await runMm(project, [], ["-p", "hello"], env)).stdout).toBe("three\n")
      expect(server.completions()[2].body.model).toBe("model-one")
      expect(fs.statSync(memo).ino).toBe(before.ino)
      expect(fs.statSync(memo).mtimeMs).toBe(before.mtimeMs)

      // a mistake is told with its line and column, whatever was kept before
      fs.writeFileSync(config, yamlFor(server.url, "model-one", ["maxSteps: many"]))
      const bad = await runMm(project, [], ["-p", "hello"], env)
      expect(bad.code).toBe(2)
      expect(bad.stderr).toBe(`mm: ${config}: maxSteps (line 6, column 11): expected a number, got "many"\n`)
      expect(server.completions()).toHaveLength(3)
    } finally {
      await server.close()
    }
  })

  it("a damaged memo is decoded past and written again; a configuration with headers is never kept", async () => {
    const server = await startFakeModelServer()
    try {
      const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-cache-home-"))
      const env = { XDG_CACHE_HOME: cacheHome }
      const memo = path.join(cacheHome, "mm", "config-memo.json")
      fs.mkdirSync(path.dirname(memo), { recursive: true, mode: 0o700 })
      fs.writeFileSync(memo, "{ torn", { mode: 0o600 })
      server.push({ text: "one" }, { text: "two" })

      const plain = tempProject(linesFor(server.url, "plain"))
      expect((await runMm(plain, [], ["-p", "hello"], env)).stdout).toBe("one\n")
      expect(JSON.parse(fs.readFileSync(memo, "utf8")).entries).toHaveLength(1)

      const withHeaders = tempProject(
        linesFor(server.url, "with-headers", ["  headers:", "    X-Api-Key: not-for-the-cache"])
      )
      expect((await runMm(withHeaders, [], ["-p", "hello"], env)).stdout).toBe("two\n")
      expect(server.completions()[1].headers["x-api-key"]).toBe("not-for-the-cache")
      const kept = fs.readFileSync(memo, "utf8")
      expect(JSON.parse(kept).entries).toHaveLength(1)
      expect(kept).not.toContain("not-for-the-cache")
    } finally {
      await server.close()
    }
  })
})
