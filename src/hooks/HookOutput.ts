/**
 * What a hook's answer means, read as Claude Code reads it: exit 0 goes on (its stdout may be
 * JSON, or context for the model at `UserPromptSubmit` and `SessionStart`), exit 2 blocks with
 * its stderr as the reason, any other end is one line for the user and the turn goes on.
 */
import type { HookEvent } from "../config/ConfigSchema"
import { isRecord } from "../lib/Guards"
import type { HookRun } from "./HookRunner"

export type PermissionDecision = "allow" | "deny" | "ask"

/** What the hooks of one event said, all told. */
export interface HookOutcome {
  /** Lines for the user (a failed hook, a `systemMessage`, what a hook that cannot block said). */
  readonly lines: ReadonlyArray<string>
  /** Why the event's action is blocked (exit 2's stderr, `decision: "block"`'s reason); undefined when nothing blocks. */
  readonly block: string | undefined
  /** Text for the model: plain stdout or `additionalContext`. */
  readonly context: ReadonlyArray<string>
  /** `PreToolUse`: the strongest of the hooks' permission decisions (deny over ask over allow), and its reason. */
  readonly permission: { readonly decision: PermissionDecision; readonly reason: string | undefined } | undefined
  /** `continue: false`: its `stopReason`. */
  readonly halt: string | undefined
}

export const NOTHING: HookOutcome = { lines: [], block: undefined, context: [], permission: undefined, halt: undefined }

/** The command as a line names it: its first line, cut at 60 characters. */
export const shortCommand = (command: string): string => {
  const first = command.trim().split("\n")[0]
  return first.length > 60 || command.trim().includes("\n") ? `${first.slice(0, 59)}…` : first
}

const firstLine = (text: string): string => text.trim().split("\n")[0]?.trim() ?? ""

const head = (event: HookEvent, command: string) => `hook ${event} ${JSON.stringify(shortCommand(command))}`

/** Events whose exit 2 (or `decision: "block"`) stops something; at the others it is only shown. */
const BLOCKS: ReadonlySet<HookEvent> = new Set(["PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop"])

/** Events whose plain stdout is context for the model. */
const STDOUT_CONTEXT: ReadonlySet<HookEvent> = new Set(["UserPromptSubmit", "SessionStart"])

const text = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() !== "" ? value.trim() : undefined

const PERMISSIONS: ReadonlySet<string> = new Set(["allow", "deny", "ask"])

/** A JSON answer read field by field; fields the event does not use are ignored. */
const fromJson = (event: HookEvent, command: string, json: Record<string, unknown>): HookOutcome => {
  const specific = isRecord(json.hookSpecificOutput) ? json.hookSpecificOutput : {}
  const lines: Array<string> = []
  const systemMessage = text(json.systemMessage)
  if (systemMessage !== undefined) lines.push(`${head(event, command)}: ${systemMessage}`)
  const reason = text(json.reason)
  const blocked = json.decision === "block" ? reason ?? `blocked by ${head(event, command)}` : undefined
  const context = text(specific.additionalContext)
  let permission: HookOutcome["permission"]
  if (event === "PreToolUse") {
    const decision = specific.permissionDecision
    if (typeof decision === "string" && PERMISSIONS.has(decision)) {
      permission = { decision: decision as PermissionDecision, reason: text(specific.permissionDecisionReason) }
    } else if (json.decision === "approve") {
      permission = { decision: "allow", reason }
    } else if (blocked !== undefined) {
      permission = { decision: "deny", reason: blocked }
    }
  }
  const halt = json.continue === false ? text(json.stopReason) ?? `stopped by ${head(event, command)}` : undefined
  const canBlock = BLOCKS.has(event) && event !== "PreToolUse"
  if (blocked !== undefined && !BLOCKS.has(event)) lines.push(`${head(event, command)}: ${blocked}`)
  return {
    lines,
    block: canBlock ? blocked : undefined,
    context: context === undefined || event === "Stop" ? [] : [context],
    permission,
    halt
  }
}

/** What one hook's run says. */
export const outcomeOf = (event: HookEvent, command: string, run: HookRun): HookOutcome => {
  switch (run._tag) {
    case "NotStarted":
      return { ...NOTHING, lines: [`${head(event, command)}: could not start: ${run.reason}`] }
    case "TimedOut":
      return { ...NOTHING, lines: [`${head(event, command)}: timed out after ${run.seconds} s`] }
    case "Exited":
      break
  }
  if (run.code === 2) {
    const reason = run.stderr.trim() === "" ? `blocked by ${head(event, command)} (exit 2)` : run.stderr.trim()
    return BLOCKS.has(event)
      ? { ...NOTHING, block: reason }
      : { ...NOTHING, lines: [`${head(event, command)}: ${firstLine(reason)}`] }
  }
  if (run.code !== 0) {
    const said = firstLine(run.stderr)
    return { ...NOTHING, lines: [`${head(event, command)}: exit ${run.code}${said === "" ? "" : `: ${said}`}`] }
  }
  const stdout = run.stdout.trim()
  if (stdout.startsWith("{")) {
    try {
      const json: unknown = JSON.parse(stdout)
      if (isRecord(json)) return fromJson(event, command, json)
    } catch (error) {
      return {
        ...NOTHING,
        lines: [`${head(event, command)}: its output is not valid JSON: ${firstLine(String(error))}`]
      }
    }
  }
  return STDOUT_CONTEXT.has(event) && stdout !== "" ? { ...NOTHING, context: [stdout] } : NOTHING
}

const RANK: Record<PermissionDecision, number> = { allow: 0, ask: 1, deny: 2 }

/** The outcomes of an event's hooks, in the order of the configuration, as one. */
export const combined = (outcomes: ReadonlyArray<HookOutcome>): HookOutcome => {
  const blocks = outcomes.flatMap((outcome) => (outcome.block === undefined ? [] : [outcome.block]))
  const permissions = outcomes.flatMap((outcome) => (outcome.permission === undefined ? [] : [outcome.permission]))
  const strongest = permissions.reduce<HookOutcome["permission"]>(
    (best, next) => (best === undefined || RANK[next.decision] > RANK[best.decision] ? next : best),
    undefined
  )
  return {
    lines: outcomes.flatMap((outcome) => outcome.lines),
    block: blocks.length === 0 ? undefined : blocks.join("\n"),
    context: outcomes.flatMap((outcome) => outcome.context),
    permission: strongest,
    halt: outcomes.find((outcome) => outcome.halt !== undefined)?.halt
  }
}
