import { isInsideProject } from "../lib/RealPath"

/**
 * Whether `file` (relative to `cwd`) really lies outside the project directory `cwd`: every
 * symbolic link on the way followed (dangling ones too), and a file with other hard links
 * counts as outside (lib/RealPath.ts).
 */
export const isOutsideProject = (cwd: string, file: string): boolean => !isInsideProject(cwd, file)

/** The tools that only read: asked only for a path outside the project. */
const READ_TOOLS = new Set(["read_file", "grep", "glob"])

/**
 * Whether a call waits for approval under `permissions: ask`: every call that changes
 * things, and a read_file, grep or glob of a path outside the project directory (given
 * `input` and `cwd`).
 */
export const needsApproval = (name: string, input?: Record<string, unknown>, cwd?: string): boolean =>
  name === "bash" ||
  name === "write_file" ||
  name === "edit_file" ||
  (READ_TOOLS.has(name) && cwd !== undefined && typeof input?.path === "string" && input.path !== "" &&
    isOutsideProject(cwd, input.path))
