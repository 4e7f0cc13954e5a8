import * as fs from "node:fs"
import * as os from "node:os"

/**
 * Which process a file was written by, and whether that process still runs: a session file
 * names the mm answering its turn (`inProgress.by`) so that another mm can tell a turn still
 * running from one whose mm was killed.
 */

/** A process as another one can find it again: its pid on its host, and when it started. */
export interface ProcessMark {
  readonly pid: number
  readonly host: string
  /** Its start time (Linux: clock ticks after boot, /proc/PID/stat field 22); absent elsewhere. */
  readonly start?: number
}

/** What telling a process alive takes, so that a test can stand in for the system. */
export interface ProcessProbe {
  readonly host: string
  readonly self: number
  /** Whether a process with this pid exists (one mm may not signal counts). */
  readonly exists: (pid: number) => boolean
  /** When the process with this pid started, or undefined when that cannot be read. */
  readonly startOf: (pid: number) => number | undefined
}

/** Field 22 (starttime) of /proc/PID/stat; the name in field 2 may hold spaces and parentheses. */
export const startField = (stat: string): number | undefined => {
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const start = Number(fields[19])
  return Number.isSafeInteger(start) && start >= 0 ? start : undefined
}

const startFromProc = (pid: number | "self"): number | undefined => {
  if (process.platform !== "linux") return undefined
  try {
    return startField(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return undefined
  }
}

/** Whether a process with this pid runs (EPERM: it does, as another user). */
export const pidExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === "EPERM"
  }
}

export const systemProbe: ProcessProbe = {
  host: os.hostname(),
  self: process.pid,
  exists: pidExists,
  startOf: startFromProc
}

let mine: ProcessMark | undefined

/** This process, read once. */
export const thisProcess = (): ProcessMark => {
  if (mine === undefined) {
    const start = startFromProc("self")
    mine = { pid: process.pid, host: os.hostname(), ...(start === undefined ? {} : { start }) }
  }
  return mine
}

/**
 * Whether the process `mark` names runs now, and is another one than this: it is on this host,
 * its pid exists, and when its start time was recorded and can be read, it is the same (a pid
 * given again to a later process is not the one that wrote). A mark of another host cannot be
 * checked and counts as gone; so does one with this process's own pid (a process that earlier
 * had it, as in a container where each run gets the same pid: whatever this process runs, it
 * holds in memory).
 */
export const runsElsewhere = (mark: ProcessMark, probe: ProcessProbe = systemProbe): boolean => {
  if (mark.host !== probe.host || mark.pid === probe.self || !Number.isSafeInteger(mark.pid) || mark.pid <= 0) {
    return false
  }
  if (!probe.exists(mark.pid)) return false
  if (mark.start === undefined) return true
  const start = probe.startOf(mark.pid)
  return start === undefined || start === mark.start
}
