// todo: the model's plan, which the user sees. The model gives the whole list each time; the
// core keeps it in the session and shows it (ctx.setPlan, agent/ToolCalls.ts). Rules of the
// list: every entry has text (one line: runs of white space become one space); an empty list
// clears the plan; more than one entry may be in progress (work done side by side); at most
// TODO_MAX_ENTRIES entries, so that the checklist fits a screen.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { type PlanEntry, PlanEntrySchema } from "../domain/Plan"
import type { ToolContext, ToolResult } from "./Tool"
import { failure } from "./Tool"
import { defineTool } from "./ToolRecord"

/** The most entries a plan may have. */
export const TODO_MAX_ENTRIES = 50

const Entry = Schema.Struct({
  ...PlanEntrySchema.fields,
  content: Schema.String.pipe(
    Schema.filter((s) => s.trim() !== "" || "expected the entry's text, got an empty string")
  )
})

/**
 * What the model is told, kept short (it is sent with every request): an enum says its type,
 * and an entry's unknown keys are ignored rather than refused.
 */
const TODOS_JSON_SCHEMA = {
  type: "array",
  items: {
    type: "object",
    required: ["content", "status"],
    properties: {
      content: { type: "string" },
      status: { enum: ["pending", "in_progress", "completed"] },
      priority: { enum: ["high", "medium", "low"] }
    }
  }
}

const TodoArgsSchema = Schema.Struct({
  todos: Schema.Array(Entry).pipe(
    Schema.filter(
      (list) =>
        list.length <= TODO_MAX_ENTRIES ||
        `expected at most ${TODO_MAX_ENTRIES} entries, got ${list.length}: keep the plan short`,
      { jsonSchema: TODOS_JSON_SCHEMA }
    )
  )
})

type TodoArgs = typeof TodoArgsSchema.Type

/** Each entry's text on one line. */
const tidy = (args: TodoArgs): TodoArgs => ({
  todos: args.todos.map((entry) => ({ ...entry, content: entry.content.trim().replace(/\s+/g, " ") }))
})

/** `5 items, 2 done`: what the list holds, said to the model and shown as the call's title. */
export const todoCount = (entries: ReadonlyArray<PlanEntry>): string => {
  const done = entries.filter((entry) => entry.status === "completed").length
  return `${entries.length} item${entries.length === 1 ? "" : "s"}, ${done} done`
}

const todo = (args: TodoArgs, ctx: ToolContext): Effect.Effect<ToolResult> =>
  ctx.setPlan === undefined
    ? Effect.succeed(failure("no plan can be kept here"))
    : Effect.as(ctx.setPlan(args.todos), {
      output: args.todos.length === 0 ? "plan cleared" : `plan kept: ${todoCount(args.todos)}`,
      failed: false
    })

export const todoTool = defineTool({
  name: "todo",
  description: "Your plan of several steps, shown to the user: send the whole list at each change.",
  parameters: TodoArgsSchema,
  access: "mm",
  kind: "think",
  tidy,
  describe: (args) => {
    // a stored call's arguments may be anything: only entries that are objects are read
    const todos = args?.todos
    const entries = Array.isArray(todos)
      ? todos.map((entry): PlanEntry =>
        typeof entry === "object" && entry !== null ? entry : { content: "", status: "pending" }
      )
      : undefined
    return { title: entries === undefined ? "" : todoCount(entries), locations: [] }
  },
  run: todo
})
