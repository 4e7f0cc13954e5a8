// /permissions import: each row of a project's .mm/permissions.json is judged by whether mm
// would offer that "always" itself; only those are importable.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { beforeAll, describe, expect, it } from "@effect/vitest"

import type { Scope } from "../../src/approvals/ApprovalScope"
import { type CommandReader, loadCommandReader } from "../../src/approvals/CommandReader"
import { importable, importRefusal, readProjectApprovals } from "../../src/approvals/ProjectApprovals"

let reader: CommandReader
beforeAll(async () => {
  reader = await loadCommandReader()
})
const read = (command: string) => reader.read(command)

const project = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-project-approvals-")))

describe("ProjectApprovals", () => {
  it("imports only what mm would offer itself", () => {
    const dir = project()
    fs.mkdirSync(path.join(dir, "src"))
    const cases: ReadonlyArray<readonly [Scope, boolean]> = [
      [{ _tag: "ExactCommand", command: "make test" }, true],
      [{ _tag: "CommandPrefix", words: ["ls"] }, true],
      // a prefix the rule never gives: one ending in an option, a shell
      [{ _tag: "CommandPrefix", words: ["ls", "-la"] }, false],
      [{ _tag: "CommandPrefix", words: ["bash"] }, false],
      [{ _tag: "File", path: path.join(dir, "src", "a.ts") }, true],
      [{ _tag: "File", path: path.join(dir, ".git", "config") }, false],
      [{ _tag: "File", path: path.join(dir, "agent.yaml") }, false],
      [{ _tag: "File", path: path.join(dir, ".mm", "permissions.json") }, false],
      [{ _tag: "File", path: "/etc/passwd" }, false],
      [{ _tag: "Project", dir }, true],
      [{ _tag: "Project", dir: os.tmpdir() }, false],
      [{ _tag: "Tool", name: "mcp__docs__search" }, true],
      ...["bash", "read_file", "write_file", "edit_file", "grep", "glob"].map((name) =>
        [{ _tag: "Tool", name } as Scope, false] as const
      )
    ]
    for (const [scope, ok] of cases) {
      const why = importRefusal(scope, dir, read)
      expect({ scope, why: why === undefined ? "importable" : "refused" }).toEqual({
        scope,
        why: ok ? "importable" : "refused"
      })
    }
  })

  it("reads the project's file row by row; an unknown row is refused, not the whole file", () => {
    const dir = project()
    expect(readProjectApprovals(dir, read)._tag).toBe("None")
    fs.mkdirSync(path.join(dir, ".mm"))
    const file = path.join(dir, ".mm", "permissions.json")
    fs.writeFileSync(file, "{ broken")
    expect(readProjectApprovals(dir, read)).toEqual({ _tag: "Refused", file, why: "holds no list of approvals" })
    const rows = [
      { _tag: "Tool", name: "bash" },
      { _tag: "ExactCommand", command: "make test" },
      { _tag: "Shell", command: "x" },
      { _tag: "CommandPrefix", words: ["ls"], extra: 1 }
    ]
    fs.writeFileSync(file, JSON.stringify({ version: 1, approvals: rows }))
    const found = readProjectApprovals(dir, read)
    if (found._tag !== "Rows") throw new Error(`rows expected, got ${found._tag}`)
    expect(found.rows.map((row) => row._tag === "Scope" ? (row.why === undefined ? "import" : "refused") : "unknown"))
      .toEqual(["refused", "import", "unknown", "unknown"])
    expect(importable(found.rows)).toEqual([{ _tag: "ExactCommand", command: "make test" }])
  })
})
