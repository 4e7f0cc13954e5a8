import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { needsApproval } from "../../src/tools/ProjectPaths"
import { builtinRegistry } from "../../src/tools/Registry"
import { GLOB_MAX_PATHS, GREP_MAX_MATCHES } from "../../src/tools/Tool"
import { runTool } from "../../src/tools/Tools"
import { toolServices } from "../support/layers"
import { tempDir } from "../support/processes"
import { toolNamed } from "../support/tools"

const call = (name: string, args: object, cwd: string, maxOutput = 16000) =>
  runTool(toolNamed(name), JSON.stringify(args), { cwd, maxOutput }).pipe(Effect.provide(toolServices()))

const write = (root: string, file: string, text: string | Buffer) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), text)
}

/** A project with a git repository, ignore rules at two levels, a binary file and mm's own folder. */
const project = () => {
  const root = tempDir("mm-search-")
  execFileSync("git", ["init", "-q"], { cwd: root })
  write(root, ".gitignore", "node_modules/\n*.log\ndist\n")
  write(root, "src/app.ts", "export const answer = 42\nconst other = 1\n")
  write(root, "src/lib/util.ts", "  // answer the question\nexport const util = () => 'answer'\n")
  write(root, "src/lib/.gitignore", "generated.ts\n!keep.log\n")
  write(root, "src/lib/generated.ts", "const answer = 'generated'\n")
  write(root, "src/lib/keep.log", "answer kept despite *.log\n")
  write(root, "debug.log", "answer in a log\n")
  write(root, "node_modules/pkg/index.js", "module.exports = 'answer'\n")
  write(root, "dist/out.js", "var answer\n")
  write(root, ".mm/sessions/s.json", "{\"answer\": 1}\n")
  write(root, ".git/answer.txt", "answer\n")
  write(root, "image.bin", Buffer.from([0x61, 0x6e, 0x73, 0x77, 0x65, 0x72, 0, 1, 2]))
  write(root, "README.md", "The Answer is here\n")
  return root
}

describe("grep", () => {
  it.effect("finds matching lines as path:line: text, skipping ignored, binary, .git and .mm files", () =>
    Effect.gen(function*() {
      const root = project()
      const result = yield* call("grep", { pattern: "answer" }, root)
      expect(result.failed).toBe(false)
      expect(result.output.split("\n")).toEqual([
        "src/app.ts:1: export const answer = 42",
        "src/lib/keep.log:1: answer kept despite *.log",
        "src/lib/util.ts:1: // answer the question",
        "src/lib/util.ts:2: export const util = () => 'answer'"
      ])
    }))

  it.effect("a path, a glob filter and ignore_case narrow it; an explicit ignored folder is searched", () =>
    Effect.gen(function*() {
      const root = project()
      expect((yield* call("grep", { pattern: "answer", path: "src/lib", glob: "*.ts" }, root)).output).toBe(
        "src/lib/util.ts:1: // answer the question\nsrc/lib/util.ts:2: export const util = () => 'answer'"
      )
      expect((yield* call("grep", { pattern: "the answer", ignore_case: true }, root)).output).toBe(
        "README.md:1: The Answer is here"
      )
      expect((yield* call("grep", { pattern: "answer", path: "src/app.ts" }, root)).output).toBe(
        "src/app.ts:1: export const answer = 42"
      )
      expect((yield* call("grep", { pattern: "answer", path: "node_modules" }, root)).output).toBe(
        "node_modules/pkg/index.js:1: module.exports = 'answer'"
      )
      expect((yield* call("grep", { pattern: "nothing like this" }, root)).output).toBe("no matches")
    }))

  it.effect("a bad expression or a missing path is a failed result in one line", () =>
    Effect.gen(function*() {
      const root = project()
      const bad = yield* call("grep", { pattern: "(unclosed" }, root)
      expect(bad.failed).toBe(true)
      expect(bad.output).toMatch(/^invalid regular expression: /)
      const missing = yield* call("grep", { pattern: "x", path: "nowhere" }, root)
      expect(missing).toEqual({ output: "no such file or folder: nowhere", failed: true })
      // mm's own folder and git's are never searched, even when named
      expect(yield* call("grep", { pattern: "answer", path: ".mm/sessions" }, root)).toEqual({
        output: ".mm/sessions is inside .mm/, which is never searched",
        failed: true
      })
      expect(yield* call("glob", { pattern: "*", path: ".git" }, root)).toEqual({
        output: ".git is inside .git/, which is never searched",
        failed: true
      })
    }))

  it.effect("stops at the cap with a line saying so", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-search-")
      write(root, "many.txt", "match me\n".repeat(GREP_MAX_MATCHES + 50))
      const lines = (yield* call("grep", { pattern: "match" }, root)).output.split("\n")
      expect(lines).toHaveLength(GREP_MAX_MATCHES + 1)
      expect(lines.at(-1)).toBe(
        `[stopped at ${GREP_MAX_MATCHES} matching lines; narrow the pattern, path or glob to see the others]`
      )
      // and at the output limit, before the count
      const small = (yield* call("grep", { pattern: "match" }, root, 1200)).output.split("\n")
      expect(small.length).toBeLessThan(GREP_MAX_MATCHES)
      expect(small.at(-1)).toMatch(/^\[stopped at \d+ matching lines \(output limit\); narrow/)
    }))
})

