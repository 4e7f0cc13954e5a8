/**
 * Sub-agents: what runs a `task` call. A sub-agent is a turn of its own (Turn.ts) in a
 * conversation of its own — a fresh context holding its system prompt, the project's
 * instructions and the task — saved as a session beside its parent's, with `parent` naming the
 * call that ran it. It works under the parent's approvals, sandbox and mode (its questions are
 * asked of the user, labelled with its name); its steps are the `task` call's output as they
 * come, and its final answer is the call's result. Cancelling the parent's turn cancels it.
 */
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"

import type { Approver } from "../approvals/Approver"
import type { AgentConfig } from "../config/Config"
import { SUB_AGENT_SYSTEM } from "../config/DefaultSystem"
import type { GenerationError } from "../domain/Errors"
import { titleOf } from "../domain/Session"
import { firstLineOf } from "../lib/OneLine"
import { noMcpTools } from "../mcp/McpTurnTools"
import type { Conversation } from "../sessions/Conversation"
import { bashTool } from "../tools/Bash"
import { globTool } from "../tools/Glob"
import { grepTool } from "../tools/Grep"
import { readFileTool } from "../tools/ReadFile"
import { builtinTools, registryOf } from "../tools/Registry"
import { type AgentOffer, GENERAL_AGENT, taskTool } from "../tools/Task"
import { failure, type SubTask, type ToolResult } from "../tools/Tool"
import { type Deps, warn } from "./Deps"
import type { TurnEvent } from "./TurnEvent"
import type { TurnState } from "./TurnState"

/** How a turn runs (Turn.ts's `turn`, passed in: that module runs the sub-agents of its calls). */
export type RunTurn = (deps: Deps, conversation: Conversation, question: string) => Stream.Stream<TurnEvent>

const TASK = taskTool.name

/** The tools a sub-agent has when its declaration names none. */
const DEFAULT_TOOLS: ReadonlyArray<string> = [readFileTool, grepTool, globTool, bashTool].map((tool) => tool.name)

/** A sub-agent as it runs: its name and what it is given. */
interface SubAgent {
  readonly name: string
  readonly system: string
  readonly tools: ReadonlyArray<string>
  readonly model: string | undefined
}

/** The agents agent.yaml declares, as `task` offers them to the model. */
export const agentOffers = (config: Pick<AgentConfig, "agents">): ReadonlyArray<AgentOffer> =>
  Object.entries(config.agents).map(([name, agent]) => ({ name, description: agent.description }))

/** The agent a task names (the general one when it names none); a one-line reason when there is no such agent. */
const agentFor = (config: AgentConfig, name: string | undefined): SubAgent | string => {
  const chosen = name ?? GENERAL_AGENT
  const declared = Object.hasOwn(config.agents, chosen) ? config.agents[chosen] : undefined
  if (declared === undefined && chosen !== GENERAL_AGENT) {
    const names = [GENERAL_AGENT, ...Object.keys(config.agents).filter((n) => n !== GENERAL_AGENT)]
    return `no agent named "${chosen}"; the agents are ${names.join(", ")}`
  }
  return {
    name: chosen,
    system: declared?.system ?? SUB_AGENT_SYSTEM,
    tools: declared?.tools ?? DEFAULT_TOOLS,
    model: declared?.model
  }
}

/**
 * What a sub-agent works with: the parent's services, but its own system prompt and tools, no
 * MCP server's tools, and the user asked about its calls under its name, one question at a time.
 */
const depsOf = (deps: Deps, state: TurnState, callId: string, agent: SubAgent): Deps => {
  // never `task`: a sub-agent starts none of its own (agent.yaml cannot name it either)
  const tools = builtinTools.filter((tool) => agent.tools.includes(tool.name) && tool.name !== TASK)
  const approver: Approver["Type"] = {
    ask: (request) =>
      state.asking.withPermits(1)(deps.approver.ask({
        ...request,
        agent: agent.name,
        // its call ids are its model's: kept apart from the parent's, whose own may be the same
        toolCallId: `${callId}/${request.toolCallId}`
      }))
  }
  return {
    ...deps,
    config: { ...deps.config, system: agent.system },
    tools: registryOf(tools),
    approver,
    mcp: { ...deps.mcp, forTurn: () => Effect.succeed(noMcpTools) },
    keepsFailedTurns: true
  }
}

/**
 * The sub-agent's conversation: a new session whose `parent` is the call that runs it, titled
 * by the task, sharing the parent's "always" answers and in the parent's mode.
 */
const childOf = Effect.fn("SubAgents.childOf")(function*(
  deps: Deps,
  state: TurnState,
  callId: string,
  agent: SubAgent,
  task: SubTask
) {
  const parent = state.conversation
  const parentId = yield* parent.id
  const child = yield* deps.keeper.open(parent.cwd, { createFile: "later" })
  const { mode, model } = yield* Ref.get(parent.settings)
  yield* Ref.set(child.settings, { mode, model: agent.model ?? model })
  yield* child.update((session) => ({
    ...session,
    title: titleOf(`${agent.name}: ${task.description}`),
    ...(parentId === "" ? {} : { parent: { id: parentId, turn: state.turnNumber, callId } })
  }))
  // an "always" the user gives one of them holds for the parent and every sub-agent alike
  const shared: Conversation = { ...child, allowed: parent.allowed }
  return shared
})

