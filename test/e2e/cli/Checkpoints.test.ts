import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { putBlob } from "../../../src/changes/Checkpoints"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"

const root = fs.mkdtempSync(path.join(os.tmpdir(), "mm-checkpoints-"))
afterAll(() => fs.rmSync(root, { recursive: true, force: true }))

describe("mm checkpoints gc", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("removes the blobs no session uses, and refuses while a session file is unreadable", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    fs.writeFileSync(path.join(project, "a.txt"), "one\n")
    server.push({ toolCalls: [{ id: "w", name: "write_file", arguments: { path: "a.txt", content: "two\n" } }] }, {
      text: "ok"
    })
    await runMm(project, ["change it"])
    const dir = path.join(project, ".mm/checkpoints")
    const orphan = putBlob(dir, Buffer.from("left by a session that was deleted"))
    const old = new Date(Date.now() - 10 * 60 * 1000)
    for (const name of fs.readdirSync(dir)) fs.utimesSync(path.join(dir, name), old, old)
    expect(fs.readdirSync(dir)).toHaveLength(3)

    const bad = path.join(project, ".mm/sessions/20261130-100000-0a1b2c3d.json")
    fs.writeFileSync(bad, "{ not json")
    const refused = await runMm(project, [], ["checkpoints", "gc"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("mm: session 20261130-100000-0a1b2c3d is unreadable (")
    expect(refused.stderr).toContain("nothing removed")
    expect(fs.readdirSync(dir)).toHaveLength(3)

    fs.rmSync(bad)
    const done = await runMm(project, [], ["checkpoints", "gc"])
    expect(done.code).toBe(0)
    expect(done.stdout).toContain(`removed 1 checkpoint(s) no session uses (34 bytes) from ${dir}; kept 2`)
    expect(fs.readdirSync(dir)).not.toContain(orphan)
    expect(fs.readdirSync(dir)).toHaveLength(2)
  })
})