describe("glob", () => {
  it.effect("lists matching paths newest first, skipping ignored folders", () =>
    Effect.gen(function*() {
      const root = project()
      const old = new Date(Date.now() - 60_000)
      fs.utimesSync(path.join(root, "src/app.ts"), old, old)
      const result = yield* call("glob", { pattern: "*.ts" }, root)
      expect(result.output.split("\n")).toEqual(["src/lib/util.ts", "src/app.ts"])
      expect((yield* call("glob", { pattern: "**/*.js" }, root)).output).toBe("no files match")
      expect((yield* call("glob", { pattern: "lib/*", path: "src" }, root)).output.split("\n").sort()).toEqual([
        "src/lib/.gitignore",
        "src/lib/keep.log",
        "src/lib/util.ts"
      ])
      expect(yield* call("glob", { pattern: "*", path: "README.md" }, root)).toEqual({
        output: "README.md is a file, not a folder",
        failed: true
      })
    }))

  it.effect("caps the list with a line saying how many there are", () =>
    Effect.gen(function*() {
      const root = tempDir("mm-search-")
      for (let i = 0; i < GLOB_MAX_PATHS + 20; i++) write(root, `f${i}.txt`, "")
      const lines = (yield* call("glob", { pattern: "*.txt" }, root)).output.split("\n")
      expect(lines).toHaveLength(GLOB_MAX_PATHS + 1)
      expect(lines.at(-1)).toBe(
        `[${GLOB_MAX_PATHS} of ${GLOB_MAX_PATHS + 20} files shown, newest first; narrow the pattern or the path]`
      )
    }))
})

describe("the search tools and approval", () => {
  it("are read-only: asked only for a path outside the project", () => {
    const root = tempDir("mm-search-")
    for (const name of ["grep", "glob"]) {
      expect(needsApproval(toolNamed(name).access, { pattern: "x" }, root)).toBe(false)
      expect(needsApproval(toolNamed(name).access, { pattern: "x", path: "src" }, root)).toBe(false)
      expect(needsApproval(toolNamed(name).access, { pattern: "x", path: "" }, root)).toBe(false)
      expect(needsApproval(toolNamed(name).access, { pattern: "x", path: "/etc" }, root)).toBe(true)
      expect(needsApproval(toolNamed(name).access, { pattern: "x", path: ".." }, root)).toBe(true)
    }
  })

  it("are described as searches", () => {
    expect(builtinRegistry.describe("grep", { pattern: "TODO", path: "src", glob: "*.ts" }, "/p")).toEqual({
      title: "TODO in src (*.ts)",
      kind: "search",
      locations: [{ path: "/p/src" }]
    })
    expect(builtinRegistry.describe("glob", { pattern: "**/*.md" })).toEqual({
      title: "**/*.md",
      kind: "search",
      locations: []
    })
  })
})