/** What the sub-agent did, as one line of the `task` call's output; undefined for what is not a step. */
const stepLine = (event: TurnEvent): string | undefined => {
  switch (event._tag) {
    case "ToolCallStarted":
      return `${event.name}${event.title === event.name || event.title === "" ? "" : ` ${event.title}`}\n`
    case "ToolCallFinished":
      return event.failed ? `  failed: ${firstLineOf(event.output)}\n` : undefined
    case "Notice":
      return event.quiet === true ? undefined : `  ${firstLineOf(event.text)}\n`
    default:
      return undefined
  }
}

/** What a sub-agent's turn came to: its tokens and, when it failed, why. */
interface Outcome {
  promptTokens: number
  completionTokens: number
  estimated: boolean
  failed: GenerationError | undefined
  /** How its turn ended, when it ended. */
  stop: Extract<TurnEvent, { _tag: "TurnFinished" }>["stopReason"] | undefined
}

/** The sub-agent's answer: the text of its last message, when that is an answer. */
const answerOf = (child: Conversation) =>
  Effect.map(child.snapshot, (session) => {
    const last = session.messages[session.messages.length - 1]
    return last?.role === "assistant" && (last.tool_calls ?? []).length === 0 ? (last.content ?? "").trim() : ""
  })

/**
 * Runs the task in a sub-agent and gives its answer as the result (a failed result when it
 * failed, recorded in its own file's `errors`). `onOutput` is told each step as it comes.
 */
export const runSubAgent = Effect.fn("SubAgents.run")(function*(
  deps: Deps,
  state: TurnState,
  callId: string,
  task: SubTask,
  onOutput: (text: string) => Effect.Effect<void>,
  turn: RunTurn
) {
  const agent = agentFor(deps.config, task.agent)
  if (typeof agent === "string") return failure(agent)
  const child = yield* childOf(deps, state, callId, agent, task)
  // its file exists from the start, and the first step names it: a cancelled call's result says it too
  yield* warn(state.emit, yield* child.ensureFile)
  const where = whereSaved(yield* child.id, agent.name)
  yield* onOutput(`${where}\n`)
  const outcome: Outcome = {
    promptTokens: 0,
    completionTokens: 0,
    estimated: false,
    failed: undefined,
    stop: undefined
  }
  yield* turn(depsOf(deps, state, callId, agent), child, task.prompt).pipe(
    Stream.runForEach((event) => {
      if (event._tag === "Usage") {
        outcome.promptTokens += event.promptTokens
        outcome.completionTokens += event.completionTokens
        outcome.estimated ||= event.estimated
      }
      if (event._tag === "TurnFailed") outcome.failed = event.error
      if (event._tag === "TurnFinished") outcome.stop = event.stopReason
      const line = stepLine(event)
      return line === undefined ? Effect.void : onOutput(line)
    }),
    Effect.ensuring(Effect.suspend(() => spent(deps, state, callId, agent.name, outcome)))
  )
  return yield* resultOf(deps, child, where, agent.name, outcome)
})

/** `[sub-agent general, session ID]`: the line that says where its conversation is kept. */
const whereSaved = (id: string, name: string): string =>
  id === "" ? `[sub-agent ${name}; not saved]` : `[sub-agent ${name}, session ${id}]`

/** What the sub-agent spent, told once it is over (cancelled too), and added to its parent session's count. */
const spent = (deps: Deps, state: TurnState, callId: string, name: string, outcome: Outcome) =>
  Effect.zipRight(
    Effect.map(state.conversation.id, (id) => {
      const before = deps.subAgentSpend.get(id) ?? { runs: 0, promptTokens: 0, completionTokens: 0 }
      deps.subAgentSpend.set(id, {
        runs: before.runs + 1,
        promptTokens: before.promptTokens + outcome.promptTokens,
        completionTokens: before.completionTokens + outcome.completionTokens,
        ...(before.estimated === true || outcome.estimated ? { estimated: true } : {})
      })
    }),
    state.emit({
      _tag: "SubAgentUsage",
      id: callId,
      agent: name,
      promptTokens: outcome.promptTokens,
      completionTokens: outcome.completionTokens,
      estimated: outcome.estimated
    })
  )

/** The `task` call's result: the answer, then which session holds the sub-agent's work. */
const resultOf = Effect.fn("SubAgents.resultOf")(function*(
  deps: Deps,
  child: Conversation,
  where: string,
  name: string,
  outcome: Outcome
) {
  if (outcome.failed !== undefined) return failure(`sub-agent ${name} failed: ${outcome.failed.message}\n${where}`)
  const answer = yield* answerOf(child)
  if (answer !== "") return { output: `${answer}\n\n${where}`, failed: false } satisfies ToolResult
  return failure(
    outcome.stop === "max_steps"
      ? `sub-agent ${name} stopped after ${deps.config.maxSteps} model calls (maxSteps) without an answer\n${where}`
      : `sub-agent ${name} gave no answer\n${where}`
  )
})
