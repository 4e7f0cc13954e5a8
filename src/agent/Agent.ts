import * as os from "node:os"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Ref from "effect/Ref"
import type * as Stream from "effect/Stream"

import { Approver } from "../approvals/Approver"
import { Changes } from "../changes/Changes"
import { AppConfig } from "../config/Config"
import type { CompactionError } from "../domain/Errors"
import type { EditorBlock } from "../domain/Session"
import { Secrets } from "../lib/Secrets"
import { McpServers } from "../mcp/McpServers"
import { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { FileAccess } from "../tools/FileAccess"
import { type ToolResult } from "../tools/Tool"
import { toolSpecs } from "../tools/ToolSpecs"
import { compact } from "./AutoCompact"
import { Compactor, estimateTokens } from "./Compactor"
import type { Deps } from "./Deps"
import { loadSkills, skillsPrompt } from "./Skills"
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
  readonly runShell: (command: string, cwd: string, onOutput: (text: string) => void) => Effect.Effect<ToolResult>
}

export interface ContextReport {
  readonly systemPrompt: number
  readonly skills: { readonly count: number; readonly tokens: number }
  readonly messages: { readonly count: number; readonly tokens: number }
  readonly toolResults: { readonly count: number; readonly tokens: number }
  /** The tool definitions sent with every request. */
  readonly tools: number
  readonly total: number
  readonly contextWindow: number
  /** What the server counted for the last answer (prompt + answer), when it said. */
  readonly measured: number | undefined
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

export const AgentLive = Layer.effect(
  Agent,
  Effect.gen(function*() {
    const deps: Deps = {
      config: (yield* AppConfig).config,
      model: yield* ModelClient,
      approver: yield* Approver,
      compactor: yield* Compactor,
      changes: yield* Changes,
      mcp: yield* McpServers,
      files: yield* FileAccess,
      secrets: yield* Secrets,
      shownWarnings: new Set()
    }
    return {
      turn: (conversation, question, blocks) => turn(deps, conversation, question, blocks),
      compact: (conversation, hint) => compact(deps, conversation, hint, "/compact"),
      context: (conversation) => context(deps, conversation),
      runShell: (command, cwd, onOutput) => runShell(deps, command, cwd, onOutput)
    } satisfies AgentShape
  })
)

// ---------------------------------------------------------------------------
// /context

const context = Effect.fn("Agent.context")(function*(deps: Deps, conversation: Conversation) {
  const { config, model } = deps
  const { skills } = yield* loadSkills(config.skills.dirs, conversation.cwd, os.homedir())
  const { messages } = yield* conversation.snapshot
  const history = messages.filter((m) => m.role !== "system")
  const results = history.filter((m) => m.role === "tool")
  const others = history.filter((m) => m.role !== "tool")
  const systemPrompt = estimateTokens([{ role: "system", content: config.system }])
  const skillsTokens = skills.length === 0 ? 0 : Math.ceil(skillsPrompt(skills).length / 4)
  const tools = Math.ceil(JSON.stringify(toolSpecs).length / 4)
  const parts = { messages: estimateTokens(others), toolResults: estimateTokens(results) }
  const usage = yield* Ref.get(conversation.usage)
  return {
    systemPrompt,
    skills: { count: skills.length, tokens: skillsTokens },
    messages: { count: others.length, tokens: parts.messages },
    toolResults: { count: results.length, tokens: parts.toolResults },
    tools,
    total: systemPrompt + skillsTokens + tools + parts.messages + parts.toolResults,
    contextWindow: yield* model.contextWindow,
    measured: usage === undefined ? undefined : usage.promptTokens + usage.completionTokens
  }
})
