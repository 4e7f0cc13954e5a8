// What mm needs to know of a git repository, read cheaply: its work tree's root and its
// branch from the files under .git (no process started), and whether the tree has
// uncommitted changes from `git status`, run in the background and never waited for long.
//
// What it guarantees: the git processes mm starts run no program that the repository can
// name. A repository's configuration (`.git/config`, the files it includes, a worktree's
// config) can make git run a command: an fsmonitor, a hook, a filter driver that a
// `.gitattributes` line applies to files, a remote's upload-pack when a partial clone fetches
// an object it lacks. A confined command, or a cloned repository, can write that
// configuration. So every git call
// turns each of those off on its command line (`-c`, which outranks every configuration
// file), filter drivers by the names the configuration lists just before `status`; a
// repository that is a partial clone, or names a filter `-c` cannot turn off, is not asked.
// No call touches the network (submodules are ignored, lazy fetching is off), so the keys
// naming programs for the network (core.sshCommand, credential.helper, core.askPass) never
// come into play; no call pages, edits or prompts. What the options cannot foresee (a filter
// added between the listing and `status`, through a FIFO the configuration includes) is why
// the caller may also confine `status` (`GitConfine`: the sandbox, with nothing writable); the
// listing itself runs no program and is never confined. A git left waiting is killed with mm.
// And the answer is cheap: all of one answer's calls are killed after 5 s, one answer is
// sought at a time per tree, and any failure is "not known" (undefined).
import type { ExecFileException } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { nodeChildProcesses } from "./NodeModules"
import { forgetProcess, killProcessOnExit } from "./ProcessGroups"
import { programPath } from "./Programs"
import { readRegularTextSync } from "./RegularFiles"

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

/**
 * A small regular file's text. Opened without blocking and checked to be a regular file
 * first: a confined command can put a FIFO where `.git` or `HEAD` is, and reading one would
 * hold mm until something writes to it.
 */
const readSmall = (file: string): string | undefined => {
  try {
    return readRegularTextSync(file, 4096)
  } catch {
    return undefined
  }
}

/** The git directory of a work tree: `.git` itself, or where a `.git` file (`gitdir: …`) points. */
export const gitDir = (root: string): string | undefined => {
  const dotGit = path.join(root, ".git")
  try {
    if (fs.statSync(dotGit).isDirectory()) return dotGit
  } catch {
    return undefined
  }
  const match = /^gitdir:\s*(.+?)\s*$/m.exec(readSmall(dotGit) ?? "")
  return match === null ? undefined : path.resolve(root, match[1])
}

