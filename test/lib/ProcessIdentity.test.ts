import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"

import { describe, expect, it } from "@effect/vitest"

import {
  type ProcessMark,
  type ProcessProbe,
  runsElsewhere,
  startField,
  systemProbe,
  thisProcess
} from "../../src/lib/ProcessIdentity"

// Whether the mm a session file names as answering its turn still runs.

/** A system where pid 4242 runs, started at tick 1000, and this process is pid 7. */
const probe = (fields: Partial<ProcessProbe> = {}): ProcessProbe => ({
  host: "box",
  self: 7,
  exists: (pid) => pid === 4242,
  startOf: (pid) => (pid === 4242 ? 1000 : undefined),
  ...fields
})

const mark = (fields: Partial<ProcessMark> = {}): ProcessMark => ({ pid: 4242, host: "box", start: 1000, ...fields })

describe("runsElsewhere", () => {
  it("is true for another process of this host that exists and started when recorded", () => {
    expect(runsElsewhere(mark(), probe())).toBe(true)
  })

  it("is false when the pid is gone", () => {
    expect(runsElsewhere(mark({ pid: 4243 }), probe())).toBe(false)
  })

  it("is false when the pid was given to a process that started at another time", () => {
    expect(runsElsewhere(mark({ start: 999 }), probe())).toBe(false)
  })

  it("trusts the pid when no start time was recorded, or it cannot be read", () => {
    const { start: _start, ...noStart } = mark()
    expect(runsElsewhere(noStart, probe())).toBe(true)
    expect(runsElsewhere(mark(), probe({ startOf: () => undefined }))).toBe(true)
  })

  it("is false for another host, whatever runs here under that pid", () => {
    expect(runsElsewhere(mark({ host: "other-box" }), probe())).toBe(false)
  })

  it("is false for this process's own pid (an earlier process that had it), and for no pid at all", () => {
    expect(runsElsewhere(mark({ pid: 7 }), probe({ exists: () => true, startOf: () => 1000 }))).toBe(false)
    for (const pid of [0, -1, 1.5]) {
      expect(runsElsewhere(mark({ pid }), probe({ exists: () => true, startOf: () => 1000 }))).toBe(false)
    }
  })
})

describe("the system's processes", () => {
  it("reads the start time after a name that holds spaces and parentheses", () => {
    const stat = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 3672241 1000 10"
    expect(startField(stat)).toBe(3672241)
    expect(startField("garbage")).toBeUndefined()
  })

  it("names this process by its pid, host and (on Linux) start time", () => {
    const me = thisProcess()
    expect(me.pid).toBe(process.pid)
    expect(me.host).toBe(os.hostname())
    if (process.platform === "linux") {
      expect(me.start).toBe(startField(fs.readFileSync("/proc/self/stat", "utf8")))
    }
    expect(thisProcess()).toBe(me)
  })

  it("tells a running process from the same one once it has exited, and from another start time", async () => {
    const child = spawn("sleep", ["60"], { stdio: "ignore" })
    const exited = new Promise((resolve) => child.on("exit", resolve))
    await new Promise((resolve) => child.on("spawn", resolve))
    const start = systemProbe.startOf(child.pid!)
    const running: ProcessMark = { pid: child.pid!, host: os.hostname(), ...(start === undefined ? {} : { start }) }
    expect(runsElsewhere(running)).toBe(true)
    if (start !== undefined) expect(runsElsewhere({ ...running, start: start + 1 })).toBe(false)
    child.kill("SIGKILL")
    await exited
    expect(runsElsewhere(running)).toBe(false)
  })
})
