import type * as acp from "@agentclientprotocol/sdk"
import { absurd } from "effect/Function"

import { CANCELLED } from "../agent/Turn"
import type { TurnEvent } from "../agent/TurnEvent"
import type { GenerationError } from "../domain/Errors"
import type { PlanEntry } from "../domain/Plan"
import { quickRandomHex } from "../lib/QuickIds"
import { builtinRegistry, type ToolRegistryShape } from "../tools/Registry"
import { taskTool } from "../tools/Task"
import { agentText, agentThought, type StartedCall, toolCallFinished, toolCallStarted } from "./ToolUpdates"

interface TurnRenderer {
  /** The notifications one event of the turn becomes. */
  readonly render: (event: TurnEvent) => ReadonlyArray<acp.SessionUpdate>
  /** After a cancel: every call that started and never finished, closed as failed. */
  readonly closeOpenCalls: () => ReadonlyArray<acp.SessionUpdate>
  /** The stop reason the turn ended with; undefined while it runs, and for a failed one. */
  readonly stopReason: () => acp.StopReason | undefined
  /** Why the turn failed, if it did: the prompt is answered with this as a JSON-RPC error. */
  readonly failure: () => GenerationError | undefined
}

/** What the editor said it can show, beside the answer's text (`clientCapabilities.session`). */
export interface ClientDisplay {
  readonly notices: boolean
  readonly compaction: boolean
}

const plainDisplay: ClientDisplay = { notices: false, compaction: false }

/** The end of a sub-agent's steps shown under its `task` call while it runs, in characters. */
const STEPS_SHOWN = 4000

/** What each running sub-agent did so far, by its `task` call's id: the update that shows it under that call. */
const makeStepsShown = () => {
  const steps = new Map<string, string>()
  return {
    add: (id: string, text: string): acp.SessionUpdate => {
      const sofar = ((steps.get(id) ?? "") + text).slice(-STEPS_SHOWN)
      steps.set(id, sofar)
      return {
        sessionUpdate: "tool_call_update",
        toolCallId: id,
        content: [{ type: "content", content: { type: "text", text: sofar } }]
      }
    },
    delete: (id: string) => steps.delete(id)
  }
}

/** An id for one compaction, unique in this process (so within any session) without a counter to keep. */
const newCompactionId = (): string => `compaction-${quickRandomHex(16)}`

/** The model's plan, whole, as an ACP `plan` update (an entry without a priority is of medium priority). */
export const planUpdate = (entries: ReadonlyArray<PlanEntry>): acp.SessionUpdate => ({
  sessionUpdate: "plan",
  entries: entries.map((entry) => ({
    content: entry.content,
    status: entry.status,
    priority: entry.priority ?? "medium"
  }))
})

/** A finished compaction, told as a `compaction_update` to an editor that shows them. */
export const compactionUpdate = (
  outcome: { readonly summary: string } | { readonly error: string }
): acp.SessionUpdate =>
  "error" in outcome
    ? { sessionUpdate: "compaction_update", compactionId: newCompactionId(), status: "failed", error: outcome.error }
    : {
      sessionUpdate: "compaction_update",
      compactionId: newCompactionId(),
      status: "completed",
      summary: [{ type: "text", text: outcome.summary }]
    }

const noticeUpdate = (text: string, severity: "info" | "warning" | "error"): acp.SessionUpdate => ({
  sessionUpdate: "notice",
  severity,
  title: text
})

/**
 * Turns the core's events into `session/update` payloads, remembering what it needs across
 * events; `tools` says how a finished file call's change is read from its arguments.
 */
export const makeTurnRenderer = (
  cwd: string,
  display: ClientDisplay = plainDisplay,
  tools: Pick<ToolRegistryShape, "find"> = builtinRegistry
): TurnRenderer => {
  const open = new Map<string, StartedCall>()
  const subAgentSteps = makeStepsShown()
  let atLineStart = true
  let stop: acp.StopReason | undefined
  let failure: GenerationError | undefined

  const text = (chunk: string): acp.SessionUpdate => {
    atLineStart = chunk.endsWith("\n")
    return agentText(chunk)
  }
  /** A line of its own among the answer's text (a notice, an error). */
  const line = (content: string): acp.SessionUpdate => text(`${atLineStart ? "" : "\n\n"}${content}\n\n`)

  const render: TurnRenderer["render"] = (event) => {
    switch (event._tag) {
      case "TextDelta":
        return event.text === "" ? [] : [text(event.text)]
      case "ReasoningDelta":
        return event.text === "" ? [] : [agentThought(event.text)]
      case "ToolOutput":
        // the whole output goes with the call's completion (an editor terminal shows it live);
        // a sub-agent's steps are shown under its `task` call as they come
        return open.get(event.id)?.name === taskTool.name ? [subAgentSteps.add(event.id, event.text)] : []
      case "PromptProgress":
        // ACP has no update for a server reading the prompt: the editor shows its own wait
        return []
      case "Usage":
        return [{
          sessionUpdate: "usage_update",
          used: event.promptTokens + event.completionTokens,
          size: event.contextWindow
        }]
      case "ToolCallStarted": {
        const call = { id: event.id, name: event.name, rawArguments: event.rawArguments }
        open.set(event.id, call)
        atLineStart = true
        return [toolCallStarted({ ...call, ...event }, event.asks ? "pending" : "in_progress", cwd)]
      }
      case "ToolCallFinished": {
        const call = open.get(event.id) ?? { id: event.id, name: event.name, rawArguments: "" }
        open.delete(event.id)
        subAgentSteps.delete(event.id)
        return [
          toolCallFinished({ ...call, output: event.output, failed: event.failed, change: event.change }, cwd, tools)
        ]
      }
      case "Notice":
        if (event.about === "compaction" && display.compaction) return [compactionUpdate({ summary: event.text })]
        return display.notices ? [noticeUpdate(event.text, "info")] : [line(event.text)]
      case "CompactionFailed":
        if (display.compaction) return [compactionUpdate({ error: event.error.message })]
        return display.notices ? [noticeUpdate(event.error.message, "warning")] : [line(event.error.message)]
      case "TurnFailed":
        failure = event.error
        return [line(event.error.message)]
      case "Plan":
        return [planUpdate(event.entries)]
      case "SubAgentUsage":
        // what a sub-agent spent: the editor's usage is the conversation's own window
        return []
      case "TurnFinished":
        stop = event.stopReason === "max_steps" ? "max_turn_requests" : event.stopReason
        return []
      default:
        // an event added to TurnEvent and not told to the editor here does not compile
        return absurd(event)
    }
  }

  const closeOpenCalls = () => {
    const closed = [...open.values()].map((call) =>
      toolCallFinished({ ...call, output: CANCELLED, failed: true }, cwd, tools)
    )
    open.clear()
    return closed
  }

  return { render, closeOpenCalls, stopReason: () => stop, failure: () => failure }
}
