// mm's own `git status` runs outside the sandbox, as the user: a repository's configuration
// must not make it run anything. Each case builds a repository whose configuration names a
// command that leaves a marker file, asks gitDirty, checks that no marker exists, then runs
// a plain `git status` in the same repository and checks that the marker does appear: the
// case really would have run its command, so the first check cannot pass for want of a trap.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { gitDirty } from "../../src/lib/Git"
import { tempDir } from "../support/processes"

const git = (cwd: string, ...args: Array<string>): string =>
  execFileSync("git", ["-c", "user.name=mm test", "-c", "user.email=mm@test", "-c", "commit.gpgsign=false", ...args], {
    cwd,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })

/** A shell command, as git's configuration takes it, that creates `marker` and passes its input through. */
const touching = (marker: string) => `sh -c 'touch ${marker}; cat'`

/** A repository with one committed file `a.txt` and `attributes` as its committed .gitattributes. */
const repository = (attributes: string): string => {
  const root = tempDir("mm-git-")
  git(root, "init", "-q")
  fs.writeFileSync(path.join(root, "a.txt"), "hello\n")
  fs.writeFileSync(path.join(root, ".gitattributes"), attributes)
  git(root, "add", ".")
  git(root, "commit", "-q", "-m", "first")
  return root
}

/**
 * `a.txt` given other text of the same length and another modification time: git can no
 * longer trust what its index recorded of the file and must read it again, through its filter.
 */
const touchTracked = (root: string): void => {
  const file = path.join(root, "a.txt")
  fs.writeFileSync(file, "world\n")
  fs.utimesSync(file, new Date(2001, 0, 1), new Date(2001, 0, 1))
}

/** Where a trap leaves its mark: outside the work tree, so that the mark changes nothing git sees. */
const markerIn = (dir: string, name: string) => path.join(dir, name)

/** Runs a plain `git status`, as a user would, with git's own defaults (the control). */
const plainStatus = (root: string): void => {
  git(root, "status", "--porcelain")
}

describe("gitDirty runs no program the repository names", () => {
  it("an fsmonitor and a filter driver in .git/config: dirty, and neither runs; plain git status runs both", async () => {
    const root = repository("* filter=evil\n")
    const marks = tempDir("mm-git-marks-")
    const fsmonitor = markerIn(marks, "fsmonitor-ran")
    const filter = markerIn(marks, "filter-ran")
    git(root, "config", "core.fsmonitor", `touch ${fsmonitor}`)
    git(root, "config", "filter.evil.clean", touching(filter))
    touchTracked(root)

    expect(await gitDirty(root)).toBe(true)
    expect(fs.existsSync(fsmonitor)).toBe(false)
    expect(fs.existsSync(filter)).toBe(false)

    plainStatus(root)
    expect(fs.existsSync(fsmonitor)).toBe(true)
    expect(fs.existsSync(filter)).toBe(true)
  })

  it("a filter driver whose name holds dots, defined in a file of the work tree that .git/config includes", async () => {
    const root = repository("*.txt filter=evil.v2.x\n")
    const filter = markerIn(tempDir("mm-git-marks-"), "filter-ran")
    fs.writeFileSync(path.join(root, "extra.gitconfig"), `[filter "evil.v2.x"]\n\tclean = "${touching(filter)}"\n`)
    git(root, "config", "include.path", "../extra.gitconfig")
    touchTracked(root)

    expect(await gitDirty(root)).toBe(true)
    expect(fs.existsSync(filter)).toBe(false)

    plainStatus(root)
    expect(fs.existsSync(filter)).toBe(true)
  })

  it("a filter driver with an empty name, applied by `filter=` with no value", async () => {
    const root = repository("* filter=\n")
    const filter = markerIn(tempDir("mm-git-marks-"), "filter-ran")
    git(root, "config", "filter..clean", touching(filter))
    touchTracked(root)

    expect(await gitDirty(root)).toBe(true)
    expect(fs.existsSync(filter)).toBe(false)

    plainStatus(root)
    expect(fs.existsSync(filter)).toBe(true)
  })

  it("a filter driver whose name holds `=`, which no -c option can name: not asked, the answer unknown", async () => {
    const root = repository("* filter=a=b\n")
    const filter = markerIn(tempDir("mm-git-marks-"), "filter-ran")
    git(root, "config", "filter.a=b.process", touching(filter))
    git(root, "config", "filter.a=b.clean", touching(filter))
    touchTracked(root)

    expect(await gitDirty(root)).toBe(undefined)
    expect(fs.existsSync(filter)).toBe(false)

    plainStatus(root)
    expect(fs.existsSync(filter)).toBe(true)
  })

  it("hooks where core.hooksPath points: none runs; plain git status, writing its index, runs one", async () => {
    const root = repository("")
    const hooks = tempDir("mm-git-hooks-")
    const marks = tempDir("mm-git-marks-")
    for (const hook of ["post-index-change", "fsmonitor-watchman", "reference-transaction", "pre-commit"]) {
      fs.writeFileSync(path.join(hooks, hook), `#!/bin/sh\ntouch ${markerIn(marks, hook)}\n`, { mode: 0o755 })
    }
    git(root, "config", "core.hooksPath", hooks)
    touchTracked(root)

    expect(await gitDirty(root)).toBe(true)
    expect(fs.readdirSync(marks)).toEqual([])

    // a tracked file whose time changed and text did not: git status must refresh its index entry
    // and write the index (a changed file alone is written only when its time is racy)
    const later = new Date(Date.now() + 10_000)
    fs.utimesSync(path.join(root, ".gitattributes"), later, later)
    plainStatus(root)
    expect(fs.readdirSync(marks)).toContain("post-index-change")
  })

  it("a partial clone, which would fetch a missing object through its remote's upload-pack: not asked", async () => {
    const origin = tempDir("mm-git-origin-")
    git(origin, "init", "-q")
    const lines = Array.from({ length: 8 }, (_, i) => `line ${i} of a file long enough to be compared\n`).join("")
    fs.writeFileSync(path.join(origin, "a.txt"), lines)
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "first")
    git(origin, "config", "uploadpack.allowFilter", "true")
    const root = path.join(tempDir("mm-git-clone-"), "clone")
    git(origin, "clone", "-q", "--no-checkout", "--filter=blob:none", `file://${origin}`, root)
    // the index names a.txt's blob, which the clone lacks; a.txt moved to b.txt with a line more
    git(root, "read-tree", "HEAD")
    git(root, "rm", "-q", "--cached", "a.txt")
    fs.writeFileSync(path.join(root, "b.txt"), `${lines}one more\n`)
    git(root, "add", "b.txt")
    const fetched = markerIn(tempDir("mm-git-marks-"), "upload-pack-ran")
    git(root, "config", "remote.origin.uploadpack", `touch ${fetched}; git-upload-pack`)

    expect(await gitDirty(root)).toBe(undefined)
    expect(fs.existsSync(fetched)).toBe(false)

    plainStatus(root)
    expect(fs.existsSync(fetched)).toBe(true)
  })

  it("a clean tree is clean, a changed one dirty, and no repository unknown", async () => {
    const root = repository("")
    expect(await gitDirty(root)).toBe(false)
    touchTracked(root)
    expect(await gitDirty(root)).toBe(true)
    expect(await gitDirty(tempDir("mm-nogit-"))).toBe(undefined)
  })
})
