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

/** A new empty directory under the system's temporary one, by its real path (no symbolic link in it). */
export const tempDir = (prefix = "mm-test-"): string => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)))
