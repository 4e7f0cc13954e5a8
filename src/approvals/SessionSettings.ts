import { needsApproval } from "../tools/ProjectPaths"
import { isOutsideProject } from "./ApprovalScope"

/**
 * How much a session asks before a tool runs, chosen by the editor for one session (never
 * saved): `ask` as `permissions` says, `edits` lets file edits inside the project through and
 * asks for the rest, `allow` asks nothing.
 */
export type ApprovalMode = "ask" | "edits" | "allow"

export const approvalModes: ReadonlyArray<ApprovalMode> = ["ask", "edits", "allow"]

/** What each mode does, in words (a mode without its own words is named alone). */
const MODE_WORDS: Partial<Record<string, string>> = {
  ask: "commands and edits are asked (as permissions says in agent.yaml)",
  edits: "file edits inside the project go ahead; commands and the rest are asked",
  allow: "nothing is asked"
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

/** Whether a call must be approved before it runs (before any "always" answer is counted). */
export const approvalNeeded = (
  permissions: "ask" | "allow",
  mode: ApprovalMode,
  tool: string,
  input: Record<string, unknown> | undefined,
  cwd: string
): boolean => {
  if (!needsApproval(tool, input, cwd)) return false
  switch (mode) {
    case "allow":
      return false
    case "edits":
      return !((tool === "write_file" || tool === "edit_file") && typeof input?.path === "string" &&
        !isOutsideProject({ tool, input, cwd }))
    case "ask":
      return permissions === "ask"
  }
}
