import type * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { nameHash } from "./QuickIds"
import { realPathOf } from "./RealPath"

/**
 * Where mm keeps what belongs to the user rather than to a project (SPEC §14): nothing a
 * repository ships can write here, so what is found here can grant something.
 *
 * - `userStateDir`: `$XDG_STATE_HOME/mm` (when absolute, as the XDG spec asks), else
 *   `~/.local/state/mm` — remembered approvals and project trust, per project under
 *   `projects/<hash of the project's real path>/`.
 * - `userConfigDir`: `$XDG_CONFIG_HOME/mm`, else `~/.config/mm` — the user's own agent.yaml.
 */
const xdgDir = (value: string | undefined, fallback: ReadonlyArray<string>, home: string): string =>
  path.join(value !== undefined && path.isAbsolute(value) ? value : path.join(home, ...fallback), "mm")

export const userStateDir = (env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string =>
  xdgDir(env.XDG_STATE_HOME, [".local", "state"], home)

export const userConfigDir = (env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string =>
  xdgDir(env.XDG_CONFIG_HOME, [".config"], home)

/** A path as the user reads it: `~/…` under the home directory, else as it is. */
export const shownHomePath = (file: string, home: string = os.homedir()): string =>
  home !== "" && file.startsWith(home + path.sep) ? `~${file.slice(home.length)}` : file

/** The project's own directory under the user's state: one per real path (links followed), never created here. */
export const projectStateDir = (project: string, env: NodeJS.ProcessEnv = process.env): string => {
  let real: string
  try {
    real = realPathOf(project)
  } catch {
    real = path.resolve(project)
  }
  return path.join(userStateDir(env), "projects", nameHash(real))
}

/** Why a file or directory of the user's state others could change is not trusted; undefined when only its owner, the user, can. */
export const othersMayWrite = (stat: fs.Stats): string | undefined => {
  const uid = process.getuid?.()
  if (uid !== undefined && stat.uid !== uid) return "belongs to another user"
  return (stat.mode & 0o022) !== 0 ? "is writable by others" : undefined
}
