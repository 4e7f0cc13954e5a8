import type * as acp from "@agentclientprotocol/sdk"
import * as path from "node:path"
import { isMcpToolName } from "../McpTools"
import { describeCall } from "../Tools"

/** The arguments as the model wrote them: the parsed JSON when it is JSON, else the text itself. */
export const parseInput = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

export const textBlock = (text: string): acp.ContentBlock => ({ type: "text", text })

export const agentText = (text: string): acp.SessionUpdate => ({ sessionUpdate: "agent_message_chunk", content: textBlock(text) })

export const agentThought = (text: string): acp.SessionUpdate => ({ sessionUpdate: "agent_thought_chunk", content: textBlock(text) })

export const userText = (text: string): acp.SessionUpdate => ({ sessionUpdate: "user_message_chunk", content: textBlock(text) })

/** Title, kind and absolute locations of a call, as the terminal describes it. */
export const describeForEditor = (name: string, input: unknown, cwd: string) => {
  const described = describeCall(name, asRecord(input), cwd)
  return {
    // an MCP tool's call is named, since its kind alone does not say which tool it is
    title: isMcpToolName(name) && described.title !== name ? `${name}: ${described.title}` : described.title,
    kind: described.kind,
    locations: described.locations.map((l) => ({ path: path.resolve(cwd, l.path), ...(l.line === undefined ? {} : { line: l.line }) }))
  }
}

/** The change a file tool makes, shown as a diff (a whole new text for write_file). */
export const diffOf = (name: string, input: unknown, cwd: string): acp.ToolCallContent | undefined => {
  const args = asRecord(input)
  if (typeof args?.path !== "string") return undefined
  const file = path.resolve(cwd, args.path)
  if (name === "write_file" && typeof args.content === "string") {
    return { type: "diff", path: file, oldText: null, newText: args.content }
  }
  if (name === "edit_file" && typeof args.old === "string" && typeof args.new === "string") {
    return { type: "diff", path: file, oldText: args.old, newText: args.new }
  }
  return undefined
}

/** What a finished call shows: the diff of a file tool that succeeded, then the output the model read. */
export const resultContent = (name: string, input: unknown, output: string, failed: boolean, cwd: string): Array<acp.ToolCallContent> => {
  const diff = failed ? undefined : diffOf(name, input, cwd)
  const text: acp.ToolCallContent = { type: "content", content: textBlock(output) }
  return diff === undefined ? [text] : [diff, text]
}

export interface StartedCall {
  readonly id: string
  readonly name: string
  readonly rawArguments: string
}

export const toolCallStarted = (call: StartedCall, status: "pending" | "in_progress", cwd: string): acp.SessionUpdate => {
  const rawInput = parseInput(call.rawArguments)
  return {
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    ...describeForEditor(call.name, rawInput, cwd),
    status,
    rawInput
  }
}

export interface FinishedCall extends StartedCall {
  readonly output: string
  readonly failed: boolean
}

export const toolCallFinished = (call: FinishedCall, cwd: string): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId: call.id,
  status: call.failed ? "failed" : "completed",
  rawOutput: call.output,
  content: resultContent(call.name, parseInput(call.rawArguments), call.output, call.failed, cwd)
})

/** A call of an earlier turn, told in one notification: already finished, with its input and output. */
export const pastToolCall = (call: FinishedCall, cwd: string): acp.SessionUpdate => {
  const rawInput = parseInput(call.rawArguments)
  return {
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    ...describeForEditor(call.name, rawInput, cwd),
    status: call.failed ? "failed" : "completed",
    rawInput,
    rawOutput: call.output,
    content: resultContent(call.name, rawInput, call.output, call.failed, cwd)
  }
}
