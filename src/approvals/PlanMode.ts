import type { ToolRecord } from "../tools/ToolRecord"
import { classifyCommand, type ReadCommand } from "./ApprovalScope"
import type { SecretTest } from "./ReadOnlyCommands"

/**
 * Plan mode: the model studies the project and plans, and changes nothing. A call of a tool that
 * only reads (`access: "read"`: `read_file`, `grep`, `glob`) or works inside mm alone (`mm`:
 * `todo`, and `task`, whose sub-agents plan too) goes on to the approval rule as in any mode, so
 * a read outside the project is still asked; a command runs unasked when the read-only list passes it
 * (ReadOnlyCommands.ts: known programs, paths inside the project, nothing that looks secret). A
 * fetch (`network`: `web_fetch`, a GET that only reads) goes on too, and is asked per domain as in
 * `ask`.
 * Everything else is refused before anyone is asked, with a line the model reads. The system
 * prompt says the model is planning while, and only while, the mode is on.
 */

/** What the model reads instead of a call's result when plan mode refuses it. */
export const planRefusal = (why: string): string =>
  `refused in plan mode: ${why}. While planning only reading tools and read-only commands run; ` +
  "finish the plan, and the user will choose when to carry it out"

/** Why a call that does not only read is refused, by what its tool reaches. */
const reachOf = (tool: ToolRecord): string => {
  switch (tool.access) {
    case "write":
      return `${tool.name} changes files`
    case "outside":
      return `${tool.name} is run by another program, which mm cannot check`
    default:
      return `${tool.name} may change things`
  }
}

/** Why plan mode refuses this call, or undefined when it may go on (to be asked as in any mode). */
export const refusedInPlan = (
  tool: ToolRecord,
  input: Record<string, unknown>,
  cwd: string,
  read: ReadCommand,
  secret?: SecretTest
): string | undefined => {
  if (tool.access === "read" || tool.access === "mm" || tool.access === "network") return undefined
  if (tool.access !== "command" || typeof input.command !== "string") return planRefusal(reachOf(tool))
  const verdict = classifyCommand(read, input.command, cwd, secret)
  return verdict._tag === "ReadOnly"
    ? undefined
    : planRefusal(`this command is not one mm knows to only read (${verdict.reason})`)
}

/**
 * The system prompt's words while in plan mode. They name no tool: the tools' own descriptions
 * say which one keeps a plan (tools/Registry.ts is the one list of their names).
 */
export const PLAN_MODE_PROMPT = [
  "# Plan mode",
  "You are in plan mode: plan, do not do. Read the code, search, run read-only commands, and work out what to change.",
  "Do not change anything: edits, writes and other commands are refused while plan mode is on.",
  "If a tool keeps a plan, write the plan there; end your answer with the plan in short: numbered steps, each naming the files it changes.",
  "The user reads the plan and decides when you carry it out."
].join("\n")

/**
 * What the terminal sends when the user leaves plan mode to carry the plan out (the mode they
 * chose is already in force when the model reads it).
 */
export const CARRY_OUT_PLAN =
  "Plan mode is over: I approve the plan. Carry it out now, step by step, keeping the plan up to date as you go."
