import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"

import { needsApproval } from "../../src/tools/ProjectPaths"
import { runTool } from "../../src/tools/Tools"
import { toolServices } from "../support/layers"
import { tempDir } from "../support/processes"
import { toolNamed } from "../support/tools"

const call = (name: string, args: unknown, cwd: string, maxOutput = 16000) =>
  runTool(toolNamed(name), JSON.stringify(args), { cwd, maxOutput }).pipe(Effect.provide(toolServices()))

describe("read_file reads regular files only, and no more than it can return", () => {
  it.effect("/dev/zero and /dev/urandom are refused at once", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      expect(yield* call("read_file", { path: "/dev/zero" }, cwd)).toEqual({
        output: "/dev/zero is a character device; the file tools read regular files only",
        failed: true
      })
      expect((yield* call("read_file", { path: "/dev/urandom" }, cwd)).failed).toBe(true)
    }))

  it.live("a FIFO is refused without blocking", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      execFileSync("mkfifo", [path.join(cwd, "pipe")])
      const result = yield* call("read_file", { path: "pipe" }, cwd).pipe(Effect.timeout(Duration.seconds(2)))
      expect(result).toEqual({
        output: "pipe is a named pipe (FIFO); the file tools read regular files only",
        failed: true
      })
      const edit = yield* call("edit_file", { path: "pipe", old: "a", new: "b" }, cwd).pipe(
        Effect.timeout(Duration.seconds(2))
      )
      expect(edit.failed).toBe(true)
    }))

  it.effect("grep and glob given a FIFO, a device or a socket as their path refuse it in one line", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      execFileSync("mkfifo", [path.join(cwd, "pipe")])
      fs.symlinkSync("/dev/zero", path.join(cwd, "zero"))
      expect(yield* call("grep", { pattern: "x", path: "pipe" }, cwd)).toEqual({
        output: "pipe is a named pipe (FIFO); the file tools read regular files only",
        failed: true
      })
      expect(yield* call("grep", { pattern: "x", path: "zero" }, cwd)).toEqual({
        output: "zero is a character device; the file tools read regular files only",
        failed: true
      })
      expect(yield* call("glob", { pattern: "*", path: "pipe" }, cwd)).toEqual({
        output: "pipe is a named pipe (FIFO), not a folder",
        failed: true
      })
    }))

  it.effect("a .gitignore that is a FIFO, or a link to /dev/zero or /dev/tty, is left out and the search answers", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      fs.mkdirSync(path.join(cwd, "a"))
      fs.mkdirSync(path.join(cwd, "b"))
      execFileSync("mkfifo", [path.join(cwd, "a", ".gitignore")])
      fs.symlinkSync("/dev/zero", path.join(cwd, ".gitignore"))
      fs.symlinkSync("/dev/tty", path.join(cwd, "b", ".gitignore"))
      fs.writeFileSync(path.join(cwd, "a", "x.txt"), "needle here\n")
      fs.writeFileSync(path.join(cwd, "b", "y.txt"), "needle there\n")
      expect(yield* call("grep", { pattern: "needle" }, cwd)).toEqual({
        output: "a/x.txt:1: needle here\nb/y.txt:1: needle there",
        failed: false
      })
      const found = yield* call("glob", { pattern: "*.txt" }, cwd)
      expect(found.output.split("\n").sort()).toEqual(["a/x.txt", "b/y.txt"])
    }))

  it.effect("write_file never replaces a FIFO, or what a link leads to that is not a regular file", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const elsewhere = tempDir("mm-tools-hard-")
      execFileSync("mkfifo", [path.join(cwd, "pipe")])
      execFileSync("mkfifo", [path.join(elsewhere, "far-pipe")])
      fs.symlinkSync(path.join(elsewhere, "far-pipe"), path.join(cwd, "log"))
      expect(yield* call("write_file", { path: "pipe", content: "x" }, cwd)).toEqual({
        output: "pipe is a named pipe (FIFO); the file tools write regular files only",
        failed: true
      })
      expect(yield* call("write_file", { path: "log", content: "x" }, cwd)).toEqual({
        output: "log is a named pipe (FIFO); the file tools write regular files only",
        failed: true
      })
      expect(fs.statSync(path.join(cwd, "pipe")).isFIFO()).toBe(true)
      expect(fs.statSync(path.join(elsewhere, "far-pipe")).isFIFO()).toBe(true)
    }))

  it.effect("write_file and edit_file work on a name of 255 bytes, whose temporary name would be too long", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const name = `${"é".repeat(100)}${"n".repeat(51)}.txt`
      expect(Buffer.byteLength(name)).toBe(255)
      expect((yield* call("write_file", { path: name, content: "one\n" }, cwd)).failed).toBe(false)
      expect((yield* call("edit_file", { path: name, old: "one", new: "two" }, cwd)).failed).toBe(false)
      expect(fs.readFileSync(path.join(cwd, name), "utf8")).toBe("two\n")
      expect(fs.readdirSync(cwd)).toEqual([name])
    }))

  it.effect("a symbolic link to a device is refused like the device", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      fs.symlinkSync("/dev/zero", path.join(cwd, "zero"))
      expect(yield* call("read_file", { path: "zero" }, cwd)).toEqual({
        output: "zero is a character device; the file tools read regular files only",
        failed: true
      })
    }))

  it.effect("one enormous line comes back as its start, within the output limit", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      fs.writeFileSync(path.join(cwd, "min.js"), "x".repeat(3_000_000))
      const result = yield* call("read_file", { path: "min.js" }, cwd, 2000)
      expect(result.failed).toBe(false)
      expect(result.output.length).toBeLessThanOrEqual(2000)
      expect(result.output).toMatch(/^x+\n\[line 1 is 3000000 characters long; only its start is shown\]$/)
    }))

  it.effect("lines are counted across reads, multi-byte characters split between them included", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const lines = Array.from({ length: 40_000 }, (_, i) => `ligne ${i + 1} é ✓`)
      fs.writeFileSync(path.join(cwd, "long.txt"), lines.join("\n"))
      const result = yield* call("read_file", { path: "long.txt", offset: 39_999 }, cwd)
      expect(result.output).toBe(
        "ligne 39999 é ✓\nligne 40000 é ✓\n[lines 39999-40000 of 40000 in long.txt; that is the end of the file]"
      )
    }))

  it.live("an interrupted read ends at once", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      fs.writeFileSync(path.join(cwd, "big.txt"), "line\n".repeat(6_000_000))
      const fiber = yield* Effect.fork(call("read_file", { path: "big.txt", offset: 5_999_999 }, cwd))
      yield* Effect.sleep(Duration.millis(30))
      yield* Fiber.interrupt(fiber)
      const exit = yield* Fiber.await(fiber)
      expect(exit._tag).toBe("Failure")
    }))
})

