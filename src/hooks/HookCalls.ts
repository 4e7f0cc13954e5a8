/**
 * The hooks at each point of a turn, as the agent calls them: each runs the event's hooks for
 * one conversation, says their lines through `say` (the turn's notices) and returns what the
 * agent must do — a call refused or asked about, a result with more text, a prompt not sent,
 * an answer the model must go on from. With no hook for the event, each does nothing at all.
 */
import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { Message } from "../domain/Session"
import type { Conversation } from "../sessions/Conversation"
import { FILE_SUFFIX } from "../sessions/SessionCodec"
import type { ToolResult } from "../tools/Tool"
import { type HookPlace, hookToolInput } from "./HookInput"
import type { HookOutcome } from "./HookOutput"
import type { HooksShape } from "./Hooks"

export type Say = (line: string) => Effect.Effect<void>

/** The session's id, file and directory, as a hook's input gives them. */
const placeOf = (conversation: Conversation): Effect.Effect<HookPlace> =>
  Effect.gen(function*() {
    const sessionId = yield* conversation.id
    const status = yield* conversation.status
    const transcriptPath = status._tag === "Saving" && sessionId !== ""
      ? path.join(status.dir, sessionId + FILE_SUFFIX)
      : undefined
    return { sessionId, transcriptPath, cwd: conversation.cwd }
  })

const sayAll = (say: Say, outcome: HookOutcome) => Effect.forEach(outcome.lines, say, { discard: true })

/** Text a hook gives the model, as the note that carries it. */
export const hookNote = (event: string, text: string): string => `[${event} hook]\n${text}`

/** A sub-agent's conversation: its turns have no prompt of the user's, no start and no stop of their own. */
const isSubAgent = (conversation: Conversation) => Effect.map(conversation.snapshot, (s) => s.parent !== undefined)

/** What comes before a turn: not sent (a hook blocked the prompt), or sent with the hooks' context for the model. */
export type Opening =
  | { readonly _tag: "Blocked"; readonly reason: string }
  | { readonly _tag: "Send"; readonly notes: ReadonlyArray<string> }

const SEND_AS_IS: Opening = { _tag: "Send", notes: [] }

/**
 * `SessionStart` (the first turn of a conversation in this run, or the first after a
 * compaction) and `UserPromptSubmit`, before the turn's first model call.
 */
export const openingHooks = Effect.fn("Hooks.opening")(function*(
  hooks: HooksShape,
  conversation: Conversation,
  prompt: string,
  say: Say
) {
  const starts = hooks.has("SessionStart")
  const submits = hooks.has("UserPromptSubmit")
  if ((!starts && !submits) || (yield* isSubAgent(conversation))) return SEND_AS_IS
  // the hooks are given the session's id and file: a new conversation's file is made now
  const warning = yield* conversation.ensureFile
  if (warning !== undefined) yield* say(warning)
  const place = yield* placeOf(conversation)
  const session = yield* conversation.snapshot
  const notes: Array<string> = []
  const source = starts
    ? hooks.sessionSource(
      place.sessionId !== "" ? place.sessionId : `new:${session.createdAt}`,
      session.messages.some((message) => message.role !== "system")
    )
    : undefined
  if (source !== undefined) {
    const started = yield* hooks.run(place, { event: "SessionStart", source })
    yield* sayAll(say, started)
    notes.push(...started.context.map((text) => hookNote("SessionStart", text)))
  }
  if (!submits) return { _tag: "Send", notes } as Opening
  const submitted = yield* hooks.run(place, { event: "UserPromptSubmit", prompt })
  yield* sayAll(say, submitted)
  const reason = submitted.block ?? submitted.halt
  if (reason !== undefined) return { _tag: "Blocked", reason } as Opening
  notes.push(...submitted.context.map((text) => hookNote("UserPromptSubmit", text)))
  return { _tag: "Send", notes } as Opening
})

/** A call as the tool hooks see it: the tool's name, its arguments, and the call's id. */
export interface ToolUse {
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly id: string
}

/** What `PreToolUse` decided of a call: nothing (the approval rule decides), or allowed, asked, refused. */
export type ToolPermission =
  | { readonly _tag: "Undecided" }
  | { readonly _tag: "Allow" }
  | { readonly _tag: "Ask" }
  | { readonly _tag: "Deny"; readonly reason: string }

const UNDECIDED: ToolPermission = { _tag: "Undecided" }

/** The result the model reads of a call a hook refused. */
export const blockedResult = (reason: string): string => `blocked by a PreToolUse hook: ${reason}`

