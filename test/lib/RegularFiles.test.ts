import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { findRepository, repositoryRuns } from "../../src/approvals/GitRepository"
import { readRegularSync, readRegularTextSync } from "../../src/lib/RegularFiles"

const dir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-regular-sync-")))
const codeOf = (work: () => unknown): unknown => {
  try {
    work()
    return undefined
  } catch (cause) {
    return (cause as { code?: unknown }).code
  }
}

describe("readRegularSync", () => {
  it("reads a regular file, and refuses a FIFO, a device, a link to one and a file over the cap without blocking", () => {
    const d = dir()
    fs.writeFileSync(path.join(d, "a"), "alpha")
    execFileSync("mkfifo", [path.join(d, "pipe")])
    fs.symlinkSync("pipe", path.join(d, "to-pipe"))
    expect(readRegularTextSync(path.join(d, "a"), 5)).toBe("alpha")
    expect(codeOf(() => readRegularSync(path.join(d, "a"), 4))).toBe("EFBIG")
    expect(codeOf(() => readRegularSync(path.join(d, "pipe"), 100))).toBe("ENOTREG")
    expect(codeOf(() => readRegularSync(path.join(d, "to-pipe"), 100))).toBe("ENOTREG")
    expect(codeOf(() => readRegularSync("/dev/zero", 100))).toBe("ENOTREG")
    expect(codeOf(() => readRegularSync(path.join(d, "none"), 100))).toBe("ENOENT")
  })

  it("a repository whose config is a FIFO is not taken as safe for git, and nothing blocks", () => {
    const d = dir()
    execFileSync("git", ["init", "-q", d])
    fs.rmSync(path.join(d, ".git", "config"))
    execFileSync("mkfifo", [path.join(d, ".git", "config")])
    expect(findRepository(d)?.top).toBe(d)
    expect(repositoryRuns(d)).toBe(`the repository's configuration ${path.join(d, ".git", "config")} cannot be read`)
  })
})
