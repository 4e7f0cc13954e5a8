import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import * as fs from "node:fs"

import { MM_BIN, stripAnsi } from "./MmProcess"

/** mm on a real pseudo-terminal, through util-linux's `script`. */
export class PtyMm {
  readonly child: ChildProcess
  out = ""
  readonly exited: Promise<number | null>
  /** `size`: the terminal's columns and rows (a pseudo-terminal made by `script` has none, 0×0, unless told). */
  constructor(
    cwd: string,
    env: Record<string, string | undefined> = {},
    args: ReadonlyArray<string> = [],
    size?: { readonly columns: number; readonly rows: number }
  ) {
    const command = [process.execPath, MM_BIN, ...args].join(" ")
    const sized = size === undefined ? command : `stty cols ${size.columns} rows ${size.rows}; exec ${command}`
    this.child = spawn("script", ["-qfec", sized, "/dev/null"], {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, TERM: "xterm", NO_COLOR: undefined, AGENT_CONFIG: undefined, ...env }
    })
    this.child.stdout!.setEncoding("utf8").on("data", (d: string) => (this.out += d))
    this.exited = new Promise((resolve) => this.child.on("exit", (code) => resolve(code)))
  }
  /** The pid of mm itself (a descendant of `script`), to signal it directly; undefined when not found. */
  mmPid(): number | undefined {
    const childrenOf = (pid: number): Array<number> => {
      try {
        return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(
          Number
        )
      } catch {
        return []
      }
    }
    const queue = childrenOf(this.child.pid!)
    while (queue.length > 0) {
      const pid = queue.shift()!
      try {
        if (fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(MM_BIN)) return pid
      } catch {
        // gone meanwhile
      }
      queue.push(...childrenOf(pid))
    }
    return undefined
  }
  /**
   * The terminal resized to `columns` × `rows`, as when its window is: the pseudo-terminal's
   * size is set (`stty` on it), and the kernel sends mm SIGWINCH. Returns where `out` stood.
   */
  resize(columns: number, rows: number): number {
    const pid = this.mmPid()
    if (pid === undefined) throw new Error("mm's process not found")
    const tty = fs.readlinkSync(`/proc/${pid}/fd/1`)
    const mark = this.out.length
    execFileSync("stty", ["-F", tty, "cols", String(columns), "rows", String(rows)])
    return mark
  }
  type(text: string) {
    this.child.stdin!.write(text)
  }
  /** The exit code; fails with the screen when mm does not leave in time. */
  async exit(timeoutMs = 15_000): Promise<number | null> {
    const timeout = new Promise<"timeout">((resolve) => setTimeout(() => resolve("timeout"), timeoutMs).unref())
    const code = await Promise.race([this.exited, timeout])
    if (code === "timeout") throw new Error(`mm did not leave; screen:\n${JSON.stringify(this.out)}`)
    return code
  }
  /** Like `waitFor`, on the screen's text without its colour and cursor codes (the position `from` is in `out`). */
  async waitForText(pattern: RegExp, from = 0, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      const seen = stripAnsi(this.out.slice(from))
      if (pattern.test(seen)) return seen
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`timed out waiting for ${pattern}; screen:\n${JSON.stringify(stripAnsi(this.out).slice(-3000))}`)
  }
  async waitFor(pattern: RegExp, from = 0, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs
    while (Date.now() < deadline) {
      if (pattern.test(this.out.slice(from))) return this.out.slice(from)
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`timed out waiting for ${pattern}; screen:\n${JSON.stringify(this.out)}`)
  }
}
