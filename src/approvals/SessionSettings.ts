import { needsApproval } from "../tools/ProjectPaths"
import type { ToolRecord } from "../tools/ToolRecord"
import { isOutsideProject } from "./ApprovalScope"

/**
 * How much a session asks before a tool runs, chosen for one session: `ask` as `permissions`
 * says, `edits` lets file edits inside the project through and asks for the rest, `auto` also
 * lets commands through when they run in the sandbox, `allow` asks nothing, and `plan` lets only
 * what reads run (approvals/PlanMode.ts) while the model plans.
 */
export type ApprovalMode = "ask" | "edits" | "auto" | "allow" | "plan"

/** The one list of modes: the editor's mode menu and the terminal's cycle read it, in this order. */
export const approvalModes: ReadonlyArray<ApprovalMode> = ["ask", "edits", "auto", "allow", "plan"]

/** What each mode does, in words (a mode without its own words is named alone). */
const MODE_WORDS: Partial<Record<string, string>> = {
  ask: "commands and edits are asked (as permissions says in agent.yaml)",
  edits: "file edits inside the project go ahead; commands and the rest are asked",
  auto: "edits inside the project and sandboxed commands go ahead; the rest is asked",
  allow: "nothing is asked",
  plan: "only what reads runs; the model plans and changes nothing"
}

/** The mode after `mode` in `approvalModes`, round to the first. */
export const nextMode = (mode: ApprovalMode): ApprovalMode =>
  approvalModes[(approvalModes.indexOf(mode) + 1) % approvalModes.length]

/** The status line that names a mode: `permission mode: edits — file edits … (Shift-Tab: next)`. */
export const modeLine = (mode: ApprovalMode): string => {
  const words = MODE_WORDS[mode]
  return `permission mode: ${mode}${words === undefined ? "" : ` — ${words}`} (Shift-Tab: next)`
}

export const isApprovalMode = (value: string): value is ApprovalMode =>
  (approvalModes as ReadonlyArray<string>).includes(value)

/** What one conversation overrides of the configuration, for as long as it is held in memory. */
export interface SessionSettings {
  readonly mode: ApprovalMode
  /** The model asked instead of `model.name`; undefined for the configured one. */
  readonly model: string | undefined
}

export const defaultSettings: SessionSettings = { mode: "ask", model: undefined }

/** The mode in force: a session's `ask` follows `permissions`; `auto` without a working sandbox is `ask`. */
const effectiveMode = (
  permissions: "ask" | "auto" | "allow",
  mode: ApprovalMode,
  sandboxed: boolean
): ApprovalMode => {
  const chosen = mode === "ask" && permissions !== "ask" ? permissions : mode
  return chosen === "auto" && !sandboxed ? "ask" : chosen
}

/** Whether mode `auto` is chosen (by the session or `permissions`) but falls back to `ask`: no working sandbox. */
export const autoFallsBack = (permissions: "ask" | "auto" | "allow", mode: ApprovalMode, sandboxed: boolean): boolean =>
  !sandboxed && (mode === "auto" || (mode === "ask" && permissions === "auto"))

/** What is said, once, when `auto` falls back to `ask`. */
export const AUTO_FALLBACK = "permissions auto: the sandbox is off, so mm asks as under ask"

/** A file tool's write inside the project: not outside it, and not to .git/, .mm/ or agent.yaml (`isOutsideProject`). */
const editInside = (tool: ToolRecord, input: Record<string, unknown> | undefined, cwd: string): boolean =>
  tool.access === "write" && typeof input?.path === "string" &&
  !isOutsideProject({ tool: tool.name, access: tool.access, input, cwd })

/**
 * Whether a call must be approved before it runs (before any "always" answer is counted).
 * `sandboxed`: whether the model's commands run in the sandbox now. A tool whose
 * configuration lets every call through (an MCP server's `approval: allow`) never waits.
 */
export const approvalNeeded = (
  permissions: "ask" | "auto" | "allow",
  mode: ApprovalMode,
  tool: ToolRecord,
  input: Record<string, unknown> | undefined,
  cwd: string,
  sandboxed: boolean
): boolean => {
  if (tool.preapproved === true || !needsApproval(tool.access, input, cwd)) return false
  switch (effectiveMode(permissions, mode, sandboxed)) {
    case "allow":
      return false
    case "auto":
      return !(tool.access === "command" || editInside(tool, input, cwd))
    case "edits":
      return !editInside(tool, input, cwd)
    case "plan":
      // a command got here only if it reads (PlanMode.ts refuses the others first)
      return tool.access !== "command"
    case "ask":
      return true
  }
}

/**
 * Whether reading a file that looks secret (tools/SecretFiles.ts) is asked, inside the project
 * too: in every mode but `allow` (chosen for the session, or by `permissions`).
 */
export const secretsAsked = (permissions: "ask" | "auto" | "allow", mode: ApprovalMode): boolean =>
  effectiveMode(permissions, mode, true) !== "allow"
