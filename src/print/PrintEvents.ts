/** The token counts of a model call as the server reported them. */
interface Usage {
  readonly promptTokens: number
  readonly completionTokens: number
}
import { absurd } from "effect/Function"

import type { TurnEvent } from "../agent/TurnEvent"
import type { PlanEntry } from "../domain/Plan"

/**
 * The objects `mm -p --output-format json` prints, one per line. A public interface: every
 * shape is documented in docs/reference/cli.md; fields may be added, never changed.
 */
export type PrintEvent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "reasoning"; readonly text: string }
  | {
    readonly type: "tool_call"
    readonly id: string
    readonly name: string
    readonly title: string
    readonly kind: string
    readonly input: Record<string, unknown> | null
    readonly arguments: string
  }
  | {
    readonly type: "tool_result"
    readonly id: string
    readonly name: string
    readonly status: "completed" | "failed"
    readonly output: string
  }
  | { readonly type: "notice"; readonly text: string }
  /** The model's plan (`todo`), whole, each time it changes. */
  | { readonly type: "plan"; readonly entries: ReadonlyArray<PlanEntry> }
  /** A sub-agent (`task`) ended: the tokens its own model calls took. */
  | {
    readonly type: "sub_agent_usage"
    readonly id: string
    readonly agent: string
    readonly promptTokens: number
    readonly completionTokens: number
    readonly estimated: boolean
  }
  /** Before the turn, with `--continue`/`--resume`: the last question of the session was never answered. */
  | { readonly type: "interrupted"; readonly question: string }
  | { readonly type: "compaction_failed"; readonly line: string; readonly raw: string }
  | {
    readonly type: "usage"
    readonly promptTokens: number
    readonly completionTokens: number
    readonly contextWindow: number
    readonly estimated: boolean
    readonly cachedTokens?: number
    readonly cacheWriteTokens?: number
  }
  | {
    readonly type: "turn_finished"
    readonly stopReason: string
    readonly usage: { readonly promptTokens: number; readonly completionTokens: number } | null
  }
  | { readonly type: "turn_failed"; readonly kind: string; readonly line: string; readonly raw: string }
  | {
    readonly type: "result"
    readonly status: "answered" | "failed"
    readonly sessionId: string | null
    readonly answer: string
    readonly model: string
  }

/** The event said before the turn when the resumed session's last question was never answered (mm stopped). */
export const interruptedEvent = (question: string): PrintEvent => ({ type: "interrupted", question })

/** The JSON object of one turn event; undefined for one that has none (a running command's output). */
export const printEventJson = (event: TurnEvent, usage: Usage | undefined): PrintEvent | undefined => {
  switch (event._tag) {
    case "TextDelta":
      return { type: "text", text: event.text }
    case "ReasoningDelta":
      return { type: "reasoning", text: event.text }
    case "Usage":
      return {
        type: "usage",
        promptTokens: event.promptTokens,
        completionTokens: event.completionTokens,
        contextWindow: event.contextWindow,
        estimated: event.estimated,
        ...(event.cachedTokens === undefined ? {} : { cachedTokens: event.cachedTokens }),
        ...(event.cacheWriteTokens === undefined ? {} : { cacheWriteTokens: event.cacheWriteTokens })
      }
    case "ToolCallStarted":
      return {
        type: "tool_call",
        id: event.id,
        name: event.name,
        title: event.title,
        kind: event.kind,
        input: event.input ?? null,
        arguments: event.rawArguments
      }
    case "ToolCallFinished":
      return {
        type: "tool_result",
        id: event.id,
        name: event.name,
        status: event.failed ? "failed" : "completed",
        output: event.output
      }
    case "Notice":
      return { type: "notice", text: event.text }
    case "CompactionFailed":
      return { type: "compaction_failed", line: event.error.message, raw: event.error.raw }
    case "TurnFinished":
      return {
        type: "turn_finished",
        stopReason: event.stopReason,
        usage: usage === undefined
          ? null
          : { promptTokens: usage.promptTokens, completionTokens: usage.completionTokens }
      }
    case "Plan":
      return { type: "plan", entries: event.entries }
    case "SubAgentUsage":
      return {
        type: "sub_agent_usage",
        id: event.id,
        agent: event.agent,
        promptTokens: event.promptTokens,
        completionTokens: event.completionTokens,
        estimated: event.estimated
      }
    case "TurnFailed":
      return { type: "turn_failed", kind: event.error.reason, line: event.error.message, raw: event.error.raw }
    case "ToolOutput":
    case "PromptProgress":
      // a running command's output as it comes (the whole of it is in tool_result), the
      // server reading the prompt: nothing of the answer
      return undefined
    default:
      // an event added to TurnEvent without its JSON (or a case saying it has none) does not compile
      return absurd(event)
  }
}
