// grep's search itself, run in the search worker (SearchWorker.ts): the walk, the reading of
// each file (regular files of at most 8 MiB, opened without blocking, no NUL near the start),
// a byte search first for a pattern without special characters, the matching, and the result
// with its caps. The heartbeat says which file is read or matched, so that a pattern stuck on
// one can be stopped from the main thread and named.
import * as fs from "node:fs"

import { firstLineOf } from "../lib/OneLine"
import { globMatcher } from "./GlobMatch"
import { shownPathOf, walkFiles } from "./ProjectWalk"
import { clockOf, Doing, filesOf, type GrepRequest, type Pulse, secondsOf } from "./SearchProtocol"
import { looksSecret, secretsLeftOut, secretTestOf } from "./SecretFiles"
import { failure, GREP_MAX_MATCHES, type ToolResult } from "./Tool"

/** Characters of one matching line shown. */
const LINE_MAX = 200
/** Files larger than this are not searched. */
const FILE_MAX_BYTES = 8 * 1024 * 1024
/** Bytes looked at for a NUL, which marks a binary file. */
const BINARY_PROBE = 8000

/** Reads files into one buffer, reused from file to file. */
const makeReader = () => {
  let buffer = Buffer.allocUnsafe(64 * 1024)
  /** The bytes of a regular text file of at most FILE_MAX_BYTES (valid until the next read), else undefined. */
  return (file: string): Buffer | undefined => {
    let fd: number | undefined
    try {
      fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      const stat = fs.fstatSync(fd)
      if (!stat.isFile() || stat.size > FILE_MAX_BYTES) return undefined
      if (stat.size > buffer.length) buffer = Buffer.allocUnsafe(stat.size)
      let filled = 0
      while (filled < stat.size) {
        const n = fs.readSync(fd, buffer, filled, stat.size - filled, filled)
        if (n === 0) break
        filled += n
      }
      const bytes = buffer.subarray(0, filled)
      const probe = bytes.indexOf(0)
      return probe !== -1 && probe < BINARY_PROBE ? undefined : bytes
    } catch {
      return undefined
    } finally {
      if (fd !== undefined) fs.closeSync(fd)
    }
  }
}

/** A pattern with no special character of a regular expression is looked for as bytes first. */
const literalOf = (request: GrepRequest): Buffer | undefined =>
  !request.ignoreCase && !/[\\^$.|?*+()[\]{}]/.test(request.pattern) ? Buffer.from(request.pattern) : undefined

interface Found {
  readonly lines: Array<string>
  size: number
  matches: number
  full: boolean
  /** Files of the walk left out because they look secret. */
  secret: number
  /** Files read (or left out as binary, too large, not regular). */
  files: number
  /** Whether the search ran out of time before its end. */
  late: boolean
  /** The time it had, in milliseconds. */
  readonly totalMs: number
}

interface Search {
  readonly found: Found
  readonly pulse: Pulse
  readonly late: () => boolean
  readonly budget: number
}

/** Adds the matching lines of one file; false once the matches, the size or the time are at their cap. */
const searchText = (text: string, shown: string, line: RegExp, search: Search): boolean => {
  const { found } = search
  const lines = text.split("\n")
  for (let n = 0; n < lines.length; n++) {
    search.pulse.beat()
    if (search.late()) {
      found.late = true
      return false
    }
    const content = lines[n].endsWith("\r") ? lines[n].slice(0, -1) : lines[n]
    if (!line.test(content)) continue
    const trimmed = content.trim()
    const cut = trimmed.length > LINE_MAX ? `${trimmed.slice(0, LINE_MAX)}…` : trimmed
    const entry = `${shown}:${n + 1}: ${cut}`
    if (found.matches >= GREP_MAX_MATCHES || found.size + entry.length + 1 > search.budget) {
      found.full = true
      return false
    }
    found.lines.push(entry)
    found.size += entry.length + 1
    found.matches++
  }
  return true
}

const grepResult = (found: Found): ToolResult => {
  const secret = found.secret === 0 ? [] : [secretsLeftOut(found.secret, "not searched")]
  const late = found.late
    ? [`[stopped at the ${secondsOf(found.totalMs)} limit, ${filesOf(found.files)} searched; narrow the path or glob]`]
    : []
  if (found.lines.length === 0) return { output: ["no matches", ...late, ...secret].join("\n"), failed: false }
  const more = found.full
    ? [
      `[stopped at ${found.matches} matching lines${
        found.matches < GREP_MAX_MATCHES ? " (output limit)" : ""
      }; narrow the pattern, path or glob to see the others]`
    ]
    : []
  return { output: [...found.lines, ...more, ...late, ...secret].join("\n"), failed: false }
}

const compile = (request: GrepRequest): { line: RegExp; whole: RegExp } | string => {
  const flags = request.ignoreCase ? "i" : ""
  try {
    return { line: new RegExp(request.pattern, flags), whole: new RegExp(request.pattern, `${flags}m`) }
  } catch (cause) {
    return `invalid regular expression: ${firstLineOf(cause)}`
  }
}

/** The whole of a grep, in the worker: its result (a `glob` picomatch refuses throws, said by the worker). */
export const runGrep = async (request: GrepRequest, pulse: Pulse, totalMs: number): Promise<ToolResult> => {
  const regex = compile(request)
  if (typeof regex === "string") return failure(regex)
  const found: Found = { lines: [], size: 0, matches: 0, full: false, secret: 0, files: 0, late: false, totalMs }
  const late = clockOf(totalMs)
  const search: Search = { found, pulse, late, budget: request.budget }
  const read = makeReader()
  const literal = literalOf(request)
  const searchFile = (file: string): boolean => {
    pulse.start(Doing.reading, file)
    const bytes = read(file)
    found.files++
    if (bytes === undefined || (literal !== undefined && bytes.indexOf(literal) === -1)) return true
    const text = bytes.toString("utf8")
    pulse.next(Doing.matching)
    if (!regex.whole.test(text)) return true
    return searchText(text, shownPathOf(request.cwd, file), regex.line, search)
  }
  // a file named as the path is searched: reading it was asked if it looks secret
  if (!request.folder) {
    searchFile(request.start)
    return grepResult(found)
  }
  const matches = request.glob === undefined ? undefined : await globMatcher(request.glob)
  const secretFile = request.secrets === undefined ? looksSecret : await secretTestOf(request.secrets)
  await walkFiles(request.start, {
    projectDir: request.cwd,
    cancelled: () => {
      pulse.beat()
      return (found.late ||= late())
    },
    onFile: ({ file, relative }) => {
      if (matches !== undefined) {
        pulse.start(Doing.globbing, relative)
        if (!matches(relative)) return true
      }
      if (secretFile(file)) {
        found.secret++
        return true
      }
      if (!searchFile(file)) return false
      return !(found.late ||= late())
    }
  })
  return grepResult(found)
}
