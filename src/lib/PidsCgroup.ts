/**
 * A process-count limit that holds for root too: a control group of the `pids` controller per
 * confined call. The kernel does not apply RLIMIT_NPROC to uid 0, so for mm run as root this is
 * the only way to stop a fork bomb; for other users a user namespace and RLIMIT_NPROC do it
 * (lib/Bubblewrap.ts). Used only where such a group can be made: as root, with the controller
 * mounted writable (cgroup v1's `pids` hierarchy, or v2 with `pids` enabled at its root).
 */
import * as fs from "node:fs"
import * as path from "node:path"

import { pidExists } from "./ProcessIdentity"

/** One group: where a process joins it, and whether the limit refused a new process. */
export interface PidsGroup {
  /**
   * The file a single-threaded process writes `0` into to join: cgroup v1's `tasks`, which
   * moves the writing thread alone and so skips the lock that makes moving a whole process
   * wait for the kernel's grace period (about 10 ms here, on every call); v2's `cgroup.procs`.
   */
  readonly join: string
  /** Whether the limit refused a fork since the group was made. */
  readonly reached: () => boolean
  /** Removes the group once its processes are gone (retried for a while, in the background). */
  readonly close: () => void
}

const V1 = "/sys/fs/cgroup/pids"
const V2 = "/sys/fs/cgroup"

const readText = (file: string): string | undefined => {
  try {
    return fs.readFileSync(file, "utf8")
  } catch {
    return undefined
  }
}

const writableDir = (dir: string): boolean => {
  try {
    fs.accessSync(dir, fs.constants.W_OK)
    return fs.existsSync(path.join(dir, "cgroup.procs"))
  } catch {
    return false
  }
}

/** Where groups are made here; undefined when not as root or no writable pids controller. */
const findBase = (): string | undefined => {
  if (process.getuid?.() !== 0) return undefined
  if (writableDir(V1)) return V1
  const controls = readText(path.join(V2, "cgroup.subtree_control"))
  return controls !== undefined && /\bpids\b/.test(controls) && writableDir(V2) ? V2 : undefined
}

let base: string | undefined | null = null
let made = 0

/** Groups left by an mm that is gone (killed before it could remove them) are removed on first use. */
const sweep = (dir: string): void => {
  for (const name of fs.readdirSync(dir)) {
    const owner = /^mm-(\d+)-\d+$/.exec(name)
    if (owner === null || pidExists(Number(owner[1]))) continue
    try {
      fs.rmdirSync(path.join(dir, name))
    } catch {
      // still busy, or gone meanwhile
    }
  }
}

const removeSoon = (dir: string, tries = 40): void => {
  try {
    fs.rmdirSync(dir)
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === "EBUSY" && tries > 0) {
      setTimeout(() => removeSoon(dir, tries - 1), 50).unref()
    }
  }
}

/** The count of forks the limit refused (`max` in pids.events), 0 when it cannot be read. */
const refusals = (dir: string): number =>
  Number(/^max (\d+)/m.exec(readText(path.join(dir, "pids.events")) ?? "")?.[1] ?? 0)

/** A new group allowing `max` processes, or undefined where none can be made. */
export const openPidsGroup = (max: number): PidsGroup | undefined => {
  if (base === null) {
    base = findBase()
    if (base !== undefined) {
      try {
        sweep(base)
      } catch {
        // nothing to sweep
      }
    }
  }
  if (base === undefined) return undefined
  const dir = path.join(base, `mm-${process.pid}-${++made}`)
  try {
    fs.mkdirSync(dir)
    fs.writeFileSync(path.join(dir, "pids.max"), String(max))
  } catch {
    removeSoon(dir, 0)
    return undefined
  }
  return {
    join: path.join(dir, base === V1 ? "tasks" : "cgroup.procs"),
    reached: () => refusals(dir) > 0,
    close: () => removeSoon(dir)
  }
}

/** `argv` started inside `group`: `shell` (an `sh`) joins it, then becomes `argv` (so every process it starts is counted). */
export const inGroup = (group: PidsGroup, argv: ReadonlyArray<string>, shell: string): Array<string> => [
  shell,
  "-c",
  "echo 0 > \"$1\" 2>/dev/null; shift; exec \"$@\"",
  "mm-sandbox",
  group.join,
  ...argv
]
