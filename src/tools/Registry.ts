/**
 * The one list of mm's built-in tools, and the registry the rest of mm reads them from: what the
 * model is told, the default system prompt's sentence about them, the approval rule, what the
 * terminal and an editor show of a call (live and replayed), and docs/reference/tools.md's table.
 * A new tool is a module exporting its record (ToolRecord.ts) and one line in `builtinTools`.
 */
import * as Context from "effect/Context"

import type { AgentConfig } from "../config/ConfigSchema"
import type { ToolSpec } from "../model/ModelClient"
import { backgroundBashTool, bashTool } from "./Bash"
import { editFileTool } from "./EditFile"
import { globTool } from "./Glob"
import { grepTool } from "./Grep"
import { jobKillTool } from "./JobKill"
import { jobOutputTool } from "./JobOutput"
import { readFileTool } from "./ReadFile"
import { type AgentOffer, taskTool, taskToolFor } from "./Task"
import { todoTool } from "./Todo"
import { type CallDescription, describeCall, type ToolRecord } from "./ToolRecord"
import { unknownToolRecord } from "./UnknownTool"
import { webFetchTool, webFetchToolFor } from "./WebFetch"
import { writeFileTool } from "./WriteFile"

/** The built-in tools, in the order the model is told of them. */
export const builtinTools: ReadonlyArray<ToolRecord> = [
  bashTool,
  readFileTool,
  writeFileTool,
  editFileTool,
  grepTool,
  globTool,
  todoTool,
  taskTool
]

/**
 * Tools the model is given only when the configuration enables them: each one's description is
 * sent with every request, and a project that does not use it should not pay for it. They name
 * no `purpose` (the system prompt's sentence stays the same with or without them).
 */
interface OptionalTool {
  readonly tool: ToolRecord
  readonly enabled: (config: AgentConfig) => boolean
  /** The tool as this configuration sets it up, when its settings change how it runs; absent: `tool`. */
  readonly configured?: (config: AgentConfig) => ToolRecord
}

/** Whether the configuration gives the model background jobs (`bash` with `background`). */
const jobsOn = (config: AgentConfig): boolean => config.jobs.enabled

export const optionalTools: ReadonlyArray<OptionalTool> = [
  {
    tool: webFetchTool,
    enabled: (config) => config.webFetch.enabled,
    configured: (config) => webFetchToolFor(config.webFetch)
  },
  { tool: jobOutputTool, enabled: jobsOn },
  { tool: jobKillTool, enabled: jobsOn }
]

/** Every tool mm has, enabled or not: what shows a stored call, the docs' table, the approvals' names. */
export const allTools: ReadonlyArray<ToolRecord> = [...builtinTools, ...optionalTools.map((entry) => entry.tool)]

export interface ToolRegistryShape {
  /** Every tool, in the order the model is told of them. */
  readonly tools: ReadonlyArray<ToolRecord>
  /** What the model is told of them, with every request. */
  readonly specs: ReadonlyArray<ToolSpec>
  readonly find: (name: string) => ToolRecord | undefined
  /**
   * How a call of any name is shown, a stored one too: by its tool's record, or, for a tool not
   * here (an MCP server's, one the model made up), by the rule for unknown tools.
   */
  readonly describe: (name: string, args: Record<string, unknown> | undefined, cwd?: string) => CallDescription
  /** The default system prompt's sentence naming the tools and what each is for. */
  readonly sentence: string
}

/** `a, b and c`. */
const listed = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`

/** "You can run shell commands with `bash`, …; `grep`, … need no approval inside the project." */
export const toolSentence = (tools: ReadonlyArray<ToolRecord>): string => {
  const purposes = tools.flatMap((tool) => (tool.purpose === undefined ? [] : [tool.purpose]))
  // the tools the sentence names that read
  const readers = tools.filter((tool) => tool.access === "read" && tool.purpose !== undefined)
    .map((tool) => `\`${tool.name}\``)
  const free = readers.length === 0
    ? ""
    : `; ${listed(readers)} ${readers.length === 1 ? "needs" : "need"} no approval inside the project`
  return purposes.length === 0 ? "" : `You can ${listed(purposes)}${free}.`
}

export const specOf = (tool: ToolRecord): ToolSpec => ({
  name: tool.name,
  description: tool.description,
  parameters: tool.parameters
})

/**
 * A registry of these tools. `known`: the tools whose stored calls it can still show (a tool
 * the configuration no longer enables keeps its title in a replay); the model is given `tools` only.
 */
export const registryOf = (
  tools: ReadonlyArray<ToolRecord>,
  known: ReadonlyArray<ToolRecord> = []
): ToolRegistryShape => {
  const byName = new Map(tools.map((tool) => [tool.name, tool]))
  const shown = new Map([...known, ...tools].map((tool) => [tool.name, tool]))
  return {
    tools,
    specs: tools.map(specOf),
    find: (name) => byName.get(name),
    describe: (name, args, cwd) => describeCall(shown.get(name) ?? unknownToolRecord(name), args, cwd),
    sentence: toolSentence(tools)
  }
}

/** The tools mm gives the model: the built-in ones, for the agent and for whatever shows its calls. */
export class ToolRegistry extends Context.Tag("mm/ToolRegistry")<ToolRegistry, ToolRegistryShape>() {}

/** The built-in tools' registry (those always given), showing the calls of every tool. */
export const builtinRegistry: ToolRegistryShape = registryOf(builtinTools, allTools)

/**
 * The tools a configuration gives the model: the built-in ones, with `task` offering the
 * sub-agents agent.yaml declares, `bash` with `background` when jobs are on, and the optional
 * ones it enables (the same registry as `builtinRegistry` when it declares and enables none).
 */
export const registryFor = (config: AgentConfig, agents: ReadonlyArray<AgentOffer>): ToolRegistryShape => {
  const enabled = optionalTools.filter((entry) => entry.enabled(config))
    .map((entry) => entry.configured?.(config) ?? entry.tool)
  if (agents.length === 0 && enabled.length === 0) return builtinRegistry
  const tools = builtinTools.map((tool) =>
    tool.name === taskTool.name && agents.length > 0
      ? taskToolFor(agents)
      : tool.name === bashTool.name && jobsOn(config)
      ? backgroundBashTool
      : tool
  )
  return registryOf([...tools, ...enabled], allTools)
}
