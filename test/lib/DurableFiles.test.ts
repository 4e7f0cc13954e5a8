import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterEach, describe, expect, it } from "@effect/vitest"

import {
  isTempName,
  projectTempDir,
  STALE_TEMP_MS,
  sweepLeftTemps,
  writeFileAtomic,
  writeProjectFileAtomic
} from "../../src/lib/DurableFiles"
import { deadPid } from "../support/leftTemps"
import { tempDir } from "../support/processes"
import { until } from "../support/until"

/** A project with its `.mm/` (0700, as mm makes it), and `a.txt`. */
const project = (): string => {
  const dir = tempDir("mm-durable-")
  fs.mkdirSync(path.join(dir, ".mm"), { mode: 0o700 })
  fs.writeFileSync(path.join(dir, "a.txt"), "old\n")
  return dir
}

/** Every temporary file of mm anywhere under `dir`, `.mm/` included. */
const tempsUnder = (dir: string): Array<string> =>
  (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((name) => isTempName(path.basename(name)))

/** The names that come and go in `dir` (inotify's rename events), as they happen. */
const watch = (dir: string) => {
  const names: Array<string> = []
  const watcher = fs.watch(dir, (_event, name) => {
    if (name !== null) names.push(String(name))
  })
  return { names, close: () => watcher.close() }
}
const watchers: Array<{ close: () => void }> = []
const watched = (dir: string) => {
  const one = watch(dir)
  watchers.push(one)
  return one
}
afterEach(() => watchers.splice(0).forEach((one) => one.close()))

/** A temporary file of writer `pid` in `dir`, last written `ageMs` ago. */
const leftTemp = (dir: string, name: string, pid: number, ageMs = 0): string => {
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, `.${name}.${pid}.0badf00d.tmp`)
  fs.writeFileSync(file, "half")
  const when = new Date(Date.now() - ageMs)
  fs.utimesSync(file, when, when)
  return file
}

/** Makes `dir` immutable (nothing in it can be created, renamed or removed, even by root), or says why not. */
const immutable = (dir: string): string | undefined => {
  try {
    execFileSync("chattr", ["+i", dir], { stdio: "pipe" })
    return undefined
  } catch (cause) {
    return String((cause as { stderr?: Buffer }).stderr ?? cause).trim()
  }
}

describe("where a project file's temporary file goes", () => {
  it("under the project's .mm/tmp/ (made 0700 inside an existing .mm/), for a file at any depth", () => {
    const dir = project()
    fs.mkdirSync(path.join(dir, "src", "deep"), { recursive: true })
    expect(projectTempDir(path.join(dir, "src", "deep"))).toBe(path.join(dir, ".mm", "tmp"))
    expect(fs.statSync(path.join(dir, ".mm", "tmp")).mode & 0o777).toBe(0o700)
    expect(projectTempDir(dir)).toBe(path.join(dir, ".mm", "tmp"))
  })

  it("beside the file when there is no .mm/ above it, which is never made for a temporary file", () => {
    const dir = tempDir("mm-durable-")
    expect(projectTempDir(dir)).toBeUndefined()
    writeProjectFileAtomic(path.join(dir, "a.txt"), Buffer.from("new\n"))
    expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("new\n")
    expect(fs.readdirSync(dir)).toEqual(["a.txt"])
  })

  it("beside the file when .mm/ is a link, someone else can write it, or the directory sets its files' group", () => {
    const linked = tempDir("mm-durable-")
    fs.symlinkSync(tempDir("mm-durable-elsewhere-"), path.join(linked, ".mm"))
    expect(projectTempDir(linked)).toBeUndefined()
    const shared = project()
    fs.chmodSync(path.join(shared, ".mm"), 0o770)
    expect(projectTempDir(shared)).toBeUndefined()
    expect(fs.existsSync(path.join(shared, ".mm", "tmp"))).toBe(false)
    const grouped = project()
    fs.mkdirSync(path.join(grouped, "team"))
    fs.chmodSync(path.join(grouped, "team"), 0o2775)
    expect(projectTempDir(path.join(grouped, "team"))).toBeUndefined()
    expect(projectTempDir(grouped)).toBe(path.join(grouped, ".mm", "tmp"))
  })

  it("beside the file when .mm/ is on another file system than the file's directory", async () => {
    const dir = project()
    const mounted = path.join(dir, "mounted")
    fs.mkdirSync(mounted)
    try {
      execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mounted], { stdio: "pipe" })
    } catch (cause) {
      console.log(
        `skipped: cannot mount a tmpfs here (${String((cause as { stderr?: Buffer }).stderr ?? cause).trim()})`
      )
      return
    }
    try {
      expect(projectTempDir(mounted)).toBeUndefined()
      const seen = watched(mounted)
      writeProjectFileAtomic(path.join(mounted, "b.txt"), Buffer.from("on tmpfs\n"))
      await until(() => seen.names.includes("b.txt"), "b.txt to be renamed into place")
      // its temporary file was made beside it, and is gone
      expect(seen.names.some(isTempName)).toBe(true)
      expect(fs.readdirSync(mounted)).toEqual(["b.txt"])
      expect(fs.readFileSync(path.join(mounted, "b.txt"), "utf8")).toBe("on tmpfs\n")
    } finally {
      execFileSync("umount", [mounted])
    }
  })
})

