// What mm needs to know of a git repository, read cheaply: its work tree's root and its
// branch from the files under .git (no process started), and whether the tree has
// uncommitted changes from `git status`, run in the background and never waited for long.
import * as fs from "node:fs"
import * as path from "node:path"

import { nodeChildProcesses } from "./NodeModules"

/** The root of the git work tree holding `dir` (the nearest folder with a `.git`), or undefined. */
export const gitRoot = (dir: string): string | undefined => {
  let at = path.resolve(dir)
  for (;;) {
    try {
      fs.statSync(path.join(at, ".git"))
      return at
    } catch {
      const parent = path.dirname(at)
      if (parent === at) return undefined
      at = parent
    }
  }
}

const readSmall = (file: string): string | undefined => {
  try {
    const text = fs.readFileSync(file, "utf8")
    return text.length > 4096 ? undefined : text
  } catch {
    return undefined
  }
}

/** The git directory of a work tree: `.git` itself, or where a `.git` file (`gitdir: …`) points. */
const gitDir = (root: string): string | undefined => {
  const dotGit = path.join(root, ".git")
  try {
    if (fs.statSync(dotGit).isDirectory()) return dotGit
  } catch {
    return undefined
  }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(dotGit) ?? "")
  return match === null ? undefined : path.resolve(root, match[1])
}

/** `main`, or `detached at 1a2b3c4` — read from `.git/HEAD`; undefined when it cannot be read. */
export const gitBranch = (root: string): string | undefined => {
  const dir = gitDir(root)
  const head = dir === undefined ? undefined : readSmall(path.join(dir, "HEAD"))?.trim()
  if (head === undefined || head === "") return undefined
  const ref = /^ref:\s*refs\/heads\/(.+)$/.exec(head)
  if (ref !== null) return ref[1]
  return /^[0-9a-f]{7,64}$/.test(head) ? `detached at ${head.slice(0, 7)}` : undefined
}

/** How long a `git status` may run in the background before it is killed. */
const STATUS_TIMEOUT_MS = 5000

/**
 * Whether the work tree at `root` has uncommitted changes (untracked files count), from
 * `git status --porcelain`; undefined when git is missing, fails or is too slow. Never takes
 * git's optional locks, so that it never gets in the way of the user's own git commands.
 */
export const gitDirty = (root: string): Promise<boolean | undefined> =>
  new Promise((resolve) => {
    try {
      nodeChildProcesses().execFile(
        "git",
        ["--no-optional-locks", "status", "--porcelain"],
        {
          cwd: root,
          timeout: STATUS_TIMEOUT_MS,
          maxBuffer: 64 * 1024 * 1024,
          env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" },
          windowsHide: true
        },
        (error, stdout) => resolve(error === null ? stdout.trim() !== "" : undefined)
      ).stdin?.end()
    } catch {
      resolve(undefined)
    }
  })

/** Per work tree: the last answer of `git status`, and the one under way. */
const probes = new Map<string, { last: boolean | undefined; running: Promise<boolean | undefined> | undefined }>()

/**
 * Whether the tree is dirty, waiting at most `waitMs` for a fresh `git status`: when it is
 * slower, the answer of the previous one (undefined the first time), while the fresh one
 * goes on in the background for the next call. One `git status` at a time per tree.
 */
export const gitDirtyWithin = (root: string, waitMs: number): Promise<boolean | undefined> => {
  const probe = probes.get(root) ?? { last: undefined, running: undefined }
  probes.set(root, probe)
  if (probe.running === undefined) {
    const running = gitDirty(root).then((dirty) => {
      probe.last = dirty
      probe.running = undefined
      return dirty
    })
    probe.running = running
  }
  const running = probe.running
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(probe.last), waitMs)
    timer.unref()
    void running.then((dirty) => {
      clearTimeout(timer)
      resolve(dirty)
    })
  })
}
