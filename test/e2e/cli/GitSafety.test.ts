// A project cloned with a trap in its .git/config: an fsmonitor command, which a plain
// `git status` runs as the user. mm asks git whether the tree is dirty at every turn, outside
// the sandbox; that git must not run it. A `git` first on mm's PATH logs each call and its
// end, so that the test knows mm did ask git, and waits until every git it started is over
// before it looks for the trap's mark.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { runMm, tempProject, withSessions } from "../../support/MmProcess"
import { tempDir } from "../../support/processes"
import { until } from "../../support/until"

const BRANCH = "mm-safety"

const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", ["-c", "user.name=mm test", "-c", "user.email=mm@test", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

/** A project that is a git work tree on BRANCH with a committed file, whose .git/config runs `touch marker` as its fsmonitor. */
const trappedProject = (url: string, marker: string): string => {
  // unconfined: with the sandbox on, mm's git runs in it, where the logging git's own log could
  // not be written (test/lib/Git.test.ts tries the confined git)
  const project = tempProject(withSessions(url, ["sandbox: off"]))
  git(project, "init", "-q", "-b", BRANCH)
  fs.writeFileSync(path.join(project, "README"), "a project\n")
  git(project, "add", "README")
  git(project, "commit", "-q", "-m", "first")
  fs.appendFileSync(path.join(project, ".git", "config"), `[core]\n\tfsmonitor = "touch ${marker}"\n`)
  return project
}

/** A directory holding a `git` that runs the real one and logs `start ARGS` and `end CODE` for each call. */
const loggingGit = (log: string): string => {
  const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim()
  const bin = tempDir("mm-git-bin-")
  fs.writeFileSync(
    path.join(bin, "git"),
    `#!/bin/sh\necho "start $*" >> '${log}'\n'${real}' "$@"\ncode=$?\necho "end $code" >> '${log}'\nexit $code\n`,
    { mode: 0o755 }
  )
  return bin
}

const logLines = (log: string): Array<string> =>
  fs.existsSync(log) ? fs.readFileSync(log, "utf8").split("\n").filter((line) => line !== "") : []

/** Once mm has exited it starts no more git: waits until each git it started has ended. */
const allGitsEnded = (log: string) =>
  until(() => {
    const lines = logLines(log)
    return lines.filter((l) => l.startsWith("start ")).length === lines.filter((l) => l.startsWith("end ")).length
  }, "every git mm started to end")

describe("mm's own git runs nothing a cloned repository's .git/config names", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  const check = async (project: string, marker: string, log: string, requestsBefore: number) => {
    await allGitsEnded(log)
    // mm did ask git about the tree, in the repository whose configuration holds the trap
    expect(logLines(log).filter((line) => /^start .* status /.test(line)).length).toBeGreaterThan(0)
    expect(fs.existsSync(marker)).toBe(false)
    const systems = server.completions().slice(requestsBefore).map((r) => r.body.messages[0].content as string)
    expect(systems.length).toBe(2)
    for (const system of systems) expect(system).toMatch(new RegExp(`^- git branch: ${BRANCH}( \\(.*\\))?$`, "m"))
    // the control: the same repository's trap is real, and a plain git status springs it
    git(project, "status", "--porcelain")
    expect(fs.existsSync(marker)).toBe(true)
  }

  it("mm -p, then mm -p --continue: the fsmonitor never runs; the model still hears the branch", async () => {
    const marker = path.join(tempDir("mm-git-marks-"), "fsmonitor-ran")
    const project = trappedProject(server.url, marker)
    const log = path.join(tempDir("mm-git-log-"), "calls")
    const env = { PATH: `${loggingGit(log)}:${process.env.PATH}` }
    const before = server.completions().length
    server.push({ text: "hello" }, { text: "again to you" })

    const first = await runMm(project, [], ["-p", "hi"], env)
    expect(first.stdout).toBe("hello\n")
    const second = await runMm(project, [], ["-p", "--continue", "again"], env)
    expect(second.stdout).toBe("again to you\n")

    await check(project, marker, log, before)
  })

  it("the terminal, two questions in one run: the fsmonitor never runs; the model still hears the branch", async () => {
    const marker = path.join(tempDir("mm-git-marks-"), "fsmonitor-ran")
    const project = trappedProject(server.url, marker)
    const log = path.join(tempDir("mm-git-log-"), "calls")
    const before = server.completions().length
    server.push({ text: "hello" }, { text: "again to you" })

    const run = await runMm(project, ["hi", "again"], [], { PATH: `${loggingGit(log)}:${process.env.PATH}` })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain("again to you")

    await check(project, marker, log, before)
  })
})
