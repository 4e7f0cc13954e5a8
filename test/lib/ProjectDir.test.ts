import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterEach, describe, expect, it } from "@effect/vitest"

import { writeProjectFileAtomic } from "../../src/lib/DurableFiles"
import {
  ensureProjectDir,
  ignoreRecords,
  OLDER_RECORDS_GITIGNORE,
  RECORDS_GITIGNORE,
  recordsDirOf
} from "../../src/lib/ProjectDir"
import { tempDir as makeTempDir } from "../support/processes"

const made: Array<string> = []
const tempDir = (prefix: string): string => {
  const dir = makeTempDir(prefix)
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const gitignoreOf = (project: string) => path.join(project, ".mm", ".gitignore")

const modeOf = (file: string) => fs.statSync(file).mode & 0o777

describe("ensureProjectDir", () => {
  it("makes .mm/sessions private and gives .mm/ a .gitignore that keeps all but skills/ out of git", () => {
    const project = tempDir("mm-projectdir-")
    execFileSync("git", ["init", "-q"], { cwd: project })
    ensureProjectDir(path.join(project, ".mm", "sessions"))
    expect(modeOf(path.join(project, ".mm", "sessions"))).toBe(0o700)
    expect(fs.readFileSync(gitignoreOf(project), "utf8")).toBe(RECORDS_GITIGNORE)
    expect(modeOf(gitignoreOf(project)) & 0o600).toBe(0o600)
    expect(modeOf(gitignoreOf(project)) & 0o022).toBe(0)
    fs.writeFileSync(path.join(project, ".mm", "sessions", "s.json"), "{}")
    fs.mkdirSync(path.join(project, ".mm", "skills", "release"), { recursive: true })
    fs.writeFileSync(path.join(project, ".mm", "skills", "release", "SKILL.md"), "# release\n")
    const status = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
      cwd: project,
      encoding: "utf8"
    })
    expect(status).toBe("?? .mm/skills/release/SKILL.md\n")
  })

  it("never replaces a .gitignore already there, nor writes through a link in its place", () => {
    const project = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(project, ".mm"))
    fs.writeFileSync(gitignoreOf(project), "sessions/\n")
    ensureProjectDir(path.join(project, ".mm", "checkpoints"))
    expect(fs.readFileSync(gitignoreOf(project), "utf8")).toBe("sessions/\n")

    const linked = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(linked, ".mm"))
    const elsewhere = path.join(linked, "elsewhere")
    fs.symlinkSync(elsewhere, gitignoreOf(linked))
    ensureProjectDir(path.join(linked, ".mm", "sessions"))
    expect(fs.existsSync(elsewhere)).toBe(false)
    expect(fs.readlinkSync(gitignoreOf(linked))).toBe(elsewhere)
  })

  it("lets git see the project's skills, commands and hook scripts, and updates an older mm's file alone", () => {
    const project = tempDir("mm-projectdir-")
    execFileSync("git", ["init", "-q"], { cwd: project })
    for (const file of ["skills/a/SKILL.md", "commands/review.md", "hooks/check.sh", "sessions/x.json"]) {
      fs.mkdirSync(path.dirname(path.join(project, ".mm", file)), { recursive: true })
      fs.writeFileSync(path.join(project, ".mm", file), "x")
    }
    fs.writeFileSync(gitignoreOf(project), OLDER_RECORDS_GITIGNORE)
    ensureProjectDir(path.join(project, ".mm", "sessions"))
    expect(fs.readFileSync(gitignoreOf(project), "utf8")).toBe(RECORDS_GITIGNORE)
    const seen = execFileSync("git", ["status", "--porcelain", "--untracked-files=all"], {
      cwd: project,
      encoding: "utf8"
    })
    expect(seen.split("\n").filter((line) => line !== "").sort()).toEqual([
      "?? .mm/commands/review.md",
      "?? .mm/hooks/check.sh",
      "?? .mm/skills/a/SKILL.md"
    ])

    const mine = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(mine, ".mm"))
    fs.writeFileSync(gitignoreOf(mine), `${OLDER_RECORDS_GITIGNORE}!/notes/\n`)
    ignoreRecords(path.join(mine, ".mm"))
    expect(fs.readFileSync(gitignoreOf(mine), "utf8")).toBe(`${OLDER_RECORDS_GITIGNORE}!/notes/\n`)
  })

  it("gives a .mm/ an older mm made its .gitignore, and writes none outside a .mm/", () => {
    const older = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(older, ".mm", "sessions"), { recursive: true })
    ensureProjectDir(path.join(older, ".mm", "sessions"))
    expect(fs.readFileSync(gitignoreOf(older), "utf8")).toBe(RECORDS_GITIGNORE)

    const store = tempDir("mm-projectdir-")
    ensureProjectDir(path.join(store, "all-sessions", "x"))
    expect(fs.readdirSync(path.join(store, "all-sessions"))).toEqual(["x"])
    expect(fs.readdirSync(store)).toEqual(["all-sessions"])
  })

  it("refuses a file in the way, naming it", () => {
    const project = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(project, ".mm"))
    fs.writeFileSync(path.join(project, ".mm", "sessions"), "")
    expect(() => ensureProjectDir(path.join(project, ".mm", "sessions"))).toThrow(/is a file/)
  })

  it("takes back a .gitignore whose write failed, so that the next write makes it whole", () => {
    const project = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(project, ".mm"))
    const full = {
      ...fs,
      writeSync: () => {
        throw Object.assign(new Error("no space left on device"), { code: "ENOSPC" })
      }
    } as unknown as typeof fs
    ignoreRecords(path.join(project, ".mm"), full)
    expect(fs.readdirSync(path.join(project, ".mm"))).toEqual([])
    ignoreRecords(path.join(project, ".mm"))
    expect(fs.readFileSync(gitignoreOf(project), "utf8")).toBe(RECORDS_GITIGNORE)
  })

  it("a project file written through an older .mm/tmp gives that .mm/ its .gitignore", () => {
    const project = tempDir("mm-projectdir-")
    fs.mkdirSync(path.join(project, ".mm"), { mode: 0o700 })
    writeProjectFileAtomic(path.join(project, "a.txt"), new TextEncoder().encode("a\n"))
    expect(fs.readFileSync(path.join(project, "a.txt"), "utf8")).toBe("a\n")
    expect(fs.readFileSync(gitignoreOf(project), "utf8")).toBe(RECORDS_GITIGNORE)
  })

  it("finds the .mm/ a directory lies in", () => {
    expect(recordsDirOf("/p/.mm/sessions/x")).toBe("/p/.mm")
    expect(recordsDirOf("/p/.mm")).toBe("/p/.mm")
    expect(recordsDirOf("/p/sessions")).toBeUndefined()
  })
})
