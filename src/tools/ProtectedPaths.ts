import * as fs from "node:fs"
import * as path from "node:path"

import { realPathOf } from "../lib/RealPath"

/**
 * The parts of a project that decide what runs and what is trusted, rather than being the
 * user's work: git's own directory (its config can name a program git runs, its hooks are
 * programs), mm's records (sessions, checkpoints, remembered approvals) and the project's
 * agent.yaml (it can start MCP servers and turn the sandbox off). A confined command sees them
 * read-only (tools/Sandbox.ts); a file tool's write to one is asked as if it were outside the
 * project, in every mode that asks at all (approvals/ApprovalScope.ts).
 */
export const PROTECTED_NAMES: ReadonlyArray<string> = [".git", ".mm", "agent.yaml"]

/** Why each one is kept from the model's writes, in words the approval question shows. */
const WHY: Record<string, string> = {
  ".git": "it is in .git/, where a line of config can make git run a program",
  ".mm": "it is in .mm/, mm's own records of this project",
  "agent.yaml": "it is the project's agent.yaml, which says what mm may run"
}

const within = (dir: string, file: string): boolean => {
  const relative = path.relative(dir, file)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

const realOrSelf = (file: string): string => {
  try {
    return realPathOf(file)
  } catch {
    return path.resolve(file)
  }
}

/**
 * Why `real` (a real path, links followed) is one of `project`'s protected paths or lies under
 * one; undefined when it is not.
 */
export const protectedReason = (project: string, real: string): string | undefined => {
  const root = realOrSelf(project)
  for (const name of PROTECTED_NAMES) {
    if (within(path.join(root, name), real)) return WHY[name]
  }
  return undefined
}

/** The protected paths of `project` that exist now, absolute (what the sandbox binds read-only). */
export const existingProtected = (project: string): ReadonlyArray<string> =>
  PROTECTED_NAMES.map((name) => path.join(project, name)).filter((file) => fs.existsSync(file))
