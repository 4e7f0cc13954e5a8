// grep and glob search in a worker thread (issue 44): a model's pattern that would backtrack
// for days holds that thread only, which is terminated when its heartbeat stops, on a cancel
// and at a crash, each time with one line the model can act on.
import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"

import { searchWorkers, tuneSearches } from "../../src/tools/SearchRunner"
import { runTool } from "../../src/tools/Tools"
import { toolServices } from "../support/layers"
import { tempDir } from "../support/processes"
import { toolNamed } from "../support/tools"
import { until } from "../support/until"

const call = (name: string, args: object, cwd: string) =>
  runTool(toolNamed(name), JSON.stringify(args), { cwd, maxOutput: 16000 }).pipe(Effect.provide(toolServices()))

const write = (root: string, file: string, text: string) => {
  fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
  fs.writeFileSync(path.join(root, file), text)
}

/** The pattern of the issue: nested quantifiers that backtrack exponentially on a line they fail to match. */
const CATASTROPHIC = "^(a+)+$"
/** A glob picomatch turns into nested lazy stars: polynomial backtracking, for ever on a long name. */
const PATHOLOGICAL_GLOB = "*a".repeat(12) + "*b"
const LONG_NAME = "a".repeat(100)

/** A project with a plain file and one whose line sends CATASTROPHIC backtracking. */
const project = () => {
  const root = tempDir("mm-search-worker-")
  write(root, "ok.txt", "answer\n")
  write(root, "src/x.txt", `first line\n${"a".repeat(40)}b\n`)
  return root
}

