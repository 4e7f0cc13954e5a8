// glob's search itself, run in the search worker (SearchWorker.ts): the walk, the pattern
// matched on each path (the heartbeat names the path, so that a pattern stuck on one can be
// stopped from the main thread and named), the files that look secret counted, and the
// paths newest first, capped.
import * as fs from "node:fs"

import { globMatcher } from "./GlobMatch"
import { shownPathOf, walkFiles } from "./ProjectWalk"
import { clockOf, Doing, filesOf, type GlobRequest, type Pulse, secondsOf } from "./SearchProtocol"
import { looksSecret, secretsLeftOut, secretTestOf } from "./SecretFiles"
import { GLOB_MAX_PATHS, type ToolResult } from "./Tool"

const mtimeOf = (file: string): number => {
  try {
    return fs.lstatSync(file).mtimeMs
  } catch {
    return 0
  }
}

interface Listed {
  readonly found: Array<{ shown: string; mtime: number }>
  /** Files left out because they look secret. */
  secret: number
  /** Files whose path was matched. */
  walked: number
  /** Whether the search ran out of time before its end. */
  late: boolean
}

const globResult = (listed: Listed, budget: number, totalMs: number): ToolResult => {
  const { found } = listed
  const left = listed.secret === 0 ? [] : [secretsLeftOut(listed.secret, "not listed")]
  const looked = filesOf(listed.walked)
  const late = listed.late
    ? [`[stopped at the ${secondsOf(totalMs)} limit, ${looked} looked at; narrow the pattern or the path]`]
    : []
  if (found.length === 0) return { output: ["no files match", ...late, ...left].join("\n"), failed: false }
  found.sort((a, b) => b.mtime - a.mtime || (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0))
  const lines: Array<string> = []
  let size = 0
  for (const { shown } of found.slice(0, GLOB_MAX_PATHS)) {
    if (size + shown.length + 1 > budget) break
    lines.push(shown)
    size += shown.length + 1
  }
  if (lines.length < found.length) {
    lines.push(`[${lines.length} of ${found.length} files shown, newest first; narrow the pattern or the path]`)
  }
  return { output: [...lines, ...late, ...left].join("\n"), failed: false }
}

/** The whole of a glob, in the worker: its result (a pattern picomatch refuses throws, said by the worker). */
export const runGlob = async (request: GlobRequest, pulse: Pulse, totalMs: number): Promise<ToolResult> => {
  const matches = await globMatcher(request.pattern)
  const secretFile = request.secrets === undefined ? looksSecret : await secretTestOf(request.secrets)
  const listed: Listed = { found: [], secret: 0, walked: 0, late: false }
  const late = clockOf(totalMs)
  await walkFiles(request.start, {
    projectDir: request.cwd,
    cancelled: () => {
      pulse.beat()
      return (listed.late ||= late())
    },
    onFile: ({ file, relative }) => {
      pulse.start(Doing.globbing, relative)
      listed.walked++
      if (matches(relative)) {
        if (secretFile(file)) listed.secret++
        else listed.found.push({ shown: shownPathOf(request.cwd, file), mtime: mtimeOf(file) })
      }
      return !(listed.late ||= late())
    }
  })
  return globResult(listed, request.budget, totalMs)
}
