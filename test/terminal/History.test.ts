import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import { makeHistory } from "../../src/terminal/History"
import { tempDir } from "../support/processes"

describe("the line history file", () => {
  it("is written itself: a link there is not followed, and the file it names is left as it was", () => {
    const dir = tempDir("mm-history-")
    const outside = path.join(dir, "notes.txt")
    fs.writeFileSync(outside, "line one\nline two\n")
    fs.mkdirSync(path.join(dir, ".mm"), { mode: 0o700 })
    fs.symlinkSync(outside, path.join(dir, ".mm", "history"))
    const history = makeHistory(path.join(dir, ".mm", "history"))
    history.add("hello there")
    expect(history.entries()).toContain("hello there")
    expect(fs.readFileSync(outside, "utf8")).toBe("line one\nline two\n")
  })

  it("a FIFO there never blocks typing: the line is kept in memory", () => {
    const dir = tempDir("mm-history-")
    fs.mkdirSync(path.join(dir, ".mm"), { mode: 0o700 })
    execFileSync("mkfifo", [path.join(dir, ".mm", "history")])
    const history = makeHistory(path.join(dir, ".mm", "history"))
    history.add("first")
    history.add("second")
    expect(history.entries()).toEqual(["first", "second"])
  })

  it("a regular file is rewritten with mode 0600", () => {
    const dir = tempDir("mm-history-")
    const file = path.join(dir, ".mm", "history")
    const history = makeHistory(file)
    history.add("a")
    history.add("b")
    expect(fs.readFileSync(file, "utf8")).toBe("\"a\"\n\"b\"\n")
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
  })
})