/** Runs `effect` with the search settings changed, putting them back after. */
const tuned = <A, E, R>(changes: Parameters<typeof tuneSearches>[0], effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(Effect.sync(() => tuneSearches(changes)), () => effect, (restore) => Effect.sync(restore))

const STUCK_GREP = "grep stopped: the pattern ran over 1 s on src/x.txt without finishing " +
  "(likely catastrophic backtracking); simplify it"

describe("a pattern that would run for ever", () => {
  it.effect("grep over a folder is stopped in one line, and the next grep runs", () =>
    Effect.gen(function*() {
      const root = project()
      expect(yield* call("grep", { pattern: CATASTROPHIC }, root)).toEqual({ output: STUCK_GREP, failed: true })
      expect(yield* call("grep", { pattern: "answer" }, root)).toEqual({ output: "ok.txt:1: answer", failed: false })
    }))

  it.effect("grep with the file as its path is stopped in one line", () =>
    Effect.gen(function*() {
      const root = project()
      expect(yield* call("grep", { pattern: CATASTROPHIC, path: "src/x.txt" }, root)).toEqual({
        output: STUCK_GREP,
        failed: true
      })
      // an ordinary pattern on the same line is answered at once
      expect((yield* call("grep", { pattern: "^a+b$", path: "src/x.txt" }, root)).output).toBe(
        `src/x.txt:2: ${"a".repeat(40)}b`
      )
    }))

  it.effect("glob with a glob that backtracks on a long name is stopped, and so is grep's glob filter", () =>
    Effect.gen(function*() {
      const root = project()
      write(root, `names/${LONG_NAME}`, "answer\n")
      expect(yield* call("glob", { pattern: PATHOLOGICAL_GLOB }, root)).toEqual({
        output: `glob stopped: the pattern ran over 1 s on the path names/${LONG_NAME} without finishing ` +
          "(likely catastrophic backtracking); simplify it",
        failed: true
      })
      expect(yield* call("grep", { pattern: "answer", glob: PATHOLOGICAL_GLOB }, root)).toEqual({
        output: `grep stopped: the glob filter ran over 1 s on the path names/${LONG_NAME} without finishing ` +
          "(likely catastrophic backtracking); simplify it",
        failed: true
      })
    }))
})

describe("the worker's life", () => {
  it.effect("cancelling a running grep terminates its worker; the next grep runs in another", () =>
    tuned(
      { stallMs: 600_000 },
      Effect.gen(function*() {
        const root = project()
        const fiber = yield* Effect.fork(call("grep", { pattern: CATASTROPHIC }, root))
        yield* Effect.promise(() => until(() => searchWorkers().begun === 1, "the search to begin"))
        const exit = yield* Fiber.interrupt(fiber)
        expect(Exit.isInterrupted(exit)).toBe(true)
        yield* Effect.promise(() =>
          until(() => searchWorkers().alive === searchWorkers().idle, "the cancelled search's worker to end")
        )
        expect(yield* call("grep", { pattern: "answer" }, root)).toEqual({ output: "ok.txt:1: answer", failed: false })
      })
    ))

  it.effect("one idle worker is kept between searches, and reused", () =>
    Effect.gen(function*() {
      const root = project()
      yield* call("grep", { pattern: "answer" }, root)
      yield* call("glob", { pattern: "*.txt" }, root)
      expect(searchWorkers()).toEqual({ alive: 1, idle: 1, begun: 0 })
      // two at once: the second search starts a second worker, which ends once both are over
      const both = yield* Effect.all([
        call("grep", { pattern: "answer" }, root),
        call("glob", { pattern: "ok*" }, root)
      ], {
        concurrency: 2
      })
      expect(both.map((result) => result.output)).toEqual(["ok.txt:1: answer", "ok.txt"])
      yield* Effect.promise(() => until(() => searchWorkers().alive === 1, "the second worker to end"))
      expect(searchWorkers().idle).toBe(1)
    }))

  it.effect("a worker that crashes is a failed result in one line, and the next search starts a new one", () =>
    Effect.gen(function*() {
      const root = project()
      const crashing = path.join(tempDir("mm-search-crash-"), "crash.cjs")
      fs.writeFileSync(
        crashing,
        "require('node:worker_threads').parentPort.on('message', () => { throw new Error('the worker broke') })\n"
      )
      const exiting = path.join(path.dirname(crashing), "exit.cjs")
      fs.writeFileSync(exiting, "require('node:worker_threads').parentPort.on('message', () => process.exit(3))\n")
      expect(yield* tuned({ workerFile: crashing }, call("grep", { pattern: "answer" }, root))).toEqual({
        output: "grep failed: the search worker stopped: the worker broke",
        failed: true
      })
      expect(yield* tuned({ workerFile: exiting }, call("glob", { pattern: "*" }, root))).toEqual({
        output: "glob failed: the search worker stopped (exit code 3)",
        failed: true
      })
      const missing = yield* tuned({ workerFile: path.join(root, "nowhere.cjs") }, call("grep", { pattern: "x" }, root))
      expect(missing.failed).toBe(true)
      expect(missing.output).toMatch(/^grep failed: the search worker stopped: Cannot find module/)
      expect(missing.output).not.toContain("\n")
      expect(yield* call("grep", { pattern: "answer" }, root)).toEqual({ output: "ok.txt:1: answer", failed: false })
    }))
})

describe("what reaches the worker", () => {
  it.effect("a test of secret files not made by secretFilesOf cannot, and the call says so in one line", () =>
    Effect.gen(function*() {
      const root = project()
      const custom = runTool(toolNamed("glob"), JSON.stringify({ pattern: "*" }), {
        cwd: root,
        maxOutput: 16000,
        secretFile: () => false
      }).pipe(Effect.provide(toolServices()))
      expect(yield* custom).toEqual({
        output: "glob failed: its test of the files that look secret was not made by secretFilesOf, " +
          "and cannot reach the search worker",
        failed: true
      })
    }))
})

describe("the time limit", () => {
  it.effect("a search past it ends with what it found and a line saying so", () =>
    tuned(
      { totalMs: 0 },
      Effect.gen(function*() {
        const root = project()
        const grep = yield* call("grep", { pattern: "answer|line" }, root)
        expect(grep.failed).toBe(false)
        expect(grep.output.split("\n").at(-1)).toMatch(
          /^\[stopped at the 0 s limit, \d+ files? searched; narrow the path or glob\]$/
        )
        const glob = yield* call("glob", { pattern: "*.txt" }, root)
        expect(glob.failed).toBe(false)
        expect(glob.output.split("\n").at(-1)).toMatch(
          /^\[stopped at the 0 s limit, \d+ files? looked at; narrow the pattern or the path\]$/
        )
      })
    ))
})
