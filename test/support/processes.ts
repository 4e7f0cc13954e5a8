import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** Whether a process still runs: a zombie (exited, not yet reaped by a PID 1 that never reaps) counts as gone. */
export const isAlive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z"
  } catch {
    return false
  }
}

/**
 * Whether the process is gone within `ms`: a kill is a signal, and the process dies a moment
 * after it is sent (longer on a loaded machine), so a test waits for it rather than looking once.
 */
export const waitUntilGone = async (pid: number, ms = 3000): Promise<boolean> => {
  const deadline = Date.now() + ms
  while (isAlive(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
  return !isAlive(pid)
}

/** A new empty directory under the system's temporary one, by its real path (no symbolic link in it). */
export const tempDir = (prefix = "mm-test-"): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))

/** A shell line run by bash in `cwd`: its stdout, stderr and exit code, once both streams have ended ("close"). */
export const runShell = (cwd: string, line: string): Promise<{ stdout: string; stderr: string; code: number | null }> =>
  new Promise((resolve, reject) => {
    const shell = spawn("bash", ["-c", line], { cwd, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    shell.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()))
    shell.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()))
    shell.on("error", reject)
    shell.on("close", (code) => resolve({ stdout, stderr, code }))
  })
