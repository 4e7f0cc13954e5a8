// What mm does not do on its way to the banner and to the first request: load node:crypto (its
// random names and hashes are made without it, src/lib/QuickIds.ts), or initialise @effect/cli
// (only a subcommand's line is parsed by it). The loaded modules are read by a preload in the
// child, as the request leaves.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, MM_BIN, tempProject, withSessions } from "../../support/MmProcess"

// Writes whether node:crypto is loaded, and whether @effect/cli's modules have run (each names
// its symbols with Symbol.for("@effect/cli/…")), to the file named by MM_TEST_REPORT, at the
// moment named by MM_TEST_AT: the first HTTP request made, or the banner's sessions line written
const PRELOAD = `
const fs = require("node:fs")
const http = require("node:http")
let cli = false
const symbolFor = Symbol.for
Symbol.for = (key) => ((cli ||= String(key).startsWith("@effect/cli")), symbolFor(key))
let said = false
const say = (at) => {
  if (said || at !== process.env.MM_TEST_AT) return
  said = true
  const crypto = process.moduleLoadList.includes("NativeModule crypto")
  fs.writeFileSync(process.env.MM_TEST_REPORT, JSON.stringify({ at, crypto, cli }))
}
const request = http.request
http.request = function (...args) { say("request"); return request.apply(this, args) }
const write = process.stderr.write.bind(process.stderr)
process.stderr.write = (chunk, ...rest) => { if (String(chunk).includes("earlier")) say("banner"); return write(chunk, ...rest) }
`

interface Run {
  readonly code: number | null
  readonly stdout: string
  readonly report: { readonly at: string; readonly crypto: boolean; readonly cli: boolean }
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-startup-path-"))
const preload = path.join(dir, "preload.cjs")
fs.writeFileSync(preload, PRELOAD)

const runWith = (
  project: string,
  args: ReadonlyArray<string>,
  stdin: "ignore" | "pipe" | number,
  at: "request" | "banner" = "request"
): Promise<Run> =>
  new Promise((resolve, reject) => {
    const report = path.join(dir, `report-${Math.random().toString(16).slice(2)}.json`)
    const child = spawn(process.execPath, ["-r", preload, MM_BIN, ...args], {
      cwd: project,
      env: { ...process.env, NO_COLOR: undefined, AGENT_CONFIG: undefined, MM_TEST_REPORT: report, MM_TEST_AT: at },
      stdio: [stdin, "pipe", "pipe"]
    })
    let stdout = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr!.resume()
    child.stdin?.end()
    child.on("error", reject)
    child.on("exit", (code) => resolve({ code, stdout, report: JSON.parse(fs.readFileSync(report, "utf8")) }))
  })

let server: FakeModelServer
beforeAll(async () => {
  server = await startFakeModelServer()
})
afterAll(async () => {
  await server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const lastQuestion = (): unknown => {
  const messages = server.completions().at(-1)!.body.messages as Array<{ role: string; content: unknown }>
  return messages.filter((message) => message.role === "user").at(-1)!.content
}

describe("the start-up path", () => {
  it("the core bundle is ASCII alone, so that mm reads it as latin1 (no UTF-8 decoding at start)", () => {
    // a character past ASCII anywhere in src/ (a regular expression's class keeps it as is)
    // makes the build fall back to UTF-8, which costs about 4 ms of every start
    const core = fs.readFileSync(path.join(path.dirname(MM_BIN), "mm-core.cjs"))
    const at = core.findIndex((byte) => byte > 0x7f)
    expect(at === -1 ? "" : core.subarray(Math.max(0, at - 60), at + 20).toString("utf8")).toBe("")
  })

  it("mm -p with /dev/null on stdin sends the question alone; node:crypto and @effect/cli are not loaded before it", async () => {
    const project = tempProject(withSessions(server.url))
    server.push({ text: "done" })
    const run = await runWith(project, ["-p", "hello"], "ignore")
    expect(run.code).toBe(0)
    expect(run.stdout).toBe("done\n")
    expect(lastQuestion()).toBe("hello")
    expect(run.report).toEqual({ at: "request", crypto: false, cli: false })
    // the session was saved all the same, under an id made without node:crypto
    expect(
      fs.readdirSync(path.join(project, ".mm/sessions")).filter((name) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(name))
    )
      .toHaveLength(1)
  })

  it("a file on stdin is still read and sent after the question", async () => {
    const project = tempProject(configFor(server.url))
    const notes = path.join(project, "notes.txt")
    fs.writeFileSync(notes, "line one\nline two\n")
    const fd = fs.openSync(notes, "r")
    server.push({ text: "read" })
    try {
      const run = await runWith(project, ["-p", "summarise"], fd)
      expect(run.code).toBe(0)
      expect(run.stdout).toBe("read\n")
    } finally {
      fs.closeSync(fd)
    }
    expect(lastQuestion()).toBe("summarise\n\nline one\nline two")
  })

  it("the terminal's banner is out before node:crypto or @effect/cli is loaded", async () => {
    const project = tempProject(withSessions(server.url))
    const run = await runWith(project, [], "pipe", "banner")
    expect(run.code).toBe(0)
    expect(run.report).toEqual({ at: "banner", crypto: false, cli: false })
  })
})
