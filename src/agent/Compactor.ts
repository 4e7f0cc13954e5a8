import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import { CompactionError } from "../domain/Errors"
import type { Message, WireMessage } from "../domain/Session"
import { ModelClient } from "../model/ModelClient"

export const SUMMARY_HEADER = "Summary of the earlier part of this conversation (older turns were compacted):"

const SUMMARY_SYSTEM = [
  "You summarise a coding conversation so that it can continue without its older turns.",
  "Write a compact summary in plain text: the user's goals and requests, decisions taken, files read or changed (with paths),",
  "commands run and what they showed, errors met and how they were solved, and what was left to do.",
  "Keep names, paths and numbers exact. Do not invent anything. Do not address the user; write only the summary."
].join(" ")

/** Where the history splits: the system prompt, the older part, and the last `keepTurns` turns. */
interface Split {
  readonly system: ReadonlyArray<Message>
  readonly older: ReadonlyArray<Message>
  readonly kept: ReadonlyArray<Message>
}

/** A turn starts at a question of the user; tool calls and their results stay with their turn. */
export const splitHistory = (messages: ReadonlyArray<Message>, keepTurns: number): Split => {
  const system = messages.length > 0 && messages[0].role === "system" ? [messages[0]] : []
  const rest = messages.slice(system.length)
  const starts = rest.flatMap((m, i) => (m.role === "user" && m.summary !== true && m.note !== true ? [i] : []))
  const boundary = keepTurns === 0 ? rest.length : starts.length > keepTurns ? starts[starts.length - keepTurns] : 0
  return { system, older: rest.slice(0, boundary), kept: rest.slice(boundary) }
}

/** Whether a split leaves anything to summarise (a summary alone is not summarised again). */
const hasOlderTurns = (split: Split): boolean =>
  split.older.length > 0 && !(split.older.length === 1 && split.older[0].summary === true)

/** Whether compacting `messages` would replace anything: what runs before a compaction (PreCompact) asks. */
export const compactable = (messages: ReadonlyArray<Message>, keepTurns: number): boolean =>
  hasOlderTurns(splitHistory(messages, keepTurns))

/** The older turns as a transcript the summariser reads. */
const transcript = (messages: ReadonlyArray<Message>): string =>
  messages
    .map((m) => {
      if (m.summary === true) return `[earlier summary]\n${m.content ?? ""}`
      if (m.role === "tool") return `[tool result${m.failed === true ? ", failed" : ""}]\n${m.content ?? ""}`
      const calls = (m.tool_calls ?? []).map((c) => `[tool call ${c.function.name}] ${c.function.arguments}`).join("\n")
      return `[${m.role}]\n${[m.content ?? "", calls].filter((part) => part !== "").join("\n")}`
    })
    .join("\n\n")

/** What an image is counted as, in characters (about 768 tokens: a mid-sized image on most vision models). */
const IMAGE_CHARS = 768 * 4

/** Characters of a message's content: its text, and a fixed share per image. */
const contentChars = (message: Pick<WireMessage, "content"> & { readonly images?: ReadonlyArray<unknown> }): number => {
  const content = message.content
  if (content === null) return IMAGE_CHARS * (message.images?.length ?? 0)
  if (typeof content === "string") return content.length + IMAGE_CHARS * (message.images?.length ?? 0)
  return content.reduce((n, part) => n + (part.type === "text" ? part.text.length : IMAGE_CHARS), 0)
}

/** Tokens, estimated from characters (about four per token). */
export const estimateTokens = (
  messages: ReadonlyArray<Pick<WireMessage, "content" | "tool_calls"> & { readonly images?: ReadonlyArray<unknown> }>
): number => {
  let chars = 0
  for (const m of messages) {
    chars += contentChars(m) + 8
    for (const call of m.tool_calls ?? []) chars += call.function.name.length + call.function.arguments.length + 8
  }
  return Math.ceil(chars / 4)
}

/** Tokens of the window kept free for the summary the model writes. */
const SUMMARY_ROOM = 1024

/**
 * The transcript within `maxChars`: whole when it fits, else its start and its end (the end
 * weighs more: it is what the conversation goes on from) around a line saying what was left out.
 * The summariser's request must fit the same window as any other.
 */
export const fitTranscript = (text: string, maxChars: number): string => {
  if (text.length <= maxChars) return text
  const head = Math.floor(maxChars / 4)
  const tail = maxChars - head
  const marker = `\n\n[… ${text.length - head - tail} characters of the conversation left out here …]\n\n`
  return text.slice(0, head) + marker + text.slice(text.length - tail)
}

export type Compaction =
  | { readonly _tag: "Nothing" }
  | { readonly _tag: "Compacted"; readonly messages: ReadonlyArray<Message>; readonly replaced: number }

export interface CompactorShape {
  /** The shortened history, or a `CompactionError` (failed or empty summary); never a partial one. */
  readonly compact: (
    messages: ReadonlyArray<Message>,
    options: { readonly keepTurns: number; readonly hint?: string | undefined }
  ) => Effect.Effect<Compaction, CompactionError>
}

export class Compactor extends Context.Tag("mm/Compactor")<Compactor, CompactorShape>() {}

/** The compactor over the model client. */
export const makeCompactor = Effect.map(ModelClient, (model): CompactorShape => ({
  compact: Effect.fn("Compactor.compact")(function*(messages, options) {
    const split = splitHistory(messages, options.keepTurns)
    if (!hasOlderTurns(split)) return { _tag: "Nothing" } as const
    const hint = options.hint?.trim() ?? ""
    // the summariser's request within the window: its instructions, the transcript, room for the summary
    const window = yield* model.contextWindow
    const budget = Math.max(1024, (window - SUMMARY_ROOM - Math.ceil(SUMMARY_SYSTEM.length / 4) - 64) * 4)
    const request = {
      tools: [],
      messages: [
        { role: "system" as const, content: SUMMARY_SYSTEM },
        {
          role: "user" as const,
          content: `${fitTranscript(transcript(split.older), budget)}\n\n---\nSummarise the conversation above.${
            hint === "" ? "" : ` Focus: ${hint}`
          }`
        }
      ]
    }
    const text = yield* model.stream(request).pipe(
      Stream.runFold("", (acc, event) => (event._tag === "TextDelta" ? acc + event.text : acc)),
      Effect.mapError(
        (error) =>
          new CompactionError({
            reason: "generation",
            message: `compaction failed: ${error.message}`,
            raw: error.raw
          })
      )
    )
    if (text.trim() === "") {
      return yield* new CompactionError({
        reason: "empty",
        message: "compaction failed: the model returned an empty summary; the history is unchanged",
        raw: JSON.stringify(text)
      })
    }
    const summary: Message = { role: "user", content: `${SUMMARY_HEADER}\n\n${text.trim()}`, summary: true }
    return {
      _tag: "Compacted",
      messages: [...split.system, summary, ...split.kept],
      replaced: split.older.length
    } as const
  })
}))
