import { isInsideProject } from "../lib/RealPath"

/**
 * Whether `file` (relative to `cwd`) really lies outside the project directory `cwd`: every
 * symbolic link on the way followed (dangling ones too), and a file with other hard links
 * counts as outside (lib/RealPath.ts).
 */
export const isOutsideProject = (cwd: string, file: string): boolean => !isInsideProject(cwd, file)

/**
 * Whether a call waits for approval under `permissions: ask`: every call that changes
 * things, and a read_file of a path outside the project directory (given `input` and `cwd`).
 */
export const needsApproval = (name: string, input?: Record<string, unknown>, cwd?: string): boolean =>
  name === "bash" ||
  name === "write_file" ||
  name === "edit_file" ||
  (name === "read_file" && cwd !== undefined && typeof input?.path === "string" && isOutsideProject(cwd, input.path))
