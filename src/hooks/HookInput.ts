/**
 * What a hook is given and what it is matched on: the JSON object on its stdin (Claude Code's
 * field names), the names a tool answers to (mm's, and Claude Code's for the same tool), and
 * the matcher of a group of hooks.
 */
import * as path from "node:path"

import type { HookEvent } from "../config/ConfigSchema"

/** Claude Code's name for each built-in tool of mm that has a counterpart there. */
export const CLAUDE_TOOL_NAMES: Readonly<Record<string, string>> = {
  bash: "Bash",
  read_file: "Read",
  write_file: "Write",
  edit_file: "Edit",
  grep: "Grep",
  glob: "Glob",
  todo: "TodoWrite",
  task: "Task",
  web_fetch: "WebFetch"
}

/** The names a tool is matched by: its own, and Claude Code's when it has one. */
export const toolNames = (name: string): ReadonlyArray<string> => {
  const claude = CLAUDE_TOOL_NAMES[name]
  return claude === undefined ? [name] : [name, claude]
}

/** The tools whose `path` is a file: their input also carries Claude Code's `file_path`, absolute. */
const FILE_TOOLS = new Set(["read_file", "write_file", "edit_file"])

/** A call's arguments as a hook reads them: mm's own, with `file_path` added for the file tools. */
export const hookToolInput = (
  tool: string,
  input: Record<string, unknown>,
  cwd: string
): Record<string, unknown> =>
  FILE_TOOLS.has(tool) && typeof input.path === "string" && input.file_path === undefined
    ? { ...input, file_path: path.resolve(cwd, input.path) }
    : input

/** Where a hook runs and what names the conversation: the start of every hook's input. */
export interface HookPlace {
  readonly sessionId: string
  /** The session's file, when it is saved. */
  readonly transcriptPath: string | undefined
  readonly cwd: string
}

/** What each event adds to the common fields. */
export type HookDetails =
  | {
    readonly event: "PreToolUse"
    readonly tool_name: string
    readonly tool_input: Record<string, unknown>
    readonly tool_use_id: string
  }
  | {
    readonly event: "PostToolUse"
    readonly tool_name: string
    readonly tool_input: Record<string, unknown>
    readonly tool_use_id: string
    readonly tool_response: { readonly output: string; readonly failed: boolean }
  }
  | { readonly event: "UserPromptSubmit"; readonly prompt: string }
  | { readonly event: "Stop"; readonly stop_hook_active: boolean }
  | { readonly event: "SessionStart"; readonly source: "startup" | "resume" | "clear" | "compact" }
  | {
    readonly event: "PreCompact"
    readonly trigger: "manual" | "auto"
    readonly custom_instructions: string
  }

/** The JSON object written to a hook's stdin. */
export const hookInput = (place: HookPlace, details: HookDetails): Record<string, unknown> => {
  const { event, ...rest } = details
  return {
    session_id: place.sessionId,
    ...(place.transcriptPath === undefined ? {} : { transcript_path: place.transcriptPath }),
    cwd: place.cwd,
    hook_event_name: event,
    ...rest
  }
}

/** What a group's matcher is tested against: the tool's names, or the source or trigger; none for the others. */
export const subjectsOf = (details: HookDetails): ReadonlyArray<string> | undefined => {
  switch (details.event) {
    case "PreToolUse":
    case "PostToolUse":
      return toolNames(details.tool_name)
    case "SessionStart":
      return [details.source]
    case "PreCompact":
      return [details.trigger]
    default:
      return undefined
  }
}

export const eventOf = (details: HookDetails): HookEvent => details.event

/** A matcher that names tools (`Bash`, `Edit|Write`): compared whole, with no regular expression. */
const PLAIN = /^[\w|-]+$/

/** A regular expression's test, linear in time (RE2): loaded only for a matcher that needs one. */
export type RegexTest = (pattern: string, subject: string) => boolean

/**
 * Whether a group's matcher takes one of `subjects`. Empty, absent or `*` takes all; names
 * separated by `|` are compared whole; anything else is a regular expression found anywhere
 * in the name, as Claude Code tests it. An event without subjects takes every group.
 */
export const matcherTakes = (
  matcher: string | undefined,
  subjects: ReadonlyArray<string> | undefined,
  regex: RegexTest | undefined
): boolean => {
  if (subjects === undefined || isCatchAll(matcher)) return true
  const pattern = matcher!.trim()
  if (PLAIN.test(pattern)) {
    const names = pattern.split("|")
    return subjects.some((subject) => names.includes(subject))
  }
  return regex !== undefined && subjects.some((subject) => regex(pattern, subject))
}

export const isCatchAll = (matcher: string | undefined): boolean =>
  matcher === undefined || matcher.trim() === "" || matcher.trim() === "*"

/** Whether a matcher needs the regular expression engine. */
export const needsRegex = (matcher: string | undefined): boolean => !isCatchAll(matcher) && !PLAIN.test(matcher!.trim())