describe("writeProjectFileAtomic", () => {
  it("makes its temporary file under .mm/tmp/, none beside, and replaces the file keeping its mode and links", async () => {
    const dir = project()
    fs.chmodSync(path.join(dir, "a.txt"), 0o751)
    fs.symlinkSync("a.txt", path.join(dir, "link.txt"))
    fs.mkdirSync(path.join(dir, ".mm", "tmp"), { mode: 0o700 })
    const inTmp = watched(path.join(dir, ".mm", "tmp"))
    const beside = watched(dir)
    writeProjectFileAtomic(path.join(dir, "link.txt"), Buffer.from("new\n"))
    await until(() => beside.names.includes("a.txt"), "a.txt to be renamed into place")
    await until(
      () => inTmp.names.some((name) => /^\.a\.txt\.\d+\.[0-9a-f]{8}\.tmp$/.test(name)),
      "a temporary in .mm/tmp"
    )
    expect(beside.names.filter(isTempName)).toEqual([])
    expect(fs.lstatSync(path.join(dir, "link.txt")).isSymbolicLink()).toBe(true)
    expect(fs.readFileSync(path.join(dir, "a.txt"), "utf8")).toBe("new\n")
    expect(fs.statSync(path.join(dir, "a.txt")).mode & 0o777).toBe(0o751)
    expect(fs.readdirSync(path.join(dir, ".mm", "tmp"))).toEqual([])
    // a new file gets 0666 less the umask, as a file written beside it would
    writeProjectFileAtomic(path.join(dir, "new.txt"), Buffer.from("fresh\n"))
    expect(fs.statSync(path.join(dir, "new.txt")).mode & 0o777).toBe(0o666 & ~process.umask())
    expect(tempsUnder(dir)).toEqual([])
  })

  it("a rename that fails (the target is a directory) leaves no temporary file anywhere", async () => {
    const dir = project()
    fs.mkdirSync(path.join(dir, "taken"))
    fs.mkdirSync(path.join(dir, ".mm", "tmp"), { mode: 0o700 })
    const inTmp = watched(path.join(dir, ".mm", "tmp"))
    expect(() => writeProjectFileAtomic(path.join(dir, "taken"), Buffer.from("x\n"))).toThrow(/EISDIR/)
    // the temporary was made under .mm/tmp and removed again
    await until(() => inTmp.names.some(isTempName), "a temporary made in .mm/tmp")
    expect(tempsUnder(dir)).toEqual([])
    expect(fs.statSync(path.join(dir, "taken")).isDirectory()).toBe(true)
  })

  it("a directory nothing can be written in leaves the file as it was and no temporary file anywhere", async () => {
    const dir = project()
    const locked = path.join(dir, "locked")
    fs.mkdirSync(locked)
    fs.writeFileSync(path.join(locked, "c.txt"), "kept\n")
    fs.mkdirSync(path.join(dir, ".mm", "tmp"), { mode: 0o700 })
    const refused = immutable(locked)
    if (refused !== undefined) {
      console.log(`skipped: cannot make a directory immutable here (${refused})`)
      return
    }
    try {
      const inTmp = watched(path.join(dir, ".mm", "tmp"))
      expect(() => writeProjectFileAtomic(path.join(locked, "c.txt"), Buffer.from("new\n"))).toThrow(/EPERM/)
      await until(() => inTmp.names.some(isTempName), "a temporary made in .mm/tmp")
      expect(fs.readFileSync(path.join(locked, "c.txt"), "utf8")).toBe("kept\n")
      expect(tempsUnder(dir)).toEqual([])
    } finally {
      execFileSync("chattr", ["-i", locked])
    }
  })

  it("at its first use of a .mm/tmp/, removes what dead writers left there and keeps a live writer's", () => {
    const dir = project()
    const tmp = path.join(dir, ".mm", "tmp")
    const dead = leftTemp(tmp, "x.txt", deadPid())
    const live = leftTemp(tmp, "y.txt", process.ppid)
    writeProjectFileAtomic(path.join(dir, "a.txt"), Buffer.from("new\n"))
    expect(fs.existsSync(dead)).toBe(false)
    expect(fs.existsSync(live)).toBe(true)
  })

  it("writeFileAtomic still makes its temporary file beside the file, .mm/ or not", async () => {
    const dir = project()
    const beside = watched(dir)
    writeFileAtomic(path.join(dir, "a.txt"), Buffer.from("new\n"), 0o600)
    await until(() => beside.names.includes("a.txt"), "a.txt to be renamed into place")
    expect(beside.names.some(isTempName)).toBe(true)
    expect(fs.existsSync(path.join(dir, ".mm", "tmp"))).toBe(false)
  })
})

describe("sweepLeftTemps", () => {
  it("removes the temporary files of writers that are gone, or stale, and keeps those being written", async () => {
    const dir = tempDir("mm-sweep-")
    const dead = leftTemp(dir, "a.txt", deadPid())
    const live = leftTemp(dir, "b.txt", process.ppid)
    const stale = leftTemp(dir, "c.txt", process.ppid, STALE_TEMP_MS + 60_000)
    const mine = leftTemp(dir, "d.txt", process.pid)
    // this pid's, but from before this process started: an earlier process had the same pid
    const earlierMine = leftTemp(dir, "e.txt", process.pid, performance.now() + 60_000)
    fs.writeFileSync(path.join(dir, "not-a-temp.tmp"), "user's")
    fs.mkdirSync(path.join(dir, `.dir.${deadPid()}.0badf00d.tmp`))
    expect(await sweepLeftTemps(dir)).toBe(3)
    expect([dead, live, stale, mine, earlierMine].map((file) => fs.existsSync(file))).toEqual([
      false,
      true,
      false,
      true,
      false
    ])
    expect(fs.existsSync(path.join(dir, "not-a-temp.tmp"))).toBe(true)
    expect(await sweepLeftTemps(path.join(dir, "missing"))).toBe(0)
  })
})
