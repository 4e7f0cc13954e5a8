import * as fs from "node:fs"
import * as path from "node:path"

import { userCacheDir } from "../lib/CacheDir"
import { gitCommonDir, gitDir } from "../lib/Git"
import { type ProjectTarget, projectTargetOf, realPathOf, within } from "../lib/RealPath"
import { userConfigDir, userStateDir } from "../lib/UserState"

/**
 * The parts of a project that decide what runs and what is trusted, rather than being the
 * user's work: git's own directory (its config can name a program git runs, its hooks are
 * programs), mm's records (sessions, checkpoints) and the project's
 * agent.yaml (it can start MCP servers and turn the sandbox off). A confined command sees them
 * read-only (tools/Sandbox.ts); a file tool's write to one counts as a write outside the
 * project (`writeTarget` below): asked in every mode that asks at all, never covered by an
 * "always".
 */
export const PROTECTED_NAMES: ReadonlyArray<string> = [".git", ".mm", "agent.yaml"]

/** The protected paths named in a sentence: `.git/, .mm/ and agent.yaml`. */
export const PROTECTED_TEXT = ".git/, .mm/ and agent.yaml"

/** Why each one is kept from the model's writes, in words the approval question shows. */
const WHY: Record<string, string> = {
  ".git": "it is in .git/, where a line of config can make git run a program",
  ".mm": "it is in .mm/, mm's own records of this project",
  "agent.yaml": "it is the project's agent.yaml, which says what mm may run"
}

const realOrSelf = (file: string): string => {
  try {
    return realPathOf(file)
  } catch {
    return path.resolve(file)
  }
}

/** Whether `a` and `b` both exist and are the same file (same device and inode). */
const sameFile = (a: string, b: string): boolean => {
  const one = fs.lstatSync(a, { throwIfNoEntry: false })
  const other = fs.lstatSync(b, { throwIfNoEntry: false })
  return one !== undefined && other !== undefined && one.dev === other.dev && one.ino === other.ino
}

/**
 * mm's own directories of the user — configuration, state (remembered approvals, trusted
 * projects), cache (configurations decoded at start) — when the project holds them (mm run in
 * the home directory): each as the project's entry that holds it (`~/.config`, not only
 * `~/.config/mm`, so that it cannot be renamed away and made again), and why.
 */
const userDirsIn = (
  project: string
): ReadonlyArray<{ readonly dir: string; readonly top: string; readonly why: string }> => {
  const root = realOrSelf(project)
  return [
    { dir: userConfigDir(), what: "your own configuration of mm" },
    { dir: userStateDir(), what: "your remembered approvals and trusted projects" },
    { dir: userCacheDir(), what: "mm's cache of decoded configurations" }
  ].flatMap(({ dir, what }) => {
    const real = realOrSelf(dir)
    if (real === root || !within(root, real)) return []
    const top = path.join(root, path.relative(root, real).split(path.sep)[0])
    return [{ dir, top, why: `it is in ${top}, which holds ${what}` }]
  })
}

/**
 * Why `real` (a real path, links followed) is one of `project`'s protected paths or lies under
 * one; undefined when it is not. Names are compared whole (`.gitignore`, `.github/` and
 * `.mm-notes` are not protected) and with their case, except that a name differing only in
 * case counts when it is the protected file itself, as on a file system that ignores case
 * (`.GIT` is `.git` on macOS, another directory on Linux).
 */
export const protectedReason = (project: string, real: string): string | undefined => {
  const root = realOrSelf(project)
  if (!within(root, real)) return undefined
  const [first] = path.relative(root, real).split(path.sep)
  if (first === undefined || first === "") return undefined
  for (const name of PROTECTED_NAMES) {
    if (first === name) return WHY[name]
    if (first.toLowerCase() === name.toLowerCase() && sameFile(path.join(root, first), path.join(root, name))) {
      return WHY[name]
    }
  }
  return userDirsIn(project).find(({ top }) => within(top, real))?.why
}

/**
 * The protected paths of `project` that exist now, absolute (what the sandbox binds read-only):
 * the names above, where a `.git` file sends git when that is inside the project too (a
 * `git init --separate-git-dir` made by a command, a linked work tree), with its common
 * directory, and the entries holding mm's own directories of the user (`userDirsIn`).
 */
export const existingProtected = (project: string): ReadonlyArray<string> => {
  const named = PROTECTED_NAMES.map((name) => path.join(project, name)).filter((file) => fs.existsSync(file))
  const dir = gitDir(project)
  const common = dir === undefined ? undefined : gitCommonDir(dir)
  const root = realOrSelf(project)
  const elsewhere = [dir, common].filter((d): d is string =>
    d !== undefined && fs.existsSync(d) && within(root, realOrSelf(d)) && !named.some((n) => within(n, d))
  )
  // mm's own directories of the user, made first when missing (a command could make them)
  const mine = userDirsIn(project).map(({ dir, top }) => {
    try {
      fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    } catch {
      // bound read-only as far as it exists
    }
    return top
  }).filter((top) => fs.existsSync(top) && !named.includes(top))
  return [...named, ...elsewhere, ...new Set(mine)]
}

/**
 * Where a file tool's write lands, as the approval rule counts it: `Outside` when its real
 * target is outside the project (lib/RealPath.ts) or is a protected path or under one
 * (`protectedPath` set, `why` saying which and why); `Inside` otherwise.
 */
export type WriteTarget =
  | { readonly _tag: "Inside"; readonly real: string }
  | { readonly _tag: "Outside"; readonly real: string; readonly why: string; readonly protectedPath: boolean }

/**
 * The one answer to "is this write inside the project?" for the approval rule, the "always"
 * choices and the preview: `file` (relative to `project`, or absolute) resolved link by link,
 * and a protected path counted as outside. Reads do not use it: reading .git is not the danger.
 */
export const writeTarget = (project: string, file: string): WriteTarget => {
  const target: ProjectTarget = projectTargetOf(project, file)
  if (target._tag === "Outside") return { ...target, protectedPath: false }
  const why = protectedReason(project, target.real)
  return why === undefined ? target : { _tag: "Outside", real: target.real, why, protectedPath: true }
}

/** Whether a write to `file` counts as inside the project (`writeTarget`). */
export const writesInsideProject = (project: string, file: string): boolean =>
  writeTarget(project, file)._tag === "Inside"
