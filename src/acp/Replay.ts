import type * as acp from "@agentclientprotocol/sdk"

import { SUMMARY_HEADER } from "../agent/Compactor"
import type { PlanEntry } from "../domain/Plan"
import type { Message } from "../domain/Session"
import { builtinRegistry, type ToolRegistryShape } from "../tools/Registry"
import { agentText, agentThought, pastToolCall, type ShownChange, userText } from "./ToolUpdates"
import { planUpdate } from "./TurnUpdates"

export const SUMMARY_TITLE = "Summary of earlier conversation"

/** Output shown for a call whose result was never recorded. */
export const NO_RESULT = "no result was recorded for this call"

/**
 * What a replay tells beyond the messages, gathered beforehand (ReplayData.ts): the blocks an
 * editor sent for a question (by message index), the whole-file change of each file tool call
 * (by call id), and the call ids already told (shared across archives and the session).
 */
export interface Told {
  readonly userBlocks?: ReadonlyMap<number, ReadonlyArray<acp.SessionUpdate>>
  /** By call id, in the order recorded: servers that number calls `call_0`… in every answer reuse ids. */
  readonly fileChanges?: ReadonlyMap<string, ReadonlyArray<ShownChange>>
  readonly usedIds?: Set<string>
  /** The bytes of an image's blob, when it is still there. */
  readonly blob?: (hash: string) => Buffer | undefined
  /** How the calls are described: the registry of the tools the agent has (the built-in ones by default). */
  readonly tools?: Pick<ToolRegistryShape, "find" | "describe">
  /** The session's plan, told as a `plan` update before the message at index `at` (the end when past it): after the turn that wrote it. */
  readonly plan?: { readonly at: number; readonly entries: ReadonlyArray<PlanEntry> }
  /** What a background job a call started said at its end, by the call's id (agent/JobWords.ts). */
  readonly jobs?: ReadonlyMap<string, string>
}

const noneTold: Told = {}

/** A call's result, with what the job it started said at its end. */
const withJob = (
  output: string,
  job: string | undefined
): string => (job === undefined ? output : `${output}\n\n${job}`)

const parsedInput = (raw: string): Record<string, unknown> => {
  try {
    const parsed: unknown = JSON.parse(raw)
    return typeof parsed === "object" && parsed !== null ? parsed as Record<string, unknown> : {}
  } catch {
    return {}
  }
}

/** Whether a file tool call with `input` could have made `change`: its content written, or its new text in the file. */
const couldMake = (change: ShownChange, input: Record<string, unknown>): boolean =>
  typeof input.content === "string"
    ? change.after === input.content
    : typeof input.new === "string"
    ? change.after?.includes(input.new) === true
    : true

/** A compaction summary, told as the agent's text under a header that says what it is. */
const summaryText = (content: string): string => {
  const body = content.startsWith(SUMMARY_HEADER) ? content.slice(SUMMARY_HEADER.length).trimStart() : content
  return `**${SUMMARY_TITLE}** (older turns were replaced by this summary)\n\n${body}`
}

/**
 * The `session/update` payloads that tell a stored conversation again, in order: questions,
 * answers (after their reasoning, as thoughts), and each tool call once, already finished, with the input and output it had then.
 * The system prompt is not told; nothing here runs anything.
 */
export const replayUpdates = (
  messages: ReadonlyArray<Message>,
  cwd: string,
  told: Told = noneTold
): Array<acp.SessionUpdate> => {
  const updates: Array<acp.SessionUpdate> = []
  const taken = new Set<ShownChange>()
  // the first change recorded for this call id that this call could have made, each used once
  const changeOf = (id: string, rawArguments: string): { change?: ShownChange } => {
    const input = parsedInput(rawArguments)
    const found = (told.fileChanges?.get(id) ?? []).find((change) => !taken.has(change) && couldMake(change, input))
    if (found === undefined) return {}
    taken.add(found)
    return { change: found }
  }
  const usedIds = told.usedIds ?? new Set<string>()
  const uniqueId = (id: string): string => {
    let candidate = id
    for (let n = 2; usedIds.has(candidate); n++) candidate = `${id}#${n}`
    usedIds.add(candidate)
    return candidate
  }

  for (let i = 0; i < messages.length; i++) {
    if (told.plan?.at === i) updates.push(planUpdate(told.plan.entries))
    const message = messages[i]
    const content = message.content ?? ""
    switch (message.role) {
      case "system":
      case "tool":
        break
      case "user":
        if (message.summary === true) updates.push(agentText(summaryText(content)))
        else if (message.note === true) updates.push(agentText(content))
        else if (told.userBlocks?.has(i) === true) updates.push(...told.userBlocks.get(i)!)
        else if (content !== "") updates.push(userText(content))
        // blocks an editor sent hold their images already
        for (const image of told.userBlocks?.has(i) === true ? [] : message.images ?? []) {
          const bytes = told.blob?.(image.blob)
          updates.push(
            bytes === undefined
              ? userText(`[the image ${image.name} is no longer in .mm/checkpoints]`)
              : {
                sessionUpdate: "user_message_chunk",
                content: { type: "image", data: bytes.toString("base64"), mimeType: image.mime }
              }
          )
        }
        break
      case "assistant": {
        if (message.reasoning !== undefined && message.reasoning !== "") updates.push(agentThought(message.reasoning))
        if (content !== "") updates.push(agentText(content))
        const calls = message.tool_calls ?? []
        if (calls.length === 0) break
        const results = new Map<string, Message>()
        for (let j = i + 1; j < messages.length && messages[j].role === "tool"; j++) {
          const id = messages[j].tool_call_id
          if (id !== undefined && !results.has(id)) results.set(id, messages[j])
        }
        for (const call of calls) {
          const result = results.get(call.id)
          updates.push(
            pastToolCall(
              {
                id: uniqueId(call.id),
                name: call.function.name,
                rawArguments: call.function.arguments,
                output: withJob(result === undefined ? NO_RESULT : (result.content ?? ""), told.jobs?.get(call.id)),
                failed: result === undefined || result.failed === true,
                ...changeOf(call.id, call.function.arguments)
              },
              cwd,
              told.tools ?? builtinRegistry
            )
          )
        }
        break
      }
    }
  }
  if (told.plan !== undefined && told.plan.at >= messages.length) updates.push(planUpdate(told.plan.entries))
  return updates
}
