import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Fiber from "effect/Fiber"

import { needsApproval } from "../../src/tools/ProjectPaths"
import { builtinRegistry, builtinTools } from "../../src/tools/Registry"
import { runTool } from "../../src/tools/Tools"
import { truncateOutput } from "../../src/tools/Truncate"
import { toolServices } from "../support/layers"
import { isAlive, tempDir, waitUntilGone } from "../support/processes"
import { toolNamed } from "../support/tools"

const context = (cwd = tempDir("mm-tools-"), maxOutput = 16000) => ({ cwd, maxOutput })

const call = (name: string, args: unknown, ctx = context()) =>
  runTool(toolNamed(name), typeof args === "string" ? args : JSON.stringify(args), ctx).pipe(
    Effect.provide(toolServices())
  )

const waitForFile = (file: string, ms = 5000) =>
  Effect.gen(function*() {
    const deadline = Date.now() + ms
    while (Date.now() < deadline) {
      if (fs.existsSync(file) && fs.readFileSync(file, "utf8").trim() !== "") {
        return fs.readFileSync(file, "utf8").trim()
      }
      yield* Effect.sleep(Duration.millis(20))
    }
    throw new Error(`${file} never appeared`)
  })

const toolSpecs = builtinRegistry.specs
/** A call's arguments as its tool decodes them, or why not. */
const parseToolArguments = (name: string, raw: string) =>
  Either.map(toolNamed(name).prepare(raw), (prepared) => prepared.input)

describe("tool specs", () => {
  it("offers exactly the built-in tools with their parameters", () => {
    expect(toolSpecs.map((spec) => spec.name)).toEqual([
      "bash",
      "read_file",
      "write_file",
      "edit_file",
      "grep",
      "glob",
      "todo",
      "task"
    ])
    const required = Object.fromEntries(toolSpecs.map((spec) => [spec.name, spec.parameters.required]))
    expect(required).toEqual({
      bash: ["command"],
      read_file: ["path"],
      write_file: ["path", "content"],
      edit_file: ["path", "old", "new"],
      grep: ["pattern"],
      glob: ["pattern"],
      todo: ["todos"],
      task: ["description", "prompt"]
    })
    const properties = Object.fromEntries(
      toolSpecs.map((spec) => [spec.name, Object.keys(spec.parameters.properties as object)])
    )
    expect(properties).toEqual({
      bash: ["command", "timeout"],
      read_file: ["path", "offset", "limit"],
      write_file: ["path", "content"],
      edit_file: ["path", "old", "new"],
      grep: ["pattern", "path", "glob", "ignore_case"],
      glob: ["pattern", "path"],
      todo: ["todos"],
      task: ["description", "prompt"]
    })
  })

  it("asks approval for the tools that change things", () => {
    expect(builtinTools.map((tool) => [tool.name, needsApproval(tool.access)])).toEqual([
      ["bash", true],
      ["read_file", false],
      ["write_file", true],
      ["edit_file", true],
      ["grep", false],
      ["glob", false],
      ["todo", false],
      // a sub-agent's own calls are asked, each under its name
      ["task", false]
    ])
  })
})

describe("a call's arguments", () => {
  it("accepts good arguments and treats null optionals as absent", () => {
    expect(parseToolArguments("bash", "{\"command\":\"ls\",\"timeout\":null}")).toEqual(Either.right({ command: "ls" }))
    expect(parseToolArguments("read_file", "{\"path\":\"a\",\"offset\":3,\"extra\":1}")).toEqual(
      Either.right({ path: "a", offset: 3 })
    )
  })

  it("gives one-line reasons", () => {
    const reason = (name: string, raw: string) =>
      Either.merge(Either.flip(Either.map(parseToolArguments(name, raw), () => "")))
    expect(reason("bash", "{not json")).toMatch(/^arguments are not valid JSON/)
    expect(reason("bash", "[1]")).toBe("arguments must be a JSON object")
    expect(reason("bash", "{}")).toBe("missing required parameter \"command\"")
    expect(reason("bash", "{\"command\": 3}")).toBe("parameter \"command\": expected string, got 3")
    expect(reason("bash", "{\"command\": \"ls\", \"timeout\": -1}")).toMatch(
      /^parameter "timeout": expected a number of seconds above 0/
    )
    expect(reason("read_file", "{\"path\": \"a\", \"offset\": 0}")).toMatch(
      /^parameter "offset": expected a whole number/
    )
    expect(reason("edit_file", "{\"path\": \"a\"}")).toBe(
      "missing required parameter \"old\"; missing required parameter \"new\""
    )
    for (const text of [reason("bash", "{not json"), reason("edit_file", "{\"path\": \"a\"}")]) {
      expect(text).not.toContain("\n")
    }
  })
})