describe("read_file outside the project", () => {
  it("needs approval under permissions: ask; inside it does not", () => {
    const cwd = tempDir("mm-tools-hard-")
    fs.writeFileSync(path.join(cwd, "in.txt"), "x")
    fs.symlinkSync("/etc/hostname", path.join(cwd, "link"))
    expect(needsApproval("read", { path: "in.txt" }, cwd)).toBe(false)
    expect(needsApproval("read", { path: path.join(cwd, "in.txt") }, cwd)).toBe(false)
    expect(needsApproval("read", { path: "sub/../in.txt" }, cwd)).toBe(false)
    expect(needsApproval("read", { path: "/etc/passwd" }, cwd)).toBe(true)
    expect(needsApproval("read", { path: "../x" }, cwd)).toBe(true)
    expect(needsApproval("read", { path: "link" }, cwd)).toBe(true)
    expect(needsApproval("read", { path: "..x" }, cwd)).toBe(false)
  })
})

describe("edit_file changes only the bytes it replaces", () => {
  it.effect("a Latin-1 file is refused in one line, its bytes unchanged", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const bytes = Buffer.from("caf\xe9 = 1\nna\xefve = 2\n", "latin1")
      fs.writeFileSync(path.join(cwd, "x.txt"), bytes)
      const result = yield* call("edit_file", { path: "x.txt", old: "= 2", new: "= 3" }, cwd)
      expect(result).toEqual({ output: "x.txt is not UTF-8 text; edit_file changes only UTF-8 files", failed: true })
      expect(fs.readFileSync(path.join(cwd, "x.txt")).equals(bytes)).toBe(true)
    }))

  it.effect("write_file over a file that is not UTF-8 says what it replaced", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      fs.writeFileSync(path.join(cwd, "l.txt"), Buffer.from("caf\xe9\n", "latin1"))
      const result = yield* call("write_file", { path: "l.txt", content: "café\n" }, cwd)
      expect(result).toEqual({
        output: "overwrote l.txt: 6 bytes, 1 line (it replaced 5 bytes that were not UTF-8 text)",
        failed: false
      })
    }))

  it.effect("write_file keeps the mode, follows a link, and removes what a killed write of the file left", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      fs.writeFileSync(path.join(cwd, "run.sh"), "echo old\n", { mode: 0o750 })
      fs.symlinkSync("run.sh", path.join(cwd, "link.sh"))
      // a writer that died (no such pid) left its temporary file; another file's is not touched
      const left = path.join(cwd, ".run.sh.999999999.0badf00d.tmp")
      const other = path.join(cwd, ".other.txt.999999999.0badf00d.tmp")
      fs.writeFileSync(left, "half")
      fs.writeFileSync(other, "half")
      const result = yield* call("write_file", { path: "link.sh", content: "echo new\n" }, cwd)
      expect(result.failed).toBe(false)
      expect(fs.lstatSync(path.join(cwd, "link.sh")).isSymbolicLink()).toBe(true)
      expect(fs.readFileSync(path.join(cwd, "run.sh"), "utf8")).toBe("echo new\n")
      expect(fs.statSync(path.join(cwd, "run.sh")).mode & 0o777).toBe(0o750)
      expect(fs.existsSync(left)).toBe(false)
      expect(fs.existsSync(other)).toBe(true)
      expect(fs.readdirSync(cwd).filter((name) => name.endsWith(".tmp"))).toEqual([".other.txt.999999999.0badf00d.tmp"])
    }))

  it.effect("a file with NUL bytes is refused, its bytes unchanged", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const bytes = Buffer.from("a = 1\n\0\nb = 2\n")
      fs.writeFileSync(path.join(cwd, "n.txt"), bytes)
      const result = yield* call("edit_file", { path: "n.txt", old: "b = 2", new: "b = 3" }, cwd)
      expect(result).toEqual({ output: "n.txt holds NUL bytes; edit_file changes only UTF-8 text files", failed: true })
      expect(fs.readFileSync(path.join(cwd, "n.txt")).equals(bytes)).toBe(true)
    }))

  it.effect("a CRLF file keeps CRLF, its BOM and its missing final newline", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const file = path.join(cwd, "w.txt")
      fs.writeFileSync(file, "\ufeffone\r\ntwo\r\nlast")
      const result = yield* call("edit_file", { path: "w.txt", old: "two\nlast\n", new: "TWO\nLAST\n" }, cwd)
      expect(result.failed).toBe(false)
      expect(fs.readFileSync(file, "utf8")).toBe("\ufeffone\r\nTWO\r\nLAST")
    }))

  it.effect("a missing final newline stays missing when the model's copy of the last line has one", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-hard-")
      const file = path.join(cwd, "e.txt")
      fs.writeFileSync(file, "a\nend")
      const result = yield* call("edit_file", { path: "e.txt", old: "end\n", new: "END\n" }, cwd)
      expect(result.failed).toBe(false)
      expect(fs.readFileSync(file, "utf8")).toBe("a\nEND")
    }))
})

