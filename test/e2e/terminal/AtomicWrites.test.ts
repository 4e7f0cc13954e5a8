import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { MmProcess, tempProject, withSessions } from "../../support/MmProcess"

const sessionOf = (project: string) => {
  const dir = path.join(project, ".mm/sessions")
  const [file] = fs.readdirSync(dir).filter((f) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f))
  return JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"))
}

/** Every file under `dir` whose name says it is a temporary file of mm. */
const temps = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((name) => /\.tmp$/.test(name))

/** A 2 MiB tmpfs at `dir`, or why there cannot be one here. */
const mountSmall = (dir: string): string | undefined => {
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir], { stdio: "pipe" })
    return undefined
  } catch (cause) {
    return String((cause as { stderr?: Buffer }).stderr ?? cause).trim()
  }
}

/** On a failed wait: mm is stopped before the file system is unmounted. */
const stop = (mm: MmProcess) => async (error: unknown) => {
  mm.kill()
  await mm.exited
  throw error
}

describe("file tools write atomically", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("a full disk leaves the original byte-identical, no temporary file, and /undo honest", async () => {
    const project = tempProject(undefined, "mm-full-disk-")
    const refused = mountSmall(project)
    if (refused !== undefined) {
      console.log(`skipped: cannot mount a 2 MiB tmpfs here (${refused})`)
      return
    }
    try {
      fs.writeFileSync(path.join(project, "agent.yaml"), withSessions(server.url).join("\n") + "\n")
      // long lines: the diff shown of the call stays small
      const original = Buffer.from(`${"original text ".repeat(1000)}\n`.repeat(51)) // 715 KB
      const target = path.join(project, "big.txt")
      fs.writeFileSync(target, original)
      fs.chmodSync(target, 0o640)
      server.push(
        {
          toolCalls: [{
            id: "call_big",
            name: "write_file",
            arguments: { path: "big.txt", content: `${"new content ".repeat(1000)}\n`.repeat(114) } // 1.37 MB
          }]
        },
        { text: "tried" }
      )
      const mm = new MmProcess(project)
      mm.send("rewrite big.txt")
      await mm.waitFor("tried", 0, 30_000).catch(stop(mm))
      expect(fs.readFileSync(target).equals(original)).toBe(true)
      expect(fs.statSync(target).mode & 0o777).toBe(0o640)
      // the model was told the write failed
      const sent = server.completions().at(-1)!.body.messages
      expect(sent.find((m: any) => m.role === "tool").content).toMatch(/no space left/)
      mm.send("/undo")
      await mm.waitFor("nothing to undo", 0, 30_000).catch(stop(mm))
      // checked once mm is idle: "tried" is printed before the turn's own session save ends
      expect(temps(project)).toEqual([])
      // no line promised an undo of a change that never happened; the session that could not be saved was said
      expect(mm.all).not.toContain("/undo works until mm exits")
      expect(mm.all).toMatch(/not saved \(.*no space left on device\)/)
      expect(await mm.end()).toBe(0)
      expect(fs.readFileSync(target).equals(original)).toBe(true)
    } finally {
      // lazily: a failed run may leave mm inside until it is killed
      execFileSync("umount", ["-l", project])
      fs.rmSync(project, { recursive: true, force: true })
    }
  }, 60_000)

  it("a failed call that reuses an earlier turn's tool call id leaves that turn's change listed", async () => {
    const project = tempProject(withSessions(server.url))
    fs.writeFileSync(path.join(project, "a.txt"), "alpha\n")
    fs.mkdirSync(path.join(project, "adir"))
    // some servers number calls per answer: call_0 in every turn
    server.push(
      { toolCalls: [{ id: "call_0", name: "write_file", arguments: { path: "a.txt", content: "ALPHA\n" } }] },
      { text: "first done" },
      { toolCalls: [{ id: "call_0", name: "write_file", arguments: { path: "adir", content: "x\n" } }] },
      { text: "second done" }
    )
    const mm = new MmProcess(project)
    mm.send("change a.txt")
    await mm.waitFor("first done")
    mm.send("write adir")
    await mm.waitFor("second done")
    expect(sessionOf(project).changes.map((c: any) => [c.turn, c.tool_call_id, c.path])).toEqual([[
      1,
      "call_0",
      "a.txt"
    ]])
    const from = mm.stdout.length
    mm.send("/changes")
    await mm.waitFor("turn 1", from)
    mm.send("/undo")
    mm.send("y")
    await mm.waitFor("restored a.txt", from)
    expect(await mm.end()).toBe(0)
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("alpha\n")
  }, 60_000)
})