describe("truncateOutput", () => {
  it("leaves short text alone", () => {
    expect(truncateOutput("hello", 10)).toBe("hello")
  })

  it("keeps head and tail with a marker counting the cut", () => {
    const text = "H".repeat(5000) + "M".repeat(90000) + "T".repeat(5000)
    const cut = truncateOutput(text, 1000)
    expect(cut.length).toBeLessThanOrEqual(1000)
    expect(cut.startsWith("HHHH")).toBe(true)
    expect(cut.endsWith("TTTT")).toBe(true)
    const marker = /\n… \[(\d+) characters cut\] …\n/.exec(cut)
    expect(marker).not.toBeNull()
    expect(cut.length - marker![0].length + Number(marker![1])).toBe(text.length)
  })

  it("cuts at line ends when it can", () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i}`).join("\n")
    const cut = truncateOutput(text, 500)
    const [head, tail] = cut.split(/\n… \[\d+ characters cut\] …\n/)
    expect(head.split("\n").every((line) => /^line \d+$/.test(line))).toBe(true)
    expect(tail.split("\n").every((line) => /^line \d+$/.test(line))).toBe(true)
    expect(tail.endsWith("line 999")).toBe(true)
  })
})

describe("bash", () => {
  it.effect("runs in the project directory and reports the exit code and output", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      const result = yield* call("bash", { command: "pwd; echo out; echo err >&2" }, context(cwd))
      expect(result.failed).toBe(false)
      expect(result.output).toBe(`exit code 0\n${fs.realpathSync(cwd)}\nout\nerr\n`)
    }))

  it.effect("a non-zero exit is a failed result", () =>
    Effect.gen(function*() {
      const result = yield* call("bash", { command: "echo nope; exit 3" })
      expect(result).toEqual({ output: "exit code 3\nnope\n", failed: true })
    }))

  it.effect("says when there is no output, and never reads stdin", () =>
    Effect.gen(function*() {
      expect(yield* call("bash", { command: "true" })).toEqual({ output: "exit code 0\n(no output)", failed: false })
      const read = yield* call("bash", { command: "cat; echo done", timeout: 5 })
      expect(read).toEqual({ output: "exit code 0\ndone\n", failed: false })
    }))

  it.live("kills the whole process group on timeout", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const result = yield* call("bash", { command: "sleep 30 & echo $!; sleep 30", timeout: 1 })
      expect(Date.now() - started).toBeLessThan(10_000)
      expect(result.failed).toBe(true)
      const [status, pid] = result.output.split("\n")
      expect(status).toBe("killed after 1 s (timeout)")
      expect(yield* Effect.promise(() => waitUntilGone(Number(pid)))).toBe(true)
    }))

  it.live("interrupting a running command kills its process group at once", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      const fiber = yield* Effect.fork(call("bash", { command: "sleep 30 & echo $! > child.pid; wait" }, context(cwd)))
      const pid = Number(yield* waitForFile(path.join(cwd, "child.pid")))
      expect(isAlive(pid)).toBe(true)
      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      expect(Date.now() - started).toBeLessThan(2000)
      expect(yield* Effect.promise(() => waitUntilGone(pid))).toBe(true)
    }))

  it.live("does not wait for background processes that keep the output open", () =>
    Effect.gen(function*() {
      const started = Date.now()
      const result = yield* call("bash", { command: "sleep 30 & echo $!" })
      expect(Date.now() - started).toBeLessThan(5000)
      expect(result.failed).toBe(false)
      expect(result.output).toMatch(/^exit code 0\n\d+\n$/)
      const pid = Number(result.output.split("\n")[1])
      expect(isAlive(pid)).toBe(true)
      process.kill(pid, "SIGKILL")
    }))

  it.effect("cuts a huge output to maxOutput, keeping head and tail", () =>
    Effect.gen(function*() {
      const command = "echo FIRST; head -c 1000000 /dev/zero | tr '\\0' x; echo; echo LAST"
      const result = yield* call("bash", { command }, context(tempDir("mm-tools-"), 2000))
      expect(result.failed).toBe(false)
      expect(result.output.length).toBeLessThanOrEqual(2000)
      expect(result.output.startsWith("exit code 0\nFIRST\nxxx")).toBe(true)
      expect(result.output.endsWith("xxx\nLAST\n")).toBe(true)
      const cut = /… \[(\d+) characters cut\] …/.exec(result.output)
      expect(Number(cut?.[1])).toBeGreaterThan(990_000)
    }))
})

describe("read_file", () => {
  const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n") + "\n"

  it.effect("reads a whole file as it is", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      fs.writeFileSync(path.join(cwd, "a.txt"), lines)
      expect(yield* call("read_file", { path: "a.txt" }, context(cwd))).toEqual({
        output: lines.trimEnd(),
        failed: false
      })
      expect(yield* call("read_file", { path: path.join(cwd, "a.txt") }, context("/"))).toEqual({
        output: lines.trimEnd(),
        failed: false
      })
    }))

  it.effect("offset is the 1-based first line, limit the number of lines", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      fs.writeFileSync(path.join(cwd, "a.txt"), lines)
      const middle = yield* call("read_file", { path: "a.txt", offset: 3, limit: 2 }, context(cwd))
      expect(middle).toEqual({
        output: "line 3\nline 4\n[lines 3-4 of 10 in a.txt; read on with offset 5]",
        failed: false
      })
      const end = yield* call("read_file", { path: "a.txt", offset: 9 }, context(cwd))
      expect(end.output).toBe("line 9\nline 10\n[lines 9-10 of 10 in a.txt; that is the end of the file]")
      const past = yield* call("read_file", { path: "a.txt", offset: 11 }, context(cwd))
      expect(past).toEqual({ output: "offset 11 is past the end of a.txt (10 lines)", failed: true })
    }))

  it.effect("stops at the output limit with a way to read on", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      fs.writeFileSync(path.join(cwd, "big.txt"), Array.from({ length: 5000 }, (_, i) => `row ${i + 1}`).join("\n"))
      const result = yield* call("read_file", { path: "big.txt" }, context(cwd, 1000))
      expect(result.output.length).toBeLessThanOrEqual(1000)
      expect(result.output).not.toContain("characters cut")
      expect(result.output.startsWith("row 1\nrow 2\n")).toBe(true)
      expect(result.output).toMatch(/\n\[lines 1-(\d+) of 5000 in big.txt; read on with offset (\d+)\]$/)
    }))

  it.effect("missing files, directories and binary files are failed results", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      fs.mkdirSync(path.join(cwd, "dir"))
      fs.writeFileSync(path.join(cwd, "bin"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0x00, 0x01]))
      const ctx = context(cwd)
      expect(yield* call("read_file", { path: "nope.txt" }, ctx)).toEqual({
        output: "no such file: nope.txt",
        failed: true
      })
      expect(yield* call("read_file", { path: "dir" }, ctx)).toMatchObject({
        output: expect.stringMatching(/^dir is a directory/),
        failed: true
      })
      expect(yield* call("read_file", { path: "bin" }, ctx)).toMatchObject({
        output: expect.stringMatching(/^bin looks binary/),
        failed: true
      })
    }))

  it.effect("an empty file says so", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      fs.writeFileSync(path.join(cwd, "empty"), "")
      expect(yield* call("read_file", { path: "empty" }, context(cwd))).toEqual({
        output: "(empty file)",
        failed: false
      })
    }))
})

describe("write_file", () => {
  it.effect("creates parent directories and reports what it wrote", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      const ctx = context(cwd)
      const created = yield* call("write_file", { path: "a/b/c.txt", content: "one\ntwo\n" }, ctx)
      expect(created).toEqual({ output: "created a/b/c.txt: 8 bytes, 2 lines", failed: false })
      expect(fs.readFileSync(path.join(cwd, "a/b/c.txt"), "utf8")).toBe("one\ntwo\n")
      const again = yield* call("write_file", { path: "a/b/c.txt", content: "é" }, ctx)
      expect(again).toEqual({ output: "overwrote a/b/c.txt: 2 bytes, 1 line", failed: false })
    }))

  it.effect("a directory in the way is a failed result", () =>
    Effect.gen(function*() {
      const cwd = tempDir("mm-tools-")
      fs.mkdirSync(path.join(cwd, "d"))
      const result = yield* call("write_file", { path: "d", content: "x" }, context(cwd))
      expect(result).toEqual({ output: "d is a directory, not a file", failed: true })
    }))
})

describe("edit_file", () => {
  const setup = (text: string) => {
    const cwd = tempDir("mm-tools-")
    fs.writeFileSync(path.join(cwd, "f.ts"), text)
    return { ctx: context(cwd), file: path.join(cwd, "f.ts") }
  }

  it.effect("replaces exactly one occurrence", () =>
    Effect.gen(function*() {
      const { ctx, file } = setup("a\nconst x = 1\nb\n")
      const result = yield* call(
        "edit_file",
        { path: "f.ts", old: "const x = 1", new: "const x = 2\nconst y = $&" },
        ctx
      )
      expect(result).toEqual({ output: "edited f.ts at line 2: 1 line replaced by 2 lines", failed: false })
      expect(fs.readFileSync(file, "utf8")).toBe("a\nconst x = 2\nconst y = $&\nb\n")
    }))

  it.effect("counts lines as write_file does: a trailing newline is not a line", () =>
    Effect.gen(function*() {
      const { ctx } = setup("a\nb\nc\n")
      const result = yield* call("edit_file", { path: "f.ts", old: "b\nc\n", new: "B\n" }, ctx)
      expect(result).toEqual({ output: "edited f.ts at line 2: 2 lines replaced by 1 line", failed: false })
    }))

  it.effect("zero occurrences is a failed result", () =>
    Effect.gen(function*() {
      const { ctx, file } = setup("a\nb\n")
      const result = yield* call("edit_file", { path: "f.ts", old: "c", new: "d" }, ctx)
      expect(result.failed).toBe(true)
      expect(result.output).toMatch(/^old text not found in f.ts/)
      expect(fs.readFileSync(file, "utf8")).toBe("a\nb\n")
    }))

  it.effect("several occurrences is a failed result", () =>
    Effect.gen(function*() {
      const { ctx, file } = setup("x = 1\nx = 1\n")
      const result = yield* call("edit_file", { path: "f.ts", old: "x = 1", new: "x = 2" }, ctx)
      expect(result).toEqual({
        output: "old text occurs 2 times in f.ts; give more context so it is unique",
        failed: true
      })
      expect(fs.readFileSync(file, "utf8")).toBe("x = 1\nx = 1\n")
    }))

  it.effect("matches a file with CRLF line ends", () =>
    Effect.gen(function*() {
      const { ctx, file } = setup("a\r\nb\r\nc\r\n")
      const result = yield* call("edit_file", { path: "f.ts", old: "a\nb", new: "A\nB" }, ctx)
      expect(result.failed).toBe(false)
      expect(fs.readFileSync(file, "utf8")).toBe("A\r\nB\r\nc\r\n")
    }))

  it.effect("a missing file is a failed result", () =>
    Effect.gen(function*() {
      const result = yield* call("edit_file", { path: "nope.ts", old: "a", new: "b" })
      expect(result).toEqual({ output: "no such file: nope.ts", failed: true })
    }))
})

describe("bad arguments", () => {
  it.effect("are failed results, never failures", () =>
    Effect.gen(function*() {
      const notJson = yield* call("bash", "{command: ls")
      expect(notJson.failed).toBe(true)
      expect(notJson.output).toMatch(/^invalid arguments for bash: arguments are not valid JSON/)
      expect(yield* call("write_file", { path: "x" })).toEqual({
        output: "invalid arguments for write_file: missing required parameter \"content\"",
        failed: true
      })
      expect(yield* call("read_file", { path: 42 })).toEqual({
        output: "invalid arguments for read_file: parameter \"path\": expected string, got 42",
        failed: true
      })
    }))
})

describe("how a call is described", () => {
  const describeCall = builtinRegistry.describe
  it("titles, kinds and locations", () => {
    expect(describeCall("bash", { command: "ls -la" })).toEqual({ title: "ls -la", kind: "execute", locations: [] })
    expect(describeCall("bash", { command: "cd src\nnpm test" }).title).toBe("cd src …")
    expect(describeCall("bash", { command: "x".repeat(500) }).title.length).toBeLessThanOrEqual(120)
    expect(describeCall("read_file", { path: "src/a.ts" })).toEqual({
      title: "src/a.ts",
      kind: "read",
      locations: [{ path: "src/a.ts" }]
    })
    expect(describeCall("read_file", { path: "src/a.ts", offset: 10, limit: 5 }, "/p")).toEqual({
      title: "src/a.ts (lines 10-14)",
      kind: "read",
      locations: [{ path: "/p/src/a.ts", line: 10 }]
    })
    expect(describeCall("write_file", { path: "b.md", content: "" }, "/p")).toEqual({
      title: "b.md",
      kind: "edit",
      locations: [{ path: "/p/b.md" }]
    })
    expect(describeCall("edit_file", { path: "/abs/c.ts", old: "a", new: "b" }, "/p").locations).toEqual([
      { path: "/abs/c.ts" }
    ])
    expect(describeCall("bash", undefined)).toEqual({ title: "bash", kind: "execute", locations: [] })
    expect(describeCall("mystery", { path: "x" })).toEqual({ title: "mystery", kind: "other", locations: [] })
  })
})
