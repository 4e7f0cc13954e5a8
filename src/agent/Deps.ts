import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import type { Approver } from "../approvals/Approver"
import type { RememberedApprovalsShape } from "../approvals/RememberedApprovals"
import type { ChangesShape } from "../changes/Changes"
import type { CheckpointsShape } from "../changes/Checkpoints"
import type { AgentConfig } from "../config/Config"
import type { HooksShape } from "../hooks/Hooks"
import type { SecretRegistry } from "../lib/Secrets"
import type { McpServersShape } from "../mcp/McpServers"
import type { ModelClientShape } from "../model/ModelClient"
import type { KeeperShape } from "../sessions/Keeper"
import type { FileAccessShape } from "../tools/FileAccess"
import type { ToolRegistryShape } from "../tools/Registry"
import type { SandboxShape } from "../tools/Sandbox"
import type { CompactorShape } from "./Compactor"
import type { JobsShape } from "./Jobs"
import type { TurnEvent } from "./TurnEvent"

/** What the agent's functions use: the layer's services, and the skill warnings already shown (each shown once). */
export interface Deps {
  readonly config: AgentConfig
  readonly model: ModelClientShape
  readonly approver: Context.Tag.Service<Approver>
  /** The "always" answers kept for the project across runs (in the user's state, never in the project). */
  readonly remembered: RememberedApprovalsShape
  readonly compactor: CompactorShape
  readonly changes: ChangesShape
  /** Where the blobs of changed files and of attached images are kept. */
  readonly checkpoints: CheckpointsShape
  readonly mcp: McpServersShape
  /** The tools the model is given (with the MCP servers' of each turn). */
  readonly tools: ToolRegistryShape
  /** Who reads and writes the project's files: the disk, or the editor (`mm acp`). */
  readonly files: FileAccessShape
  /** The program's secrets: tools run without them in their environment, and their output is redacted. */
  readonly secrets: SecretRegistry
  /** The conversations' background jobs; absent where none may start (a sub-agent's). */
  readonly jobs?: JobsShape
  /** Whether the model's commands run confined, and how. */
  readonly sandbox: SandboxShape
  /** The user's hooks (agent.yaml's `hooks:`), run at the events of a turn. */
  readonly hooks: HooksShape
  readonly shownWarnings: Set<string>
  /** Opens a sub-agent's conversation, a session beside its parent's. */
  readonly keeper: KeeperShape
  /** What the sub-agents of each session (by id) spent in this run (`/context` shows it). */
  readonly subAgentSpend: Map<string, SubAgentSpend>
  /** A sub-agent's: a failed turn is kept in its file (what it did is the record), not taken back. */
  readonly keepsFailedTurns?: boolean
}

/** Sub-agents run for a conversation, and the tokens they took, all told. */
export interface SubAgentSpend {
  readonly runs: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** Some of it estimated (a server that reported no usage). */
  readonly estimated?: boolean
}

export type Emit = (event: TurnEvent) => Effect.Effect<void>

/** A warning a service gives only once (undefined the other times), as a notice. */
export const warn = (emit: Emit, warning: string | undefined) =>
  warning === undefined ? Effect.void : emit({ _tag: "Notice", text: warning })

/** A warning shown once per agent (per run): a notice the first time, nothing after. */
export const warnOnce = (deps: Pick<Deps, "shownWarnings">, emit: Emit, warning: string | undefined) => {
  if (warning === undefined || deps.shownWarnings.has(warning)) return Effect.void
  deps.shownWarnings.add(warning)
  return emit({ _tag: "Notice", text: warning })
}
