import * as path from "node:path"

import type * as acp from "@agentclientprotocol/sdk"

import { outsideLines, previewLines } from "../approvals/PreviewLines"
import { longestBackticks } from "../text/SessionMarkdown"
import type { FileChange, Preview } from "../tools/Preview"
import type { ToolRegistryShape } from "../tools/Registry"
import { isMcpToolName } from "../tools/ToolNames"
import type { CallDescription, ToolRecord } from "../tools/ToolRecord"

/** The arguments as the model wrote them: the parsed JSON when it is JSON, else the text itself. */
const parseInput = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

const asRecord = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

export const textBlock = (text: string): acp.ContentBlock => ({ type: "text", text })

export const agentText = (text: string): acp.SessionUpdate => ({
  sessionUpdate: "agent_message_chunk",
  content: textBlock(text)
})

export const agentThought = (text: string): acp.SessionUpdate => ({
  sessionUpdate: "agent_thought_chunk",
  content: textBlock(text)
})

export const userText = (text: string): acp.SessionUpdate => ({
  sessionUpdate: "user_message_chunk",
  content: textBlock(text)
})

/**
 * A call's title, kind and absolute locations for an editor, as the core describes it; an MCP
 * tool's call is named, since its kind alone does not say which tool it is.
 */
export const forEditor = (name: string, described: CallDescription, cwd: string) => ({
  title: isMcpToolName(name) && described.title !== name ? `${name}: ${described.title}` : described.title,
  kind: described.kind,
  locations: described.locations.map((l) => ({
    path: path.resolve(cwd, l.path),
    ...(l.line === undefined ? {} : { line: l.line })
  }))
})

/** A fence longer than any run of backticks in `text`, so the command shows verbatim. */
const fenced = (text: string, info: string): string => {
  const longest = longestBackticks(text)
  const fence = "`".repeat(longest + 1)
  return `${fence}${info}\n${text.replace(/\n$/, "")}\n${fence}`
}

const textContent = (text: string): acp.ToolCallContent => ({ type: "content", content: textBlock(text) })

/** A file's text before and after a change, as an ACP diff: `oldText` absent only for a new file. */
const diffContent = (file: string, before: string | undefined, after: string): acp.ToolCallContent => ({
  type: "diff",
  path: file,
  ...(before === undefined ? {} : { oldText: before }),
  newText: after
})

/** A file tool's change: its diff, or the line that sums it up when it is too large to diff (lib/Diff.ts). */
const changeContent = (change: FileChange & { readonly after: string }): acp.ToolCallContent =>
  change.tooLarge === undefined
    ? diffContent(change.file, change.before, change.after)
    : textContent(`${change.path}: ${change.tooLarge}`)

/**
 * The approval preview of the core (Preview.ts) as tool-call content: the whole command
 * for bash; for a file tool a warning when it lies outside the project or will fail, and
 * the diff of the whole file with its real old text.
 */
export const previewContent = (preview: Preview): Array<acp.ToolCallContent> => {
  switch (preview._tag) {
    case "None":
      return []
    case "Secret":
      return [textContent(previewLines(preview).map((line) => line.text).join("\n"))]
    case "Command":
      return [
        textContent(
          fenced(preview.command, "sh") + (preview.timeout === undefined ? "" : `\n(timeout ${preview.timeout} s)`)
        )
      ]
    case "FileChange": {
      const warnings = [
        ...(preview.outsideProject ? outsideLines(preview).map((line) => line.text) : []),
        ...(preview.problem === undefined ? [] : [preview.problem])
      ]
      return [
        ...(warnings.length === 0 ? [] : [textContent(warnings.join("\n"))]),
        ...(preview.after === undefined ? [] : [changeContent({ ...preview, after: preview.after })])
      ]
    }
  }
}

/** The whole-file change a file tool call showed: live from its preview, on replay from its change record's blobs. */
export type ShownChange = Pick<FileChange, "file" | "before" | "after">

/**
 * The change a stored file call made, as far as its arguments tell (its record says how: an
 * edit shows the piece it replaced; a write shows its content as a new file only when it made one).
 */
const diffOf = (
  tool: ToolRecord | undefined,
  input: unknown,
  cwd: string,
  output = ""
): acp.ToolCallContent | undefined => {
  const args = asRecord(input)
  if (tool?.changeFromArguments === undefined || args === undefined || typeof args.path !== "string") return undefined
  const change = tool.changeFromArguments(args, output)
  return change === undefined ? undefined : diffContent(path.resolve(cwd, args.path), change.before, change.after)
}

/**
 * What a finished call shows: the diff of a file tool that succeeded (the whole file before
 * and after, when the core read it before the call ran), then the output the model read.
 */
const resultContent = (
  tool: ToolRecord | undefined,
  input: unknown,
  output: string,
  failed: boolean,
  cwd: string,
  change?: ShownChange
): Array<acp.ToolCallContent> => {
  const diff = failed
    ? undefined
    : change?.after !== undefined
    ? diffContent(change.file, change.before, change.after)
    : diffOf(tool, input, cwd, output)
  const text = textContent(output)
  return diff === undefined ? [text] : [diff, text]
}

export interface StartedCall {
  readonly id: string
  readonly name: string
  readonly rawArguments: string
}

/** A call as it starts: `pending` when it waits for the user's approval. */
export const toolCallStarted = (
  call: StartedCall & CallDescription,
  status: "pending" | "in_progress",
  cwd: string
): acp.SessionUpdate => ({
  sessionUpdate: "tool_call",
  toolCallId: call.id,
  ...forEditor(call.name, call, cwd),
  status,
  rawInput: parseInput(call.rawArguments)
})

interface FinishedCall extends StartedCall {
  readonly output: string
  readonly failed: boolean
  readonly change?: ShownChange
}

export const toolCallFinished = (
  call: FinishedCall,
  cwd: string,
  tools: Pick<ToolRegistryShape, "find">
): acp.SessionUpdate => ({
  sessionUpdate: "tool_call_update",
  toolCallId: call.id,
  status: call.failed ? "failed" : "completed",
  rawOutput: call.output,
  content: resultContent(
    tools.find(call.name),
    parseInput(call.rawArguments),
    call.output,
    call.failed,
    cwd,
    call.change
  )
})

/** A call of an earlier turn, told in one notification: already finished, with its input and output. */
export const pastToolCall = (
  call: FinishedCall,
  cwd: string,
  tools: Pick<ToolRegistryShape, "find" | "describe">
): acp.SessionUpdate => {
  const rawInput = parseInput(call.rawArguments)
  return {
    sessionUpdate: "tool_call",
    toolCallId: call.id,
    ...forEditor(call.name, tools.describe(call.name, asRecord(rawInput), cwd), cwd),
    status: call.failed ? "failed" : "completed",
    rawInput,
    rawOutput: call.output,
    content: resultContent(tools.find(call.name), rawInput, call.output, call.failed, cwd, call.change)
  }
}
