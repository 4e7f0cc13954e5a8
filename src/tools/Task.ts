// task: hands a self-contained task to a sub-agent, which works in a fresh context of its own
// (its conversation saved as a session of its own) and answers; its answer is the result. The
// sub-agent itself is the core's (agent/SubAgents.ts), reached through the call's context.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { squashed } from "../lib/OneLine"
import { failure, type SubTask, type ToolContext } from "./Tool"
import { NonBlankText, optional, withoutEmptyText } from "./ToolArguments"
import { defineTool, type ToolRecord } from "./ToolRecord"

/** The sub-agent a task goes to when the model names none. */
export const GENERAL_AGENT = "general"

/** A declared sub-agent as the model is told of it. */
export interface AgentOffer {
  readonly name: string
  readonly description: string
}

const BASE = "Run a sub-agent on a self-contained task: it sees nothing of this conversation and returns its final " +
  "answer. Calls in one answer run in parallel."

/** The tool's description: what it does, then the declared agents the model may name. */
const descriptionOf = (agents: ReadonlyArray<AgentOffer>): string =>
  agents.length === 0
    ? BASE
    : `${BASE} Agents (default ${GENERAL_AGENT}): ${
      agents.map((agent) => `${agent.name}: ${squashed(agent.description, 200)}`).join("; ")
    }.`

const run = (args: SubTask, ctx: ToolContext) =>
  ctx.delegate === undefined
    ? Effect.succeed(failure("task is not available here: a sub-agent cannot start sub-agents"))
    : ctx.delegate(args)

/** The `task` tool, offering the declared agents (agent.yaml's `agents:`) by name. */
export const taskToolFor = (agents: ReadonlyArray<AgentOffer>): ToolRecord =>
  defineTool({
    name: "task",
    description: descriptionOf(agents),
    parameters: Schema.Struct({
      description: NonBlankText("a few words", "3-6 words"),
      prompt: NonBlankText("the task", "the whole task"),
      ...(agents.length === 0
        ? {}
        : { agent: optional(Schema.String.annotations({ description: "agent name" })) })
    }),
    access: "mm",
    kind: "other",
    tidy: withoutEmptyText,
    describe: (args) => ({
      title: typeof args?.description === "string" ? squashed(args.description, 120) : "",
      locations: []
    }),
    run
  })

/** `task` with no declared agents: every task goes to the general sub-agent. */
export const taskTool: ToolRecord = taskToolFor([])
