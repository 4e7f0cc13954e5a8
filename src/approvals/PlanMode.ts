import type { ToolRecord } from "../tools/ToolRecord"
import { classifyCommand, type ReadCommand } from "./ApprovalScope"
import type { SecretTest } from "./ReadOnlyCommands"

/**
 * Plan mode: the model studies and plans, and changes nothing. What reads runs — the tools whose
 * calls only read (`read_file`, `grep`, `glob`, `todo`, and `task`, whose sub-agents are in plan
 * mode too) and the commands the read-only list accepts (ReadOnlyCommands.ts) — and everything
 * else is refused with a line the model reads. The system prompt tells the model it is planning.
 */

/** What the model reads instead of a call's result when plan mode refuses it. */
export const planRefusal = (what: string): string =>
  `refused in plan mode: ${what}; only reading tools and read-only commands run while planning — finish the plan, and the user will choose when to carry it out`

/** Why plan mode refuses this call, or undefined when it may run (then asked as a read is). */
export const refusedInPlan = (
  tool: ToolRecord,
  input: Record<string, unknown>,
  cwd: string,
  read: ReadCommand,
  secret?: SecretTest
): string | undefined => {
  if (tool.access === "read" || tool.access === "mm") return undefined
  if (tool.access !== "command" || typeof input.command !== "string") {
    return planRefusal(`${tool.name} ${tool.access === "write" ? "writes files" : "may change things"}`)
  }
  const verdict = classifyCommand(read, input.command, cwd, secret)
  return verdict._tag === "ReadOnly" ? undefined : planRefusal(`this command may change things (${verdict.reason})`)
}

/** The system prompt's words while in plan mode. */
export const PLAN_MODE_PROMPT =
  "You are in plan mode: study the project and write a plan with `todo`, changing nothing. Only reading tools and read-only commands run; anything else is refused. End with the plan and what you will do; the user chooses when you carry it out."
