import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { rememberedFileOf } from "../../src/approvals/RememberedApprovals"

export const MM_BIN = path.resolve(__dirname, "../../dist/mm.js")

export const stripAnsi = (text: string): string => text.replace(/\u001b\[[0-9;?]*[ -/]*[@-~]/g, "")

/** A temporary project directory with an agent.yaml written from the given lines. */
export const tempProject = (yaml: ReadonlyArray<string> | undefined, prefix = "mm-project-"): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
  if (yaml !== undefined) fs.writeFileSync(path.join(dir, "agent.yaml"), yaml.join("\n") + "\n")
  return dir
}

export const configFor = (url: string, extra: ReadonlyArray<string> = []): Array<string> => [
  "model:",
  `  url: ${url}`,
  "  name: fake-model",
  "watchdogTimeout: 5",
  "permissions: allow",
  ...extra
]

/** `mm` as a child process with piped stdin, driven line by line. */
export class MmProcess {
  readonly child: ChildProcess
  stdout = ""
  stderr = ""
  /** stdout and stderr as they arrived, interleaved. */
  all = ""
  readonly exited: Promise<number | null>

  constructor(cwd: string, args: ReadonlyArray<string> = [], env: Record<string, string | undefined> = {}) {
    this.child = spawn(process.execPath, [MM_BIN, ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: undefined, AGENT_CONFIG: undefined, ...env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    this.child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      this.stdout += chunk
      this.all += chunk
    })
    this.child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      this.stderr += chunk
      this.all += chunk
    })
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)))
  }

  send(line: string): void {
    this.child.stdin!.write(`${line}\n`)
  }

  /**
   * Waits until stdout (or `stream`, from `from` on) matches; fails with what was printed after
   * `timeoutMs`. Piped, answers are on stdout and the banner, tool lines, notices and red lines on stderr.
   */
  async waitFor(
    pattern: RegExp | string,
    from = 0,
    timeoutMs = 15_000,
    stream: "stdout" | "stderr" | "all" = "stdout"
  ): Promise<string> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const seen = this[stream].slice(from)
      if (typeof pattern === "string" ? seen.includes(pattern) : pattern.test(seen)) return seen
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    throw new Error(`timed out waiting for ${String(pattern)}; stdout so far:\n${this.stdout}\nstderr:\n${this.stderr}`)
  }

  /** Closes stdin (Ctrl-D) and waits for the exit code. */
  async end(): Promise<number | null> {
    this.child.stdin!.end()
    return this.exited
  }

  kill(): void {
    this.child.kill("SIGKILL")
  }
}

/** Runs mm once with the given stdin lines and returns what it printed. */
export const runMm = async (
  cwd: string,
  lines: ReadonlyArray<string>,
  args: ReadonlyArray<string> = [],
  env: Record<string, string | undefined> = {}
): Promise<{ stdout: string; stderr: string; all: string; code: number | null }> => {
  const mm = new MmProcess(cwd, args, env)
  for (const line of lines) mm.send(line)
  const code = await mm.end()
  return { stdout: mm.stdout, stderr: mm.stderr, all: mm.all, code }
}

/** Where a project keeps its sessions. */
export const sessionsDir = (project: string): string => path.join(project, ".mm/sessions")

/** The project's session files (none when the directory is missing), oldest first. */
export const sessionFiles = (project: string): Array<string> =>
  fs.existsSync(sessionsDir(project))
    ? fs.readdirSync(sessionsDir(project)).filter((f) => /^\d{8}-\d{6}-[0-9a-f]{8}\.json$/.test(f)).sort()
    : []

/** One of the project's session files, parsed. */
export const readSession = (project: string, file: string) =>
  JSON.parse(fs.readFileSync(path.join(sessionsDir(project), file), "utf8"))

/** The project's one session file, parsed; undefined while there is none (or several, or it is being replaced). */
export const onlySession = (project: string): any => {
  const files = sessionFiles(project)
  if (files.length !== 1) return undefined
  try {
    return readSession(project, files[0])
  } catch {
    return undefined
  }
}

/** An agent.yaml for the fake server with persistent sessions on, and any more lines. */
export const withSessions = (url: string, extra: ReadonlyArray<string> = []): Array<string> =>
  configFor(url, ["sessions:", "  enabled: true", ...extra])

/** Writes the user's remembered approvals of `project` (in this test's $XDG_STATE_HOME), as mm keeps them. */
export const rememberApprovals = (project: string, approvals: ReadonlyArray<unknown>): string => {
  const file = rememberedFileOf(project)
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
  fs.writeFileSync(file, JSON.stringify({ version: 1, project: fs.realpathSync(project), approvals }), { mode: 0o600 })
  return file
}
