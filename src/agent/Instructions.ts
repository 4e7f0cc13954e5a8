// The project's own instructions: AGENTS.md (or the file names `instructions` gives) at the
// project's root and in every folder from there down to the working directory, and one
// user-level file, put into the system message after the configured `system`.
import * as fs from "node:fs"
import * as path from "node:path"
import { StringDecoder } from "node:string_decoder"

import { gitRoot } from "../lib/Git"
import { shownHomePath, userConfigDir } from "../lib/UserState"

/** A file longer than this is cut, with one line saying so. */
const INSTRUCTIONS_MAX_BYTES = 32 * 1024

export interface InstructionFile {
  /** Absolute. */
  readonly path: string
  /** As the model and the person are told it: relative to the working directory, or `~/…`. */
  readonly shown: string
  readonly text: string
}

interface LoadedInstructions {
  readonly files: ReadonlyArray<InstructionFile>
  readonly warnings: ReadonlyArray<string>
}

/** The folders from the project's root (the git work tree's, else `cwd`) down to `cwd`, root first. */
const projectFolders = (cwd: string): ReadonlyArray<string> => {
  const here = path.resolve(cwd)
  const root = gitRoot(here) ?? here
  const folders = [here]
  for (let at = here; at !== root;) {
    const parent = path.dirname(at)
    if (parent === at) break
    folders.unshift(parent)
    at = parent
  }
  return folders
}

/** The size of a regular file; undefined for anything else. */
const regularFileSize = (file: string): number | undefined => {
  try {
    const stat = fs.statSync(file)
    return stat.isFile() ? stat.size : undefined
  } catch {
    return undefined
  }
}

const kib = (bytes: number): string => `${Math.max(1, Math.round(bytes / 1024))} KiB`

/**
 * A file as the banner and `mm acp`'s log name it: `AGENTS.md`, or, when it is larger than the
 * cap, `AGENTS.md (cut: 227 KiB, first 32 KiB read)` — the model reads only its start.
 */
export const instructionLabel = (shown: string, size: number): string =>
  size > INSTRUCTIONS_MAX_BYTES ? `${shown} (cut: ${kib(size)}, first ${kib(INSTRUCTIONS_MAX_BYTES)} read)` : shown

const shownPath = (file: string, cwd: string, home: string): string => {
  const relative = path.relative(cwd, file)
  if (!relative.startsWith("..") && !path.isAbsolute(relative)) return relative
  return shownHomePath(file, home)
}

/**
 * The instruction files there are, in the order they go into the system message: the
 * user-level one, then the project's from its root down to `cwd` (deeper ones later, so
 * that they win). Only stats: cheap enough for the banner.
 */
export const findInstructionFiles = (
  names: ReadonlyArray<string> | false,
  cwd: string,
  home: string,
  env: NodeJS.ProcessEnv = process.env
): ReadonlyArray<{ readonly path: string; readonly shown: string; readonly size: number }> => {
  if (names === false || names.length === 0) return []
  const unique = [...new Set(names)]
  const folders = [userConfigDir(env, home), ...projectFolders(cwd)]
  const seen = new Set<string>()
  const found: Array<{ path: string; shown: string; size: number }> = []
  for (const folder of folders) {
    for (const name of unique) {
      const file = path.join(folder, name)
      const size = seen.has(file) ? undefined : regularFileSize(file)
      if (size === undefined) continue
      seen.add(file)
      found.push({ path: file, shown: shownPath(file, path.resolve(cwd), home), size })
    }
  }
  return found
}

/** The text of a file cut to INSTRUCTIONS_MAX_BYTES (at a line's end when one is near), and its size. */
const readCapped = (file: string): { text: string; size: number } => {
  const fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
  try {
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw Object.assign(new Error("not a regular file"), { code: "not a regular file" })
    const buffer = Buffer.alloc(Math.min(stat.size, INSTRUCTIONS_MAX_BYTES))
    let filled = 0
    while (filled < buffer.length) {
      const n = fs.readSync(fd, buffer, filled, buffer.length - filled, filled)
      if (n === 0) break
      filled += n
    }
    const text = new StringDecoder("utf8").write(buffer.subarray(0, filled))
    if (stat.size <= INSTRUCTIONS_MAX_BYTES) return { text, size: stat.size }
    const lastLine = text.lastIndexOf("\n")
    return { text: lastLine > text.length - 1024 ? text.slice(0, lastLine + 1) : text, size: stat.size }
  } finally {
    fs.closeSync(fd)
  }
}

/** Read files by path, reused while their mtime and size stay the same. */
const cache = new Map<string, { mtimeMs: number; size: number; text: string }>()

const readInstructionFile = (file: string, shown: string): string => {
  const stat = fs.statSync(file)
  const cached = cache.get(file)
  if (cached !== undefined && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.text
  const read = readCapped(file)
  const text = read.size > INSTRUCTIONS_MAX_BYTES
    ? `${read.text.replace(/\n?$/, "\n")}[${shown} is ${read.size} bytes; only its first ${
      Buffer.byteLength(read.text)
    } bytes are included]`
    : read.text.trimEnd()
  cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, text })
  return text
}

/** The instruction files and their texts, read now (a file that cannot be read is a warning). */
export const loadInstructions = (
  names: ReadonlyArray<string> | false,
  cwd: string,
  home: string,
  env: NodeJS.ProcessEnv = process.env
): LoadedInstructions => {
  const files: Array<InstructionFile> = []
  const warnings: Array<string> = []
  for (const found of findInstructionFiles(names, cwd, home, env)) {
    try {
      files.push({ path: found.path, shown: found.shown, text: readInstructionFile(found.path, found.shown) })
    } catch (cause) {
      const code = (cause as { code?: string }).code
      warnings.push(`skipped the instructions in ${found.path} (${code ?? String(cause)})`)
    }
  }
  return { files, warnings }
}

/** The section of the system message, one heading per file; "" when there is none. */
export const instructionsPrompt = (files: ReadonlyArray<InstructionFile>): string =>
  files
    .filter((file) => file.text.trim() !== "")
    .map((file) => `# Instructions from ${file.shown}\n\n${file.text}`)
    .join("\n\n")
