import * as fs from "node:fs"

/** The processes whose command line (its words joined by spaces) holds `marker`, by pid: a job's own, confined or not. */
export const pidsWith = (marker: string): Array<number> =>
  fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).flatMap((name) => {
    try {
      return fs.readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").includes(marker)
        ? [Number(name)]
        : []
    } catch {
      return []
    }
  })

/** A `sleep` argument no other test's process has: `sleep 4123.5` reads as a number to sleep and names the test. */
export const sleepMarker = (): string => `${4000 + Math.floor(Math.random() * 5000)}.${process.pid % 97 + 1}`