/** `PreToolUse`: before the approval question. Exit 2, `deny` or `continue: false` refuse the call. */
export const preToolUseHooks = Effect.fn("Hooks.preToolUse")(function*(
  hooks: HooksShape,
  conversation: Conversation,
  say: Say,
  call: ToolUse
) {
  if (!hooks.has("PreToolUse")) return UNDECIDED
  const outcome = yield* hooks.run(yield* placeOf(conversation), {
    event: "PreToolUse",
    tool_name: call.tool,
    tool_input: hookToolInput(call.tool, call.input, conversation.cwd),
    tool_use_id: call.id
  })
  yield* sayAll(say, outcome)
  const refused = outcome.block ?? outcome.halt
  if (refused !== undefined) return { _tag: "Deny", reason: refused } as ToolPermission
  const permission = outcome.permission
  if (permission === undefined) return UNDECIDED
  switch (permission.decision) {
    case "deny":
      return { _tag: "Deny", reason: permission.reason ?? "denied" } as ToolPermission
    case "ask":
      // the question is mm's own: the hook's reason is the line just before it
      if (permission.reason !== undefined) yield* say(`a PreToolUse hook asks you: ${permission.reason}`)
      return { _tag: "Ask" } as ToolPermission
    case "allow":
      return { _tag: "Allow" } as ToolPermission
  }
})

/** `PostToolUse`: after a call ran. What blocks, and any context, is added to the result the model reads. */
export const postToolUseHooks = Effect.fn("Hooks.postToolUse")(function*(
  hooks: HooksShape,
  conversation: Conversation,
  say: Say,
  call: ToolUse,
  result: ToolResult
) {
  if (!hooks.has("PostToolUse")) return result
  const outcome = yield* hooks.run(yield* placeOf(conversation), {
    event: "PostToolUse",
    tool_name: call.tool,
    tool_input: hookToolInput(call.tool, call.input, conversation.cwd),
    tool_use_id: call.id,
    tool_response: { output: result.output, failed: result.failed }
  })
  yield* sayAll(say, outcome)
  const added = [
    ...(outcome.block === undefined ? [] : [outcome.block]),
    ...outcome.context,
    ...(outcome.halt === undefined ? [] : [outcome.halt])
  ]
  return added.length === 0
    ? result
    : { ...result, output: `${result.output}\n\n${hookNote("PostToolUse", added.join("\n"))}` }
})

/** Times in one turn a `Stop` hook may send the model back to work before the turn ends anyway. */
export const STOP_HOOK_MAX = 3

export const STOP_CAP_LINE = `a Stop hook kept the turn going ${STOP_HOOK_MAX} times; the turn ends here`

/**
 * `Stop`: when the model answers without a call. The reason the turn goes on (exit 2, `decision:
 * "block"`), or undefined when it ends. `active`: a Stop hook sent the model back in this turn already.
 */
export const stopHooks = Effect.fn("Hooks.stop")(function*(
  hooks: HooksShape,
  conversation: Conversation,
  say: Say,
  active: boolean
) {
  if (!hooks.has("Stop") || (yield* isSubAgent(conversation))) return undefined
  const outcome = yield* hooks.run(yield* placeOf(conversation), { event: "Stop", stop_hook_active: active })
  yield* sayAll(say, outcome)
  return outcome.halt === undefined ? outcome.block : undefined
})

/**
 * The note the model goes on from when a Stop hook blocks the end of the turn; undefined when
 * the turn ends (no hook blocked, or they sent it back `STOP_HOOK_MAX` times already: `stops`).
 */
export const stopHookNote = Effect.fn("Hooks.stopNote")(function*(
  hooks: HooksShape,
  conversation: Conversation,
  say: Say,
  stops: number
) {
  const reason = yield* stopHooks(hooks, conversation, say, stops > 0)
  if (reason === undefined) return undefined
  if (stops >= STOP_HOOK_MAX) {
    yield* say(STOP_CAP_LINE)
    return undefined
  }
  const note: Message = { role: "user", content: hookNote("Stop", reason), note: true }
  return note
})

/** `PreCompact`, before older turns are summarised: its lines (a hook cannot stop a compaction). */
export const preCompactHooks = Effect.fn("Hooks.preCompact")(function*(
  hooks: HooksShape,
  conversation: Conversation,
  trigger: "manual" | "auto",
  hint: string | undefined
) {
  if (!hooks.has("PreCompact")) return []
  const outcome = yield* hooks.run(yield* placeOf(conversation), {
    event: "PreCompact",
    trigger,
    custom_instructions: hint?.trim() ?? ""
  })
  return [...outcome.lines, ...(outcome.block === undefined ? [] : [outcome.block])]
})
