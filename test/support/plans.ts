// A plan the model writes and updates over three `todo` calls, as the fake server scripts it:
// what the plan tests of every façade (terminal, ACP, print) share.
import type { Step } from "./FakeModelServer"

export const PLANS = [
  [
    { content: "read the code", status: "in_progress" },
    { content: "write the fix", status: "pending" },
    { content: "run the tests", status: "pending" }
  ],
  [
    { content: "read the code", status: "completed" },
    { content: "write the fix", status: "in_progress" },
    { content: "run the tests", status: "pending" }
  ],
  [
    { content: "read the code", status: "completed" },
    { content: "write the fix", status: "completed" },
    { content: "run the tests", status: "in_progress", priority: "high" }
  ]
] as const

/** One answer holding one `todo` call with plan `n` (0, 1 or 2). */
export const todoStep = (n: number): Step => ({
  toolCalls: [{ id: `todo_${n + 1}`, name: "todo", arguments: { todos: PLANS[n] } }]
})

const chunk = (delta: object, finish: string | null = null) =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/** The same answers, held until `gate` settles (the test looks at the screen meanwhile). */
export const heldTodoStep = (n: number, gate: Promise<unknown>): Step => ({
  kind: "raw",
  chunks: [
    gate,
    chunk({
      role: "assistant",
      tool_calls: [{
        index: 0,
        id: `todo_${n + 1}`,
        type: "function",
        function: { name: "todo", arguments: JSON.stringify({ todos: PLANS[n] }) }
      }]
    }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n"
  ]
})

/** A text answer held until `gate` settles. */
export const heldText = (text: string, gate: Promise<unknown>): Step => ({
  kind: "raw",
  chunks: [gate, chunk({ role: "assistant", content: text }), chunk({}, "stop"), "data: [DONE]\n\n"]
})

/** A promise and what settles it. */
export const gate = (): { readonly held: Promise<void>; readonly release: () => void } => {
  let release = () => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  return { held, release }
}
