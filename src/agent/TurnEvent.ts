import type { CompactionError, GenerationError } from "../domain/Errors"
import type { PlanEntry } from "../domain/Plan"
import type { FileChange } from "../tools/Preview"
import type { CallLocation, ToolKind } from "../tools/ToolRecord"

/** What the core tells a façade while a turn runs; both façades render the same stream. */
export type TurnEvent =
  | { readonly _tag: "TextDelta"; readonly text: string }
  /**
   * The model's reasoning as it streams: shown apart from the answer. Its text is never sent
   * back; only an API's own signed or encrypted form of it is (the message's `opaque`).
   */
  | { readonly _tag: "ReasoningDelta"; readonly text: string }
  /** The server is still reading the prompt (llama-server says how far): the status line shows it. */
  | { readonly _tag: "PromptProgress"; readonly processed: number; readonly total: number }
  | {
    readonly _tag: "ToolCallStarted"
    readonly id: string
    readonly name: string
    readonly input: Record<string, unknown> | undefined
    readonly rawArguments: string
    readonly title: string
    readonly kind: ToolKind
    readonly locations: ReadonlyArray<CallLocation>
    /** Whether the call waits for the user's approval before it runs (an editor shows it pending). */
    readonly asks: boolean
  }
  | {
    readonly _tag: "ToolCallFinished"
    readonly id: string
    readonly name: string
    readonly output: string
    readonly failed: boolean
    /** A file tool that succeeded: the file's text before and after it (ACP shows the diff). */
    readonly change?: FileChange
  }
  /** Output of a running bash as it comes; the whole output is in ToolCallFinished. */
  | { readonly _tag: "ToolOutput"; readonly id: string; readonly text: string }
  /**
   * A line for the user that is neither answer nor error: a skipped skill, a compaction, "not saved".
   * `quiet`: a passing remark (a retry's wait), shown dim rather than as a warning.
   */
  | { readonly _tag: "Notice"; readonly text: string; readonly about?: "compaction"; readonly quiet?: boolean }
  /** Automatic compaction failed: a red line, and the turn goes on with the full history. */
  | { readonly _tag: "CompactionFailed"; readonly error: CompactionError }
  /** After each model call: the tokens the server reported (or an estimate), and the context window in use. */
  | {
    readonly _tag: "Usage"
    readonly promptTokens: number
    readonly completionTokens: number
    readonly contextWindow: number
    readonly estimated: boolean
    /** Of `promptTokens`, read from the server's prompt cache, when the server says. */
    readonly cachedTokens?: number
    /** Of `promptTokens`, written into the server's prompt cache (Anthropic). */
    readonly cacheWriteTokens?: number
  }
  /** The model wrote its plan again (`todo`): the whole list, as it stands now. */
  | { readonly _tag: "Plan"; readonly entries: ReadonlyArray<PlanEntry> }
  /**
   * A sub-agent (`task`) ended: the tokens its own model calls took, all told. They count apart
   * from the conversation's window, which holds only the sub-agent's answer.
   */
  | {
    readonly _tag: "SubAgentUsage"
    /** The `task` call that ran it. */
    readonly id: string
    readonly agent: string
    readonly promptTokens: number
    readonly completionTokens: number
    /** Whether some of its figures are estimates (a server that reported no usage). */
    readonly estimated: boolean
  }
  /** `max_tokens`: the last answer was cut at the model's output limit (finish_reason: length). */
  | { readonly _tag: "TurnFinished"; readonly stopReason: "end_turn" | "max_steps" | "max_tokens" }
  | { readonly _tag: "TurnFailed"; readonly error: GenerationError }

export const isTerminal = (event: TurnEvent): boolean => event._tag === "TurnFinished" || event._tag === "TurnFailed"
