import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { type FakeModelServer, startFakeModelServer } from "./support/FakeModelServer"
import { configFor, MM_BIN, runMm, stripAnsi, tempProject } from "./support/MmProcess"

/** mm with arguments on a real pseudo-terminal, through util-linux's `script`. */
class PtyMm {
  readonly child: ChildProcess
  out = ""
  readonly exited: Promise<number | null>
  constructor(cwd: string, args: ReadonlyArray<string>) {
    // a pseudo-terminal made by `script` has no size: give it one, as a terminal window has
    const command = `stty cols 120 rows 40; exec ${[process.execPath, MM_BIN, ...args].join(" ")}`
    this.child = spawn("script", ["-qfec", command, "/dev/null"], {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, TERM: "xterm", COLUMNS: "120", LINES: "40", NO_COLOR: undefined, AGENT_CONFIG: undefined }
    })
    this.child.stdout!.setEncoding("utf8").on("data", (d: string) => (this.out += d))
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)))
  }
  type(text: string) {
    this.child.stdin!.write(text)
  }
  async waitFor(pattern: RegExp, from = 0, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const seen = stripAnsi(this.out.slice(from))
      if (pattern.test(seen)) return seen
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`timed out waiting for ${pattern}; screen:\n${JSON.stringify(stripAnsi(this.out).slice(-3000))}`)
  }
}

const sessionsDir = (project: string) => path.join(project, ".mm/sessions")
const sessionFiles = (project: string) => fs.readdirSync(sessionsDir(project)).filter((f) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f)).sort()

describe("mm --resume on a terminal", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("lists the conversations; typing filters, Enter resumes the one chosen", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push({ text: "about alpha" }, { text: "about beta" }, { text: "about gamma" })
    for (const question of ["alpha topic", "beta topic", "gamma topic"]) await runMm(project, [], ["-p", question])
    const ids = new Map(
      sessionFiles(project).map((file) => [JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8")).title, file.slice(0, -5)])
    )

    const mm = new PtyMm(project, ["--resume"])
    const list = await mm.waitFor(/gamma topic[\s\S]*beta topic[\s\S]*alpha topic/)
    expect(list).toContain("Resume which conversation?")
    let mark = mm.out.length
    mm.type("beta")
    await mm.waitFor(/beta/, mark)
    mm.type("\r")
    await mm.waitFor(new RegExp(`resumed ${ids.get("beta topic")}`), mark)
    await mm.waitFor(/> /, mark)

    server.push({ text: "beta goes on" })
    mark = mm.out.length
    mm.type("and then?\r")
    await mm.waitFor(/beta goes on/, mark)
    expect(server.completions().at(-1)!.body.messages.slice(1).map((m: any) => m.content)).toEqual(["beta topic", "about beta", "and then?"])
    mm.type("\x04")
    expect(await mm.exited).toBe(0)
    expect(sessionFiles(project)).toHaveLength(3)
  })

  it("Esc leaves without starting anything", async () => {
    const project = tempProject(configFor(server.url, ["sessions:", "  enabled: true"]))
    server.push({ text: "x" })
    await runMm(project, [], ["-p", "only one"])
    const mm = new PtyMm(project, ["--resume"])
    await mm.waitFor(/only one/)
    mm.type("\x1b")
    expect(await mm.exited).toBe(130)
    expect(stripAnsi(mm.out)).not.toContain("mm 0.1.0 ·")
  })
})
