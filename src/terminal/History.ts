import * as fs from "node:fs"
import * as path from "node:path"

import { ensureProjectDir } from "../lib/ProjectDir"
import { readRegularTextSync } from "../lib/RegularFiles"

/** How many typed lines are kept, newest last. */
const HISTORY_LIMIT = 1000
/** A history file larger than this is not read (1,000 lines are far less). */
const HISTORY_MAX_BYTES = 64 * 1024 * 1024

/**
 * Lines typed at the prompt, oldest first. With a file (the project's `.mm/history`, mode
 * 0600, one JSON string a line so that a question of several lines stays one entry) they
 * outlive the launch; without one (sessions off) they live in memory only.
 */
export interface History {
  readonly entries: () => ReadonlyArray<string>
  readonly add: (line: string) => void
}

const parse = (text: string): Array<string> =>
  text.split("\n").flatMap((line) => {
    if (line.trim() === "") return []
    try {
      const value: unknown = JSON.parse(line)
      return typeof value === "string" ? [value] : []
    } catch {
      return []
    }
  })

/** The lines of the history file; undefined when there is none or it cannot be read (a FIFO, a link elsewhere…). */
const readFile = (file: string): Array<string> | undefined => {
  try {
    return parse(readRegularTextSync(file, HISTORY_MAX_BYTES))
  } catch {
    return undefined
  }
}

/**
 * Writes the history file itself, never through a link (a project may hold `.mm/history` as a
 * link to a file elsewhere, which would be overwritten) and never into a FIFO or a device
 * (opening one without a reader fails at once instead of blocking): O_NOFOLLOW, O_NONBLOCK,
 * and a regular file checked on the descriptor before a byte is written.
 */
const writeOwnFile = (file: string, text: string): void => {
  const { O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants
  const fd = fs.openSync(file, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600)
  try {
    if (!fs.fstatSync(fd).isFile()) return
    fs.ftruncateSync(fd, 0)
    fs.writeSync(fd, text, 0)
    fs.fchmodSync(fd, 0o600)
  } finally {
    fs.closeSync(fd)
  }
}

export const makeHistory = (file: string | undefined): History => {
  let entries: Array<string> = file === undefined ? [] : (readFile(file) ?? []).slice(-HISTORY_LIMIT)
  const add = (line: string) => {
    if (line.trim() === "") return
    // another mm in the same project may have added lines since: theirs are kept too
    const base = file === undefined ? entries : readFile(file) ?? entries
    entries = [...base.filter((entry) => entry !== line), line].slice(-HISTORY_LIMIT)
    if (file === undefined) return
    try {
      ensureProjectDir(path.dirname(file))
      writeOwnFile(file, entries.map((entry) => JSON.stringify(entry)).join("\n") + "\n")
    } catch {
      // a history that cannot be written is kept in memory: typing goes on
    }
  }
  return { entries: () => entries, add }
}
