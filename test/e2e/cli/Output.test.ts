import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MM_BIN, tempProject } from "../../support/MmProcess"
import { runShell } from "../../support/processes"

/** Runs a shell pipeline in `cwd`; resolves with what it printed on stdout. */
const pipeline = (cwd: string, line: string): Promise<string> => runShell(cwd, line).then((r) => r.stdout)

/** `count` session files of the project, written as mm writes them, with titles long enough to fill a pipe many times. */
const manySessions = (project: string, count: number) => {
  const dir = path.join(project, ".mm", "sessions")
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  for (let i = 0; i < count; i++) {
    const id = `20260101-${String(100000 + i).slice(1).padStart(6, "0")}-${(0x10000000 + i).toString(16)}`
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
    const session = {
      version: 1,
      id,
      cwd: project,
      createdAt: at,
      updatedAt: at,
      title: `question ${i}: ${"why does it fail ".repeat(5)}`,
      turns: 1,
      errors: [],
      messages: [{ role: "user", content: `question ${i}` }, { role: "assistant", content: "answer" }]
    }
    fs.writeFileSync(path.join(dir, `${id}.json`), JSON.stringify(session, null, 2) + "\n", { mode: 0o600 })
  }
}

describe("output through a pipe", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it(
    "a reader that starts late still gets every byte of a long answer: mm exits only once stdout drained",
    async () => {
      const project = tempProject(configFor(server.url))
      const answer = `${"0123456789".repeat(86_999)}012345678\n`
      server.push({ text: answer })
      // the reader waits before it reads: far more than a pipe holds is waiting in mm by then
      const counted = await pipeline(project, `node ${MM_BIN} -p "say a lot" | (sleep 3; wc -c)`)
      expect(Number(counted.trim())).toBe(Buffer.byteLength(answer))
    },
    60_000
  )

  it("every mode waits for a late reader: -p JSON (result last), the piped REPL, sessions, show, --help", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    const answer = `${"0123456789".repeat(99_999)}\n`
    server.push({ text: answer })
    const json = await pipeline(project, `node ${MM_BIN} -p --output-format json "say a lot" | (sleep 3; cat)`)
    const lines = json.trimEnd().split("\n").map((line) => JSON.parse(line))
    expect(lines.at(-1)).toMatchObject({ type: "result", status: "answered" })
    expect(lines.at(-1).answer === answer).toBe(true)

    server.push({ text: answer })
    const repl = await pipeline(project, `echo "say a lot again" | node ${MM_BIN} | (sleep 3; cat)`)
    expect(repl.includes(answer)).toBe(true)

    const [file] = fs.readdirSync(path.join(project, ".mm", "sessions")).filter((f) =>
      /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f)
    )
    const show = await pipeline(project, `node ${MM_BIN} sessions show ${file.slice(0, 24)} | (sleep 3; cat)`)
    expect(show.includes(answer.trim())).toBe(true)

    const help = await runShell(project, `node ${MM_BIN} --help | (sleep 3; cat)`)
    expect(help.stdout).toContain("mm -p")

    manySessions(project, 1000)
    const listed = await runShell(project, `node ${MM_BIN} sessions --json | (sleep 3; jq '.sessions | length')`)
    expect(listed.stderr).toBe("")
    expect(Number(listed.stdout.trim())).toBe(1002)
  }, 120_000)

  it("a reader that goes away ends mm quietly; another write error is one line and exit 1", async () => {
    const project = tempProject(configFor(server.url))
    server.push({ text: `${"line of the answer\n".repeat(100_000)}`, chunkDelayMs: 20 })
    const head = await runShell(project, `node ${MM_BIN} -p "say a lot" | head -1; echo "mm: \${PIPESTATUS[0]}"`)
    expect(head.stdout).toBe("line of the answer\nmm: 0\n")
    expect(head.stderr).toBe("")

    server.push({ text: "an answer that cannot be written\n" })
    const full = await runShell(project, `node ${MM_BIN} -p "say it" > /dev/full`)
    expect(full.code).toBe(1)
    expect(full.stderr).toBe("mm: cannot write to stdout: no space left on device\n")
    const help = await runShell(project, `node ${MM_BIN} --help > /dev/full`)
    expect([help.code, help.stderr]).toEqual([1, "mm: cannot write to stdout: no space left on device\n"])
  }, 60_000)
})
