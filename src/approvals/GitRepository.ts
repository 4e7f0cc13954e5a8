// What a repository says about git's reading commands, for the read-only list
// (ReadOnlyCommands.ts): where the repository holding the project is, and whether its own
// configuration or hooks would have git run a program, or git would read beyond it.
import * as fs from "node:fs"
import * as path from "node:path"

import { readRegularTextSync } from "../lib/RegularFiles"
/**
 * Keys of a repository's own configuration with which git's reading commands run a program:
 * an fsmonitor (status, diff), an external diff or a diff driver's command or textconv (diff,
 * log, show, blame), a filter driver (status and diff clean the work tree's files), a
 * signature check (log.showSignature, gpg.program), a partial clone's lazy fetch, hooks kept
 * elsewhere (`core.hooksPath`). An include may hold any of them. A key may follow its
 * section's header on the same line (`[core] fsmonitor = …`). The user's own configuration is
 * theirs; the repository's may come with the project. A line's indentation is spaces and tabs
 * only (as git reads it; `^` starts a line after `\r` too): a `\s*` there would run over every
 * blank line after each line start, in time quadratic in a configuration of blank lines.
 */
const RUNS_PROGRAMS =
  /^[ \t]*(?:\[[^\]\n]*\][ \t]*)?(?:\[\s*include|(fsmonitor|external|command|textconv|clean|smudge|process|showsignature|program|partialclone|promisor|hookspath)\s*(?:=|$))/im

/** The repository holding `cwd`: its top (the work tree's), its configuration files and its hooks' directory. */
export interface Repository {
  readonly top: string
  readonly configs: ReadonlyArray<string>
  readonly hooks: string
}

export const findRepository = (cwd: string): Repository | undefined => {
  for (let dir = cwd;; dir = path.dirname(dir)) {
    const dotGit = path.join(dir, ".git")
    const stat = fs.statSync(dotGit, { throwIfNoEntry: false })
    if (stat?.isDirectory() === true) {
      return { top: dir, configs: [path.join(dotGit, "config")], hooks: path.join(dotGit, "hooks") }
    }
    if (stat?.isFile() === true) {
      const gitDir = /^gitdir: (.+)$/m.exec(readRegularTextSync(dotGit, 64 * 1024))?.[1]
      if (gitDir === undefined) return { top: dir, configs: [dotGit], hooks: dotGit }
      const own = path.resolve(dir, gitDir.trim())
      const common = fs.existsSync(path.join(own, "commondir"))
        ? path.resolve(own, readRegularTextSync(path.join(own, "commondir"), 64 * 1024).trim())
        : own
      return {
        top: dir,
        configs: [path.join(own, "config"), path.join(own, "config.worktree"), path.join(common, "config")],
        hooks: path.join(common, "hooks")
      }
    }
    if (path.dirname(dir) === dir) return undefined
  }
}

/** A repository's configuration larger than this is not read (git is then not taken as read-only). */
const CONFIG_MAX_BYTES = 4 * 1024 * 1024

/** The text of a configuration file; "" when there is none; undefined when it cannot be read (a FIFO, too large…). */
const configText = (file: string): string | undefined => {
  try {
    return readRegularTextSync(file, CONFIG_MAX_BYTES)
  } catch (cause) {
    return (cause as NodeJS.ErrnoException).code === "ENOENT" ? "" : undefined
  }
}

/**
 * Why git may run a program the repository names, or read more than the repository: outside a
 * repository `git diff` compares folders as with --no-index; a hook `git status` runs when it
 * rewrites the index (post-index-change); a key of the configuration (a configuration that
 * cannot be read counts as one). Undefined when none.
 */
export const repositoryRuns = (cwd: string): string | undefined => {
  let repository: Repository | undefined
  try {
    repository = findRepository(cwd)
  } catch {
    return "the repository's configuration cannot be found"
  }
  if (repository === undefined) return "git outside a repository may read any folder (as git diff --no-index)"
  if (fs.existsSync(path.join(repository.hooks, "post-index-change"))) {
    return "the repository has a post-index-change hook, which git status may run"
  }
  for (const file of repository.configs) {
    const text = configText(file)
    if (text === undefined) return `the repository's configuration ${file} cannot be read`
    const found = RUNS_PROGRAMS.exec(text)
    if (found !== null) {
      return `the repository's configuration ${file} names a program git may run (${found[1] ?? "an include"})`
    }
  }
  return undefined
}
