import * as fs from "node:fs"
import * as path from "node:path"

const realOrResolved = (file: string): string => {
  try {
    return fs.realpathSync(file)
  } catch {
    return path.resolve(file)
  }
}

/** Whether `file` (relative to `cwd`, symbolic links followed) lies outside the project directory `cwd`. */
export const isOutsideProject = (cwd: string, file: string): boolean => {
  const relative = path.relative(realOrResolved(cwd), realOrResolved(path.resolve(cwd, file)))
  return relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)
}

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