describe("write_file and edit_file leave no temporary file", () => {
  /** Every temporary file of mm anywhere under `dir`, `.mm/` included. */
  const tempsUnder = (dir: string): Array<string> =>
    (fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((name) => /\.\d+\.[0-9a-f]{8}\.tmp$/.test(name))

  /** A project with the `.mm/` mm makes when it keeps sessions. */
  const withRecords = () => {
    const cwd = tempDir("mm-tools-litter-")
    fs.mkdirSync(path.join(cwd, ".mm"), { mode: 0o700 })
    return cwd
  }

  it.effect("on success: their temporary files went through .mm/tmp/, which is left empty", () =>
    Effect.gen(function*() {
      const cwd = withRecords()
      expect((yield* call("write_file", { path: "src/a.txt", content: "one\ntwo\n" }, cwd)).failed).toBe(false)
      expect((yield* call("edit_file", { path: "src/a.txt", old: "two", new: "TWO" }, cwd)).failed).toBe(false)
      expect(fs.readFileSync(path.join(cwd, "src/a.txt"), "utf8")).toBe("one\nTWO\n")
      expect(fs.readdirSync(path.join(cwd, ".mm", "tmp"))).toEqual([])
      expect(tempsUnder(cwd)).toEqual([])
    }))

  it.effect("on failure (a directory nothing can be written in): the file as it was, no temporary file", () =>
    Effect.gen(function*() {
      const cwd = withRecords()
      const locked = path.join(cwd, "locked")
      fs.mkdirSync(locked)
      fs.writeFileSync(path.join(locked, "c.txt"), "kept\n")
      try {
        execFileSync("chattr", ["+i", locked], { stdio: "pipe" })
      } catch (cause) {
        console.log(`skipped: cannot make a directory immutable here (${String(cause).trim()})`)
        return
      }
      try {
        const written = yield* call("write_file", { path: "locked/c.txt", content: "new\n" }, cwd)
        const edited = yield* call("edit_file", { path: "locked/c.txt", old: "kept", new: "gone" }, cwd)
        expect([written.failed, edited.failed]).toEqual([true, true])
        expect(written.output).toMatch(/not permitted|permission denied/i)
        expect(fs.readFileSync(path.join(locked, "c.txt"), "utf8")).toBe("kept\n")
        // the temporary files were made (under .mm/tmp/) and removed again
        expect(fs.readdirSync(path.join(cwd, ".mm", "tmp"))).toEqual([])
        expect(tempsUnder(cwd)).toEqual([])
      } finally {
        execFileSync("chattr", ["-i", locked])
      }
    }))
})
