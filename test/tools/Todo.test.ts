import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import type { PlanEntry } from "../../src/domain/Plan"
import { FileAccessDisk } from "../../src/tools/FileAccess"
import { TODO_MAX_ENTRIES, todoTool } from "../../src/tools/Todo"
import type { ToolContext } from "../../src/tools/Tool"
import { tempDir } from "../support/processes"

/** A call's arguments as `todo` decodes them, or the line refusing them. */
const decoded = (args: unknown) =>
  Either.map(todoTool.prepare(typeof args === "string" ? args : JSON.stringify(args)), (call) => call.input)

/** Runs a call with `args`; `kept` receives the plans it sets (no `setPlan` when undefined). */
const run = (args: unknown, kept?: Array<ReadonlyArray<PlanEntry>>) =>
  Effect.gen(function*() {
    const prepared = todoTool.prepare(JSON.stringify(args))
    if (Either.isLeft(prepared)) throw new Error(prepared.left)
    const ctx: ToolContext = {
      cwd: tempDir("mm-todo-"),
      maxOutput: 16000,
      ...(kept === undefined ? {} : { setPlan: (entries) => Effect.sync(() => void kept.push(entries)) })
    }
    return yield* prepared.right.run(ctx).pipe(Effect.provide(FileAccessDisk))
  })

describe("todo's arguments", () => {
  it("takes the whole list; each entry's text on one line", () => {
    expect(decoded({
      todos: [
        { content: "  read\n the   code ", status: "completed" },
        { content: "fix it", status: "in_progress", priority: "high" },
        { content: "test it", status: "in_progress" }
      ]
    })).toEqual(Either.right({
      todos: [
        { content: "read the code", status: "completed" },
        { content: "fix it", status: "in_progress", priority: "high" },
        { content: "test it", status: "in_progress" }
      ]
    }))
  })

  it("refuses, in one line, an entry without text, an unknown status or priority, a missing list, and a list too long", () => {
    const refusal = (args: unknown) =>
      Either.getLeft(decoded(args)).pipe((left) => left._tag === "Some" ? left.value : "")
    expect(refusal({ todos: [{ content: "  ", status: "pending" }] })).toBe(
      "parameter \"todos.0.content\": expected the entry's text, got an empty string"
    )
    expect(refusal({ todos: [{ content: "x", status: "done" }] })).toMatch(/^parameter "todos\.0\.status": /)
    expect(refusal({ todos: [{ content: "x", status: "pending", priority: "urgent" }] })).toMatch(
      /^parameter "todos\.0\.priority": /
    )
    expect(refusal({})).toBe("missing required parameter \"todos\"")
    const many = Array.from({ length: TODO_MAX_ENTRIES + 1 }, (_, i) => ({ content: `step ${i}`, status: "pending" }))
    expect(refusal({ todos: many })).toBe(
      `parameter "todos": expected at most ${TODO_MAX_ENTRIES} entries, got ${
        TODO_MAX_ENTRIES + 1
      }: keep the plan short`
    )
    for (const args of [{ todos: [{ content: "", status: "pending" }] }, { todos: "a list" }]) {
      expect(refusal(args)).not.toContain("\n")
    }
  })
})

describe("a todo call", () => {
  it.effect("keeps the plan and tells the model what it holds", () =>
    Effect.gen(function*() {
      const kept: Array<ReadonlyArray<PlanEntry>> = []
      const todos = [{ content: "a", status: "completed" }, { content: "b", status: "pending" }]
      expect(yield* run({ todos }, kept)).toEqual({ output: "plan kept: 2 items, 1 done", failed: false })
      expect(yield* run({ todos: [] }, kept)).toEqual({ output: "plan cleared", failed: false })
      expect(kept).toEqual([todos, []])
    }))

  it.effect("fails where no plan can be kept", () =>
    Effect.gen(function*() {
      expect(yield* run({ todos: [] })).toEqual({ output: "no plan can be kept here", failed: true })
    }))

  it("is named by what its list holds, even a partial one", () => {
    expect(todoTool.describe({ todos: [{ content: "a", status: "completed" }] }).title).toBe("1 item, 1 done")
    expect(todoTool.describe({ todos: [null, 3, { status: "completed" }] }).title).toBe("3 items, 1 done")
    expect(todoTool.describe({ todos: "?" }).title).toBe("")
    expect(todoTool.describe(undefined).title).toBe("")
  })
})