/** The common directory a linked work tree's git directory names (`commondir`), or undefined. */
export const gitCommonDir = (dir: string): string | undefined => {
  const named = readSmall(path.join(dir, "commondir"))?.trim()
  return named === undefined || named === "" ? undefined : path.resolve(dir, named)
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

/** The longest mm's git calls for one answer may take, all together, before they are killed. */
const GIT_TIMEOUT_MS = 5000

/**
 * Before the subcommand of every git call. `core.fsmonitor` is emptied rather than set to
 * `false`: before git 2.36 the key named a hook, and `false` would have been run as one.
 * Hooks are looked for in /dev/null, where there are none.
 */
const SAFE_OPTIONS: ReadonlyArray<string> = [
  "--no-pager",
  "--no-optional-locks",
  "-c",
  "core.fsmonitor=",
  "-c",
  "core.hooksPath=/dev/null"
]

/**
 * The user's environment, with: no prompt on the terminal for a password, no optional lock
 * taken (never in the way of the user's own git), and no object fetched from a promisor
 * remote (git 2.39.4 and later; older ones are covered by not asking a partial clone).
 * Pager, editor and askpass variables are left as they are: they come from the user, not
 * the project, and no call here pages, edits or asks for a password.
 */
const safeEnv = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv => ({
  ...env,
  GIT_TERMINAL_PROMPT: "0",
  GIT_OPTIONAL_LOCKS: "0",
  GIT_NO_LAZY_FETCH: "1"
})

interface GitOutput {
  readonly code: number
  readonly stdout: string
}

/** The exit code of a finished git, or undefined when it did not start, was killed or said too much. */
const exitCode = (error: ExecFileException | null): number | undefined => {
  if (error === null) return 0
  const killed = error.killed === true || (error.signal !== undefined && error.signal !== null)
  return typeof error.code === "number" && !killed ? error.code : undefined
}

/**
 * How git is started: as it is, or put in the sandbox (read-only, with no network) by the
 * caller, given the whole command line; the environment it gets is then the sandbox's.
 */
export type GitConfine = (argv: ReadonlyArray<string>) => {
  readonly argv: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/** The command line and environment of `git SAFE_OPTIONS args`, confined when `confine` is given. */
const gitCommand = (root: string, args: ReadonlyArray<string>, confine: GitConfine | undefined) => {
  const argv = [programPath("git", [root]), ...SAFE_OPTIONS, ...args]
  if (confine === undefined) return { argv, env: safeEnv(process.env) }
  const confined = confine(argv)
  return { argv: confined.argv, env: safeEnv(confined.env) }
}

/**
 * Runs `git SAFE_OPTIONS args` in `root`, killed at `deadline` (ms since the epoch) or when
 * mm exits, whichever comes first: a git left waiting (on a FIFO a command put in its
 * configuration's way, say) must not outlive mm.
 */
const runGit = (
  root: string,
  args: ReadonlyArray<string>,
  deadline: number,
  confine: GitConfine | undefined
): Promise<GitOutput | undefined> =>
  new Promise((resolve) => {
    const timeout = deadline - Date.now()
    if (timeout <= 0) return resolve(undefined)
    try {
      const { argv, env } = gitCommand(root, args, confine)
      const child = nodeChildProcesses().execFile(
        argv[0],
        argv.slice(1),
        { cwd: root, timeout, killSignal: "SIGKILL", maxBuffer: 64 * 1024 * 1024, env, windowsHide: true },
        (error, stdout) => {
          if (child.pid !== undefined) forgetProcess(child.pid)
          const code = exitCode(error)
          resolve(code === undefined ? undefined : { code, stdout })
        }
      )
      if (child.pid !== undefined) killProcessOnExit(child.pid)
      child.stdin?.end()
    } catch {
      resolve(undefined)
    }
  })

/**
 * The configuration keys, across every scope and include, that name a filter driver or make
 * the repository a partial clone. Reading configuration runs no program. `git config` exits
 * with 1 when no key matches.
 */
const riskyKeys = async (root: string, deadline: number): Promise<ReadonlyArray<string> | undefined> => {
  const output = await runGit(
    root,
    [
      "config",
      "-z",
      "--name-only",
      "--get-regexp",
      "^filter\\.|^extensions\\.partialclone$|^remote\\..*\\.promisor$"
    ],
    deadline,
    undefined // reading configuration runs no program
  )
  if (output === undefined || output.code > 1) return undefined
  return output.code === 1 ? [] : output.stdout.split("\0").filter((key) => key !== "")
}

/** A partial clone may fetch a missing object during `status`, running what its remote names. */
const isPartialClone = (keys: ReadonlyArray<string>): boolean => keys.some((key) => !key.startsWith("filter."))

/**
 * The filter drivers the keys name: `filter.<name>.<key>`, where the name may hold dots (the
 * last dot starts the key) and may be empty. `filter.clean`, with no name, is no driver.
 */
const filterDrivers = (keys: ReadonlyArray<string>): ReadonlySet<string> =>
  new Set(
    keys.flatMap((key) => {
      const rest = key.slice("filter.".length)
      const dot = rest.lastIndexOf(".")
      return key.startsWith("filter.") && dot >= 0 ? [rest.slice(0, dot)] : []
    })
  )

/**
 * `-c` options that leave each driver with no command and not required, so that git stores
 * the file as it is. Undefined when a name holds `=`, which `-c` cannot say.
 */
const filterOverrides = (drivers: ReadonlySet<string>): ReadonlyArray<string> | undefined => {
  const names = [...drivers]
  if (names.some((name) => name.includes("="))) return undefined
  return names.flatMap((name) =>
    ["clean=", "smudge=", "process=", "required=false"].flatMap((setting) => ["-c", `filter.${name}.${setting}`])
  )
}

/**
 * What `git status` is asked: whether anything changed, in the tree and the index only (no
 * submodule), without rename detection, which reads objects' contents and is not needed to
 * know that something changed.
 */
const STATUS_ARGS: ReadonlyArray<string> = ["status", "--porcelain", "--ignore-submodules=all", "--no-renames"]

/**
 * Whether the work tree at `root` has uncommitted changes (untracked files count), from
 * `git status --porcelain`, after reading which filter drivers the configuration names;
 * undefined when git is missing, fails, takes more than GIT_TIMEOUT_MS in all, or the
 * repository is a partial clone or names a filter driver no option can turn off.
 */
export const gitDirty = async (root: string, confine?: GitConfine): Promise<boolean | undefined> => {
  const deadline = Date.now() + GIT_TIMEOUT_MS
  const keys = await riskyKeys(root, deadline)
  if (keys === undefined || isPartialClone(keys)) return undefined
  const overrides = filterOverrides(filterDrivers(keys))
  if (overrides === undefined) return undefined
  const status = await runGit(root, [...overrides, ...STATUS_ARGS], deadline, confine)
  return status === undefined || status.code !== 0 ? undefined : status.stdout.trim() !== ""
}

/** Per work tree: the last answer of `git status`, and the one under way. */
const probes = new Map<string, { last: boolean | undefined; running: Promise<boolean | undefined> | undefined }>()

/**
 * Whether the tree is dirty, waiting at most `waitMs` for a fresh `git status`: when it is
 * slower, the answer of the previous one (undefined the first time), while the fresh one
 * goes on in the background for the next call. One `git status` at a time per tree.
 */
export const gitDirtyWithin = (
  root: string,
  waitMs: number,
  confine?: GitConfine
): Promise<boolean | undefined> => {
  const probe = probes.get(root) ?? { last: undefined, running: undefined }
  probes.set(root, probe)
  if (probe.running === undefined) {
    const running = gitDirty(root, confine).then((dirty) => {
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
