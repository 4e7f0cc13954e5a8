import type * as acp from "@agentclientprotocol/sdk"
import { CANCELLED } from "../Agent"
import type { TurnEvent } from "../TurnEvent"
import { agentText, type StartedCall, toolCallFinished, toolCallStarted } from "./ToolUpdates"

export interface TurnRenderer {
  /** The notifications one event of the turn becomes. `asks` says whether this call waits for the user's approval. */
  readonly render: (event: TurnEvent, asks: (tool: string) => boolean) => ReadonlyArray<acp.SessionUpdate>
  /** After a cancel: every call that started and never finished, closed as failed. */
  readonly closeOpenCalls: () => ReadonlyArray<acp.SessionUpdate>
  /** The stop reason the turn ended with; `end_turn` for a failed one. */
  readonly stopReason: () => acp.StopReason | undefined
}

/** Turns the core's events into `session/update` payloads, remembering what it needs across events. */
export const makeTurnRenderer = (cwd: string): TurnRenderer => {
  const open = new Map<string, StartedCall>()
  let atLineStart = true
  let stop: acp.StopReason | undefined

  const text = (chunk: string): acp.SessionUpdate => {
    atLineStart = chunk.endsWith("\n")
    return agentText(chunk)
  }
  /** A line of its own among the answer's text (a notice, an error). */
  const line = (content: string): acp.SessionUpdate => text(`${atLineStart ? "" : "\n\n"}${content}\n\n`)

  const render = (event: TurnEvent, asks: (tool: string) => boolean): ReadonlyArray<acp.SessionUpdate> => {
    switch (event._tag) {
      case "TextDelta":
        return event.text === "" ? [] : [text(event.text)]
      case "ToolCallStarted": {
        const call = { id: event.id, name: event.name, rawArguments: event.rawArguments }
        open.set(event.id, call)
        atLineStart = true
        return [toolCallStarted(call, event.input !== undefined && asks(event.name) ? "pending" : "in_progress", cwd)]
      }
      case "ToolCallFinished": {
        const call = open.get(event.id) ?? { id: event.id, name: event.name, rawArguments: "" }
        open.delete(event.id)
        return [toolCallFinished({ ...call, output: event.output, failed: event.failed }, cwd)]
      }
      case "Notice":
        return [line(event.text)]
      case "CompactionFailed":
        return [line(event.error.message)]
      case "TurnFailed":
        stop = "end_turn"
        return [line(event.error.message)]
      case "TurnFinished":
        stop = event.stopReason === "max_steps" ? "max_turn_requests" : "end_turn"
        return []
    }
  }

  const closeOpenCalls = () => {
    const closed = [...open.values()].map((call) => toolCallFinished({ ...call, output: CANCELLED, failed: true }, cwd))
    open.clear()
    return closed
  }

  return { render, closeOpenCalls, stopReason: () => stop }
}
