import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { projectTarget, realPathOf } from "../../src/lib/RealPath"

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-realpath-")))

describe("RealPath", () => {
  it("follows every symbolic link on the way, dangling ones included", () => {
    const root = tempDir()
    const project = path.join(root, "project")
    fs.mkdirSync(path.join(project, "sub"), { recursive: true })
    fs.symlinkSync(path.join(root, "elsewhere"), path.join(project, "sub", "gone"))
    fs.symlinkSync("sub", path.join(project, "link"))
    expect(realPathOf("link/gone/new.txt", project)).toBe(path.join(root, "elsewhere", "new.txt"))
    expect(projectTarget(project, "link/gone/new.txt")).toEqual({
      _tag: "Outside",
      real: path.join(root, "elsewhere", "new.txt"),
      why: `it now leads outside the project: ${path.join(root, "elsewhere", "new.txt")}`
    })
    expect(projectTarget(project, "link/../sub/a.txt")).toEqual({
      _tag: "Inside",
      real: path.join(project, "sub", "a.txt")
    })
  })

  it("treats a file with more than one hard link as outside, and says a loop of links", () => {
    const root = tempDir()
    fs.writeFileSync(path.join(root, "a.txt"), "a")
    fs.linkSync(path.join(root, "a.txt"), path.join(root, "b.txt"))
    expect(projectTarget(root, "a.txt")._tag).toBe("Outside")
    fs.writeFileSync(path.join(root, "c.txt"), "c")
    expect(projectTarget(root, "c.txt")).toEqual({ _tag: "Inside", real: path.join(root, "c.txt") })
    fs.symlinkSync("loop2", path.join(root, "loop1"))
    fs.symlinkSync("loop1", path.join(root, "loop2"))
    expect(() => realPathOf("loop1", root)).toThrow(/too many symbolic links/)
  })
})
