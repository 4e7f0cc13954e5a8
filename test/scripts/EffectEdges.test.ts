import * as fs from "node:fs"
import * as path from "node:path"

import ts from "typescript"
import { describe, expect, it } from "vitest"

import { REPO_ROOT } from "../support/paths"

/**
 * Effects run at the edges only (issue 41, item 7): the core is Effects all the way down, and
 * an Effect is run where a Node callback or the process meets the program. This test reads
 * src/ as TypeScript (comments and strings are not code) and names every call that runs one.
 */

/** `runSync`, `runPromise`, `runFork`, `runCallback`, and their `…Exit` forms, of Effect or Runtime. */
const RUNNER = /^run(?:Sync|Promise|Fork|Callback)(?:Exit)?$/

interface Edge {
  /** Under src/. */
  readonly file: string
  readonly why: string
  /**
   * `"Runtime"`: only on a runtime captured once there (`Runtime.runPromise(runtime)`), never
   * `Effect.run…`, which runs outside the program's services and scope.
   */
  readonly on: "any" | "Runtime"
  /** Allowed until its code is redone: the test fails once it runs nothing, so that the entry goes too. */
  readonly temporary?: true
}

const EDGES: ReadonlyArray<Edge> = [
  { file: "Main.ts", why: "the process runs the program", on: "any" },
  { file: "acp/AcpAgent.ts", why: "the ACP SDK's handlers, on the layer's runtime", on: "Runtime" },
  { file: "terminal/Repl.ts", why: "the line editor's Tab completion and Shift-Tab", on: "Runtime" }
]

interface RunCall {
  readonly file: string
  readonly line: number
  /** As written: `Effect.runSync`, `Runtime.runPromise`, or a bare `runFork`. */
  readonly call: string
  readonly qualifier: string | undefined
}

/** Every name of a runner in `text`'s code: calls, property reads, imports. */
const runCallsIn = (file: string, text: string): Array<RunCall> => {
  // most files never name one: they need no parse
  if (!/run(?:Sync|Promise|Fork|Callback)/.test(text)) return []
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS)
  const found: Array<RunCall> = []
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && RUNNER.test(node.text)) {
      const parent = node.parent
      const qualifier = ts.isPropertyAccessExpression(parent) && parent.name === node
        ? parent.expression.getText(source)
        : undefined
      found.push({
        file,
        line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
        call: qualifier === undefined ? node.text : `${qualifier}.${node.text}`,
        qualifier
      })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const allowed = (run: RunCall): boolean => {
  const edge = EDGES.find((e) => e.file === run.file)
  return edge !== undefined && (edge.on === "any" || run.qualifier === "Runtime")
}

/** The runs outside the edges, as `file:line: call`. */
const outsideEdges = (files: ReadonlyArray<{ readonly file: string; readonly text: string }>): Array<string> =>
  files
    .flatMap(({ file, text }) => runCallsIn(file, text))
    .filter((run) => !allowed(run))
    .map((run) => `${run.file}:${run.line}: ${run.call}`)

const SRC = path.join(REPO_ROOT, "src")

const sourceFiles = (): Array<{ file: string; text: string }> =>
  fs
    .readdirSync(SRC, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => ({ file: name.split(path.sep).join("/"), text: fs.readFileSync(path.join(SRC, name), "utf8") }))

describe("Effects run at the edges only", () => {
  it("src/ runs no Effect outside its edges", () => {
    const files = sourceFiles()
    expect(files.length).toBeGreaterThan(100)
    expect(outsideEdges(files)).toEqual([])
  })

  it("a temporary edge still runs something: once it does not, its entry goes", () => {
    const files = sourceFiles()
    for (const edge of EDGES.filter((e) => e.temporary === true)) {
      const text = files.find((f) => f.file === edge.file)?.text ?? ""
      expect(runCallsIn(edge.file, text), `${edge.file} runs no Effect now: remove its entry from EDGES`)
        .not.toEqual([])
    }
  })

  it("reads code only, and tells a captured runtime from a fresh one", () => {
    const text = [
      "import { runFork } from \"effect/Effect\"",
      "// Effect.runSync(in a comment)",
      "/* Effect.runPromise(in a block comment) */",
      "const url = \"https://example.com // Effect.runSync(in a string)\"",
      "const a = Effect.runSync(program)",
      "const b = Runtime.runPromise(runtime)(program)",
      "const c = await Effect.runPromiseExit(program)",
      "const d = runSyncish(program)",
      "const e = `${Effect.runCallback(program)}`"
    ].join("\n")
    expect(runCallsIn("x.ts", text).map((run) => `${run.line}: ${run.call}`)).toEqual([
      "1: runFork",
      "5: Effect.runSync",
      "6: Runtime.runPromise",
      "7: Effect.runPromiseExit",
      "9: Effect.runCallback"
    ])
    // at an edge that holds a runtime, only that runtime runs Effects; elsewhere nothing does
    expect(outsideEdges([{ file: "terminal/Repl.ts", text }, { file: "agent/Agent.ts", text: "Effect.runSync(x)" }]))
      .toEqual([
        "terminal/Repl.ts:1: runFork",
        "terminal/Repl.ts:5: Effect.runSync",
        "terminal/Repl.ts:7: Effect.runPromiseExit",
        "terminal/Repl.ts:9: Effect.runCallback",
        "agent/Agent.ts:1: Effect.runSync"
      ])
  })
})
