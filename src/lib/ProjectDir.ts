import * as NodeFs from "node:fs"
import * as NodePath from "node:path"

import { readRegularTextSync } from "./RegularFiles"

/**
 * The directories mm makes for its records, and the `.gitignore` that keeps a project's `.mm/`
 * out of git. Every writer of mm's records (sessions, checkpoints, the prompt's history, the
 * sandbox's `.mm/`, `.mm/tmp/`) makes its directory with `ensureProjectDir`, so that none
 * forgets the `.gitignore`. Nothing here runs until something is about to be written: a launch
 * without a question makes no directory and no file.
 */

/** The name of mm's records directory in a project. */
export const RECORDS_DIR_NAME = ".mm"

/**
 * What `.mm/.gitignore` holds: everything ignored (the file itself too), except what a project
 * shares with whoever clones it: its skills (`.mm/skills/`, docs/how-to/skills.md), its slash
 * commands (`.mm/commands/`) and its hook scripts (`.mm/hooks/`).
 */
export const RECORDS_GITIGNORE = [
  "# Written by mm: its records of this project (sessions, checkpoints, history) stay out of git.",
  "# The project's skills, commands and hook scripts (.mm/skills/, .mm/commands/, .mm/hooks/) may be committed.",
  "# mm rewrites this file only while it holds exactly what an older mm wrote.",
  "*",
  "!/skills/",
  "!/skills/**",
  "!/commands/",
  "!/commands/**",
  "!/hooks/",
  "!/hooks/**",
  ""
].join("\n")

/** What an older mm wrote (skills only): replaced by `RECORDS_GITIGNORE` when found as it is. */
export const OLDER_RECORDS_GITIGNORE = [
  "# Written by mm: its records of this project (sessions, checkpoints, history) stay out of git.",
  "# Project skills (.mm/skills/) may be committed. mm never rewrites this file once it exists.",
  "*",
  "!/skills/",
  "!/skills/**",
  ""
].join("\n")

type Fs = typeof NodeFs

/** The error of a path that should be a directory and is a file; `words` is what a message says. */
export const notADirectory = (dir: string) =>
  Object.assign(new Error(`${dir} is a file`), { code: "ENOTDIR", words: "it is a file, not a directory" })

const codeOf = (cause: unknown): unknown => (cause as { code?: unknown } | null)?.code

/**
 * Creates `dir` and its missing parents, tolerating another process doing the same; true when
 * this call made `dir`. Not `mkdirSync({ recursive })`: that one loops forever under /proc.
 */
const makeDirs = (fs: Fs, dir: string, depth: number): boolean => {
  try {
    fs.mkdirSync(dir, { mode: 0o700 })
    return true
  } catch (cause) {
    const code = codeOf(cause)
    if (code === "EEXIST") {
      if (fs.statSync(dir).isDirectory()) return false
      throw notADirectory(dir)
    }
    const parent = NodePath.dirname(dir)
    if (code !== "ENOENT" || parent === dir || depth > 64) throw cause
    makeDirs(fs, parent, depth + 1)
    return makeDirs(fs, dir, depth + 1)
  }
}

/** The `.mm/` directory `dir` is or lies in (the nearest one), as a path; undefined when none. */
export const recordsDirOf = (dir: string): string | undefined => {
  for (let current = NodePath.resolve(dir);;) {
    if (NodePath.basename(current) === RECORDS_DIR_NAME) return current
    const parent = NodePath.dirname(current)
    if (parent === current) return undefined
    current = parent
  }
}

/**
 * Gives `records` (a `.mm/` directory that exists) its `.gitignore` when it has none. Made with
 * O_EXCL, so that a file already there, the user's or another mm's written meanwhile, is never
 * replaced; a write that fails takes back the file it made, and the next write under `.mm/`
 * tries again. Quiet: a `.mm/` that cannot take it is reported by the write that needs it.
 */
export const ignoreRecords = (records: string, fs: Fs = NodeFs): void => {
  const file = NodePath.join(records, ".gitignore")
  let fd: number
  try {
    fd = fs.openSync(file, "wx", 0o644)
  } catch {
    upgradeIgnore(file, fs)
    return
  }
  try {
    fs.writeSync(fd, RECORDS_GITIGNORE)
    fs.closeSync(fd)
  } catch {
    try {
      fs.closeSync(fd)
    } catch {
      // already closed
    }
    try {
      fs.unlinkSync(file)
    } catch {
      // left as it is: git reads an empty file as ignoring nothing
    }
  }
}

/**
 * An older mm's `.gitignore`, word for word, replaced by today's (a temporary file renamed over
 * it); a file anyone changed is left as it is. Quiet, as `ignoreRecords` is.
 */
const upgradeIgnore = (file: string, fs: Fs): void => {
  try {
    // a named pipe put there is refused, not waited on
    if (readRegularTextSync(file, 4096, fs) !== OLDER_RECORDS_GITIGNORE) return
    const temp = `${file}.${process.pid}.tmp`
    fs.writeFileSync(temp, RECORDS_GITIGNORE, { mode: 0o644 })
    fs.renameSync(temp, file)
  } catch {
    // left as it is
  }
}

/** The `.mm/` directories this process has looked at for their `.gitignore`. */
const looked = new Set<string>()

/**
 * Makes sure `dir` is a directory (one mm creates gets mode 0700 whatever the umask); when it is
 * a `.mm/` or lies in one, that `.mm/` gets its `.gitignore` (`ignoreRecords`): when this call
 * made `dir`, and the first time this process writes there (a `.mm/` made by an older mm gets
 * it then). Throws what `mkdir` threw, or ENOTDIR when a file is in the way.
 */
export const ensureProjectDir = (dir: string, fs: Fs = NodeFs): void => {
  const stat = fs.statSync(dir, { throwIfNoEntry: false })
  if (stat !== undefined && !stat.isDirectory()) throw notADirectory(dir)
  const made = stat === undefined && makeDirs(fs, dir, 0)
  if (made) fs.chmodSync(dir, 0o700)
  const records = recordsDirOf(dir)
  if (records === undefined || (!made && looked.has(records))) return
  looked.add(records)
  ignoreRecords(records, fs)
}
