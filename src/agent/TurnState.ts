import type * as Effect from "effect/Effect"
import type * as Ref from "effect/Ref"

import type { SavedPlan } from "../domain/Plan"
import type { Message } from "../domain/Session"
import type { McpTurnTools } from "../mcp/McpTurnTools"
import type { Conversation } from "../sessions/Conversation"
import type { SubTask, ToolResult } from "../tools/Tool"
import type { Emit } from "./Deps"

/** One turn under way: where its events go, and the history it adds to. */
export interface TurnState {
  readonly conversation: Conversation
  readonly question: string
  readonly emit: Emit
  /** Waits until every event emitted so far is on the user's screen. */
  readonly shown: Effect.Effect<void>
  readonly mcpTools: McpTurnTools
  /** The number this turn will have in the session; its file changes are recorded under it. */
  readonly turnNumber: number
  /** The history as it was before the question, given back if the turn fails. */
  previous: ReadonlyArray<Message>
  /** The plan as it was before the question, given back if the turn fails. */
  readonly planBefore: SavedPlan | undefined
  /** What comes before this turn's messages: the system prompt, then the history (compacted on an overflow). */
  base: ReadonlyArray<Message>
  /** This turn's messages so far, the question first. */
  readonly added: Array<Message>
  /** When the question was sent (ISO), for the session's `inProgress` marker. */
  readonly sentAt: string
  /** The text shown of the answer being streamed, kept if the turn is cancelled. */
  readonly partial: Ref.Ref<string>
  /** What each running tool call has printed so far, by call id: the model gets it if the turn is cancelled. */
  readonly toolOutput: Map<string, string>
  /**
   * Runs a `task` call's sub-agent (SubAgents.ts) and gives its answer; `onOutput` is told its
   * steps as they come.
   */
  readonly delegate: (
    callId: string,
    task: SubTask,
    onOutput: (text: string) => Effect.Effect<void>
  ) => Effect.Effect<ToolResult>
  /** One question at a time: this turn's sub-agents, side by side, ask the user in turn. */
  readonly asking: Effect.Semaphore
  /** The id of the tool call running now, marked in the saved turn so that it survives mm being killed. */
  running: string | undefined
}
