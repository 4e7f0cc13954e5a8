import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { SUMMARY_HEADER } from "../../../src/agent/Compactor"
import { startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MM_BIN, readSession, runMm, sessionFiles, tempProject } from "../../support/MmProcess"

/** `mm ARGS` as a command line (no stdin), its output and exit code. */
const runCli = (cwd: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<{ stdout: string; stderr: string; code: number | null }>((resolve) => {
    const child = spawn(process.execPath, [MM_BIN, ...args], {
      cwd,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    child.on("close", (code) => resolve({ stdout, stderr, code }))
  })

describe("/compact in the terminal", () => {
  it("compacts, then a resumed session starts from the summary", async () => {
    const server = await startFakeModelServer()
    const project = tempProject(
      configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"])
    )
    server.push({ text: "a1" }, { text: "a2" }, { text: "a3" }, { text: "the summary" })
    const run = await runMm(project, ["q1", "q2", "q3", "/compact"])
    expect(run.stdout).toMatch(/compacted: 4 older message\(s\) replaced by a summary/)
    const nothing = await runMm(project, ["/resume", "/compact"])
    expect(nothing.stdout).toContain("nothing to compact yet")
    server.push({ text: "a4" }, { text: "" })
    const resumed = await runMm(project, ["/resume", "q4", "/compact"])
    expect(resumed.stdout).toContain("↩️ resumed")
    expect(resumed.stderr).toMatch(/compaction failed: .*empty summary/)
    const request = server.completions().find((r) => r.body.messages.some((m: any) => m.content === "q4"))!.body
    expect(request.messages.map((m: any) => m.content)).toEqual([
      request.messages[0].content,
      `${SUMMARY_HEADER}\n\nthe summary`,
      "q3",
      "a3",
      "q4"
    ])
    await server.close()
  })
})

describe("compaction keeps the turns it replaces", () => {
  it(
    "/compact and automatic compaction archive the turns; show prints them first; listings skip archives; rm removes them",
    async () => {
      const server = await startFakeModelServer()
      const project = tempProject(
        configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1", "  threshold: 0.5"])
      )
      const dir = path.join(project, ".mm", "sessions")
      server.push({ text: "a1" }, { text: "a2" }, { text: "summary one" })
      await runMm(project, ["q1", "q2", "/compact"])
      // automatic: a long question takes the history over the threshold (0.5 of 32k tokens)
      server.push({ text: "a3" }, { text: "summary two" }, { text: "a4" })
      const auto = await runMm(project, ["/resume", "q3", `q4 ${"long ".repeat(16_000)}`])
      expect(auto.all).toMatch(/history compacted/)
      const files = sessionFiles(project)
      expect(files).toHaveLength(3)
      const sessions = files.map((f) => readSession(project, f))
      const main = sessions.find((s) => s.archiveOf === undefined)
      const archives = sessions.filter((s) => s.archiveOf === main.id)
      expect(archives).toHaveLength(2)
      // ids made in the same second do not sort by time: the order is checked by content below
      expect([...main.archives].sort()).toEqual(archives.map((a) => a.id).sort())
      // the model still sees only the summary; the archives hold the turns, in the same shape
      expect(main.messages.some((m: any) => m.content === "q1")).toBe(false)
      const first = readSession(project, `${main.archives[0]}.json`)
      expect(first.messages.map((m: any) => m.content)).toEqual(["q1", "a1"])
      const second = readSession(project, `${main.archives[1]}.json`)
      expect(second.messages.map((m: any) => m.content).slice(1)).toEqual(["q2", "a2"])
      expect(first.cwd).toBe(main.cwd)

      const env = { AGENT_CONFIG: path.join(project, "agent.yaml") }
      const show = await runCli(project, ["sessions", "show", main.id], env)
      expect(show.code).toBe(0)
      const order = [
        "> q1",
        "a1",
        "> q2",
        "a2",
        "Summary of the earlier conversation",
        "summary two",
        "> q3",
        "a3",
        "> q4"
      ]
      // each looked for after the one before: a short text such as "a1" can also stand in an id of the header
      let from = 0
      const at = order.map((text) => {
        const i = show.stdout.indexOf(text, from)
        if (i >= 0) from = i + text.length
        return i
      })
      expect(at.every((i) => i >= 0)).toBe(true)
      expect([...at].sort((a, b) => a - b)).toEqual(at)

      // not listed: by mm sessions, /sessions, nor taken by a bare /resume
      const listed = JSON.parse((await runCli(project, ["sessions", "--json"], env)).stdout)
      expect(listed.sessions.map((s: any) => s.id)).toEqual([main.id])
      const again = JSON.parse((await runCli(project, ["sessions", "--json"], env)).stdout)
      expect(again.sessions.map((s: any) => s.id)).toEqual([main.id])
      const inside = await runMm(project, ["/sessions"])
      expect(inside.stdout).toContain("1 session(s)")

      const removed = await runCli(project, ["sessions", "rm", main.id, "--yes"], env)
      expect(removed.code).toBe(0)
      expect(fs.readdirSync(dir).filter((f) => f.endsWith(".json") && !f.startsWith("."))).toEqual([])
      await server.close()
    },
    60_000
  )
})

describe("a fork shares its original's archives", () => {
  it("rm of either side keeps the archive while the other still lists it", async () => {
    const server = await startFakeModelServer()
    const project = tempProject(
      configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"])
    )
    const env = { AGENT_CONFIG: path.join(project, "agent.yaml") }
    server.push({ text: "a1" }, { text: "a2" }, { text: "summary one" })
    await runMm(project, ["q1", "q2", "/compact"])
    const forked = await runMm(project, ["/resume", "/fork"])
    expect(forked.code).toBe(0)
    const sessions = sessionFiles(project).map((f) => readSession(project, f))
    const archive = sessions.find((s) => s.archiveOf !== undefined)
    const original = sessions.find((s) => s.archiveOf === undefined && s.forkedFrom === undefined)
    const fork = sessions.find((s) => s.forkedFrom !== undefined)
    expect(fork.archives).toEqual([archive.id])
    expect(original.archives).toEqual([archive.id])

    const removed = await runCli(project, ["sessions", "rm", original.id, "--yes"], env)
    expect(removed.code).toBe(0)
    expect(removed.stdout).not.toContain(archive.id)
    expect(sessionFiles(project)).toContain(`${archive.id}.json`)
    // the fork that still lists it is where it belongs now
    expect(readSession(project, `${archive.id}.json`).archiveOf).toBe(fork.id)
    // the fork still shows the archived turns
    const show = await runCli(project, ["sessions", "show", fork.id], env)
    expect(show.stdout).toContain("> q1")

    const last = await runCli(project, ["sessions", "rm", fork.id, "--yes"], env)
    expect(last.stdout).toContain(`deleted ${archive.id} (an archive of ${fork.id})`)
    expect(sessionFiles(project)).toEqual([])
    await server.close()
  }, 60_000)
})

describe("mm sessions rm and the files a session names as archives", () => {
  it(
    "deletes only archives whose archiveOf is the removed session; a conversation, another's archive, a missing or broken file stay",
    async () => {
      const server = await startFakeModelServer()
      const project = tempProject(
        configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"])
      )
      const env = { AGENT_CONFIG: path.join(project, "agent.yaml") }
      server.push({ text: "a1" }, { text: "a2" }, { text: "summary A" })
      await runMm(project, ["q1", "q2", "/compact"])
      server.push({ text: "a3" }, { text: "a4" }, { text: "summary C" })
      await runMm(project, ["q3", "q4", "/compact"])
      server.push({ text: "a5" })
      await runMm(project, ["q5"])
      const sessions = sessionFiles(project).map((f) => readSession(project, f))
      const holding = (question: string) =>
        sessions.find((s) =>
          s.archiveOf === undefined &&
          s.archives?.some((id: string) =>
            readSession(project, `${id}.json`).messages.some((m: any) => m.content === question)
          )
        )
      const a = holding("q1")
      const c = holding("q3")
      const b = sessions.find((s) => s.archiveOf === undefined && s.archives === undefined)
      const [ownArchive] = a.archives
      const [othersArchive] = c.archives
      expect(readSession(project, `${othersArchive}.json`).archiveOf).toBe(c.id)
      // A's list also names a conversation, C's archive, a file that is not there and one that is not JSON
      const missing = "20200101-000000-0000abcd"
      const broken = "20200101-000000-0000beef"
      const dir = path.join(project, ".mm", "sessions")
      fs.writeFileSync(path.join(dir, `${broken}.json`), "not a session")
      fs.writeFileSync(
        path.join(dir, `${a.id}.json`),
        JSON.stringify({ ...a, archives: [ownArchive, b.id, othersArchive, missing, broken] }, null, 2)
      )

      const removed = await runCli(project, ["sessions", "rm", a.id, "--yes"], env)
      expect(removed.code).toBe(0)
      expect(removed.stdout).toBe(`deleted ${a.id}\ndeleted ${ownArchive} (an archive of ${a.id})\n`)
      const said = removed.stderr.trimEnd().split("\n")
      expect(said).toHaveLength(3)
      expect(said[0]).toBe(`kept ${b.id}, named among the archives of ${a.id}: a conversation, not an archive`)
      expect(said[1]).toMatch(
        new RegExp(`^skipped ${missing}, named among the archives of ${a.id}: no session ${missing}`)
      )
      expect(said[2]).toMatch(
        new RegExp(`^skipped ${broken}, named among the archives of ${a.id}: session ${broken} is unreadable`)
      )
      expect(sessionFiles(project)).toEqual([broken, b.id, c.id, othersArchive].map((id) => `${id}.json`).sort())
      const show = await runCli(project, ["sessions", "show", c.id], env)
      expect(show.stdout).toContain("> q3")
      await server.close()
    },
    60_000
  )
})

describe("/compact after /resume", () => {
  it("writes the system prompt a request sends, environment included, not the bare configured one", async () => {
    const server = await startFakeModelServer()
    const project = tempProject(
      configFor(server.url, ["sessions:", "  enabled: true", "compaction:", "  keepTurns: 1"])
    )
    server.push({ text: "a1" }, { text: "a2" })
    await runMm(project, ["q1", "q2"])
    server.push({ text: "the summary" })
    const compacted = await runMm(project, ["/resume", "/compact"])
    expect(compacted.stdout).toMatch(/compacted: 2 older message\(s\) replaced by a summary/)
    const main = sessionFiles(project).map((f) => readSession(project, f)).find((s) => s.archiveOf === undefined)
    const system = main.messages[0]
    expect(system.role).toBe("system")
    expect(system.content).toContain("# Environment")
    expect(system.content).toContain(`- working directory: ${project}`)
    // the next request, with no compaction of its own, sends the same system message
    server.push({ text: "a3" })
    await runMm(project, ["/resume", "q3"])
    expect(server.completions().at(-1)!.body.messages[0]).toEqual({ role: "system", content: system.content })
    await server.close()
  }, 60_000)
})
