import { spawnSync } from "node:child_process"
import * as fs from "node:fs"

/**
 * The sandbox tests need bubblewrap that can start here. Where it cannot, they fail with this
 * message rather than being skipped (.ci/run installs bubblewrap).
 */
export const requireSandbox = (): void => {
  const probe = spawnSync(
    "bwrap",
    ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-net", "true"],
    {
      encoding: "utf8"
    }
  )
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `the sandbox tests need bubblewrap (apt-get install bubblewrap) that can start here: ${
        probe.error?.message ?? probe.stderr.trim()
      }`
    )
  }
}

/** A new directory outside the project and outside /tmp (which the sandbox replaces): the sandbox must not write it. */
export const outsideDir = (): string => fs.realpathSync(fs.mkdtempSync("/var/tmp/mm-outside-"))

/** The process ids whose command line is exactly `argv` (read from /proc). */
export const processesRunning = (argv: ReadonlyArray<string>): Array<number> => {
  const wanted = argv.join("\0") + "\0"
  const found: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (fs.readFileSync(`/proc/${entry}/cmdline`, "utf8") === wanted) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}
