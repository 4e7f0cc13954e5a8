import { isInsideProject } from "../lib/RealPath"
import type { ToolAccess } from "./ToolRecord"

/**
 * Whether `file` (relative to `cwd`) really lies outside the project directory `cwd`: every
 * symbolic link on the way followed (dangling ones too), and a file with other hard links
 * counts as outside (lib/RealPath.ts).
 */
const isOutsideProject = (cwd: string, file: string): boolean => !isInsideProject(cwd, file)

/**
 * Whether a call waits for approval under `permissions: ask`: every call that changes things
 * or reaches beyond the project, and a call of a reading tool whose `path` leads outside the
 * project directory (given `input` and `cwd`). What works inside mm alone (`todo`, `task`) never
 * does: a sub-agent's own calls are asked as any.
 */
export const needsApproval = (access: ToolAccess, input?: Record<string, unknown>, cwd?: string): boolean => {
  if (access === "mm") return false
  if (access !== "read") return true
  return cwd !== undefined && typeof input?.path === "string" && input.path !== "" && isOutsideProject(cwd, input.path)
}
