import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import type * as Stream from "effect/Stream"

import { Approver } from "../approvals/Approver"
import { RememberedApprovals } from "../approvals/RememberedApprovals"
import { Changes } from "../changes/Changes"
import { Checkpoints } from "../changes/Checkpoints"
import { AppConfig } from "../config/Config"
import type { CompactionError } from "../domain/Errors"
import type { ImageInput } from "../domain/Images"
import type { EditorBlock } from "../domain/Session"
import { Hooks } from "../hooks/Hooks"
import { Secrets } from "../lib/Secrets"
import { McpServers } from "../mcp/McpServers"
import { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { Keeper } from "../sessions/Keeper"
import { FileAccess } from "../tools/FileAccess"
import { ToolRegistry } from "../tools/Registry"
import { Sandbox, sandboxLine } from "../tools/Sandbox"
import { type ToolResult } from "../tools/Tool"
import { compact, MANUAL } from "./AutoCompact"
import { Compactor, estimateTokens } from "./Compactor"
import type { Deps, SubAgentSpend } from "./Deps"
import { gitConfineOf } from "./Environment"
import { Jobs } from "./Jobs"
import { systemPromptOf } from "./SystemPrompt"
import { runShell } from "./ToolCalls"
import { turn } from "./Turn"
import type { TurnEvent } from "./TurnEvent"

export interface AgentShape {
  /**
   * One turn: the question, then model calls and tool runs until an answer without tool
   * calls (or `maxSteps`). Interrupting the stream's consumer cancels the turn: what was
   * shown stays in the conversation, and nothing is recorded as an error.
   */
  readonly turn: (
    conversation: Conversation,
    question: string,
    images?: ReadonlyArray<ImageInput>,
    blocks?: ReadonlyArray<EditorBlock>
  ) => Stream.Stream<TurnEvent>
  /**
   * `/compact`: older turns replaced by a summary, in memory and in the file. A failure is
   * recorded in the session's `errors` and leaves the history as it was.
   */
  readonly compact: (conversation: Conversation, hint?: string) => Effect.Effect<CompactReport, CompactionError>
  /** `/context`: what the next request would hold, part by part, in (estimated) tokens. */
  readonly context: (conversation: Conversation) => Effect.Effect<ContextReport>
  /**
   * `!command` in the terminal: the user's own shell line, run in `cwd` by the bash tool (same
   * output limit, its output passed to `onOutput` as it comes), without approval.
   */
  readonly runShell: (
    command: string,
    cwd: string,
    onOutput: (text: string) => Effect.Effect<void>
  ) => Effect.Effect<ToolResult>
}

export interface ContextReport {
  /** The configured `system`. */
  readonly systemPrompt: number
  /** The project's instruction files (AGENTS.md…). */
  readonly instructions: { readonly count: number; readonly tokens: number }
  readonly skills: { readonly count: number; readonly tokens: number }
  /** The environment lines (working directory, date, git branch…). */
  readonly environment: number
  readonly messages: { readonly count: number; readonly tokens: number }
  readonly toolResults: { readonly count: number; readonly tokens: number }
  /** The tool definitions sent with every request. */
  readonly tools: number
  readonly total: number
  readonly contextWindow: number
  /** What the server counted for the last answer (prompt + answer), when it said. */
  readonly measured: number | undefined
  /** Whether the model's commands run confined: the line the banner shows. */
  readonly sandbox?: string
  /** What this conversation's sub-agents spent in this run, in their own windows; absent when none ran. */
  readonly subAgents?: SubAgentSpend
}

export type CompactReport =
  | { readonly _tag: "Nothing" }
  | {
    readonly _tag: "Compacted"
    readonly replaced: number
    readonly tokensBefore: number
    readonly tokensAfter: number
    readonly warning: string | undefined
  }

export class Agent extends Context.Tag("mm/Agent")<Agent, AgentShape>() {}

/** The agent, made from the services it uses (`app/Layers.ts` makes it in sequence with them). */
export const makeAgent = Effect.gen(function*() {
  const deps: Deps = {
    config: (yield* AppConfig).config,
    model: yield* ModelClient,
    approver: yield* Approver,
    remembered: yield* RememberedApprovals,
    compactor: yield* Compactor,
    changes: yield* Changes,
    checkpoints: yield* Checkpoints,
    mcp: yield* McpServers,
    tools: yield* ToolRegistry,
    files: yield* FileAccess,
    secrets: yield* Secrets,
    sandbox: yield* Sandbox,
    hooks: yield* Hooks,
    jobs: yield* Jobs,
    shownWarnings: new Set(),
    keeper: yield* Keeper,
    subAgentSpend: new Map()
  }
  return {
    turn: (conversation, question, images = [], blocks) => turn(deps, conversation, question, images, blocks),
    compact: (conversation, hint) => compact(deps, conversation, hint, MANUAL),
    context: (conversation) => context(deps, conversation),
    runShell: (command, cwd, onOutput) => runShell(deps, command, cwd, onOutput)
  } satisfies AgentShape
})

// ---------------------------------------------------------------------------
// /context

const context = Effect.fn("Agent.context")(function*(deps: Deps, conversation: Conversation) {
  const { config, model } = deps
  const system = yield* systemPromptOf(
    config,
    deps.tools,
    conversation.cwd,
    gitConfineOf(deps.sandbox, conversation.cwd)
  )
  const { messages } = yield* conversation.snapshot
  const history = messages.filter((m) => m.role !== "system")
  const results = history.filter((m) => m.role === "tool")
  const others = history.filter((m) => m.role !== "tool")
  const systemPrompt = estimateTokens([{ content: system.parts.configured }])
  const share = (text: string) => Math.ceil(text.length / 4)
  const instructions = share(system.parts.instructions)
  const skillsTokens = share(system.parts.skills)
  const environment = share(system.parts.environment)
  const tools = Math.ceil(JSON.stringify(deps.tools.specs).length / 4)
  const parts = { messages: estimateTokens(others), toolResults: estimateTokens(results) }
  const usage = yield* Ref.get(conversation.usage)
  const spend = deps.subAgentSpend.get(yield* conversation.id)
  return {
    systemPrompt,
    instructions: { count: system.instructionFiles.length, tokens: instructions },
    skills: { count: system.skills.length, tokens: skillsTokens },
    environment,
    messages: { count: others.length, tokens: parts.messages },
    toolResults: { count: results.length, tokens: parts.toolResults },
    tools,
    total: systemPrompt + instructions + skillsTokens + environment + tools + parts.messages + parts.toolResults,
    contextWindow: yield* model.contextWindow,
    measured: usage === undefined ? undefined : usage.promptTokens + usage.completionTokens,
    sandbox: sandboxLine(yield* deps.sandbox.state),
    ...(spend === undefined ? {} : { subAgents: spend })
  }
})
