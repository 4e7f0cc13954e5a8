// A few lines of the system message saying where the model is: the working directory, the
// platform, today's date, the shell and, in a git repository, the branch and whether the
// tree has uncommitted changes. Computed once per turn, cheaply.
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import { gitBranch, type GitConfine, gitDirtyWithin, gitRoot } from "../lib/Git"
import type { SandboxShape } from "../tools/Sandbox"

/** The longest a turn waits for `git status` before it goes on with the last answer known. */
const GIT_STATUS_WAIT_MS = 50

interface EnvironmentInfo {
  readonly cwd: string
  readonly platform: string
  /** `YYYY-MM-DD`, local time. */
  readonly date: string
  readonly shell: string
  /** Only in a git work tree: the branch, and whether it has uncommitted changes (undefined: not known in time). */
  readonly git: { readonly branch: string | undefined; readonly dirty: boolean | undefined } | undefined
}

const pad = (n: number) => String(n).padStart(2, "0")

export const localDate = (now: Date): string => `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`

/**
 * How mm's own git runs for a turn in `cwd`: in the sandbox, with nothing writable and no
 * network, unless the sandbox is known to be off, so that nothing a repository names can
 * change anything even if it got past git's options (lib/Git.ts). It does not wait for the
 * probe of bubblewrap: while that is under way, git is put in the sandbox all the same, and
 * where bubblewrap turns out to be missing, that one answer is "not known".
 */
export const gitConfineOf = (sandbox: SandboxShape, cwd: string): Effect.Effect<GitConfine | undefined> =>
  Effect.sync(() => sandbox.readOnly(sandbox.known() ?? { _tag: "On", network: false, writable: [] }, cwd))

/**
 * The environment of a turn run in `cwd`; waits for `git status` at most GIT_STATUS_WAIT_MS.
 * `git` (how git runs) is asked for only in a git work tree: outside one, nothing here waits
 * for the sandbox's probe.
 */
export const environmentOf = (
  cwd: string,
  git: Effect.Effect<GitConfine | undefined>,
  now: Date = new Date()
): Effect.Effect<EnvironmentInfo> =>
  Effect.gen(function*() {
    const root = gitRoot(cwd)
    const shell = process.env.SHELL
    const confine = root === undefined ? undefined : yield* git
    return {
      cwd,
      platform: `${process.platform} ${os.arch()}`,
      date: localDate(now),
      shell: shell === undefined || shell === "" ? "unknown" : path.basename(shell),
      git: root === undefined ? undefined : {
        branch: gitBranch(root),
        dirty: yield* Effect.promise(() => gitDirtyWithin(root, GIT_STATUS_WAIT_MS, confine))
      }
    }
  }).pipe(Effect.withSpan("Environment.of"))

/** The section of the system message. */
export const environmentPrompt = (env: EnvironmentInfo): string => {
  const git = env.git === undefined
    ? []
    : [
      `- git branch: ${env.git.branch ?? "unknown"}${
        env.git.dirty === undefined ? "" : env.git.dirty ? " (uncommitted changes)" : " (clean)"
      }`
    ]
  return [
    "# Environment",
    "",
    `- working directory: ${env.cwd}`,
    `- platform: ${env.platform}`,
    `- date: ${env.date}`,
    `- shell: ${env.shell} (the bash tool runs bash)`,
    ...git
  ].join("\n")
}
