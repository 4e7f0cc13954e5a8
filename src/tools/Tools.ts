import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { StringDecoder } from "node:string_decoder"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { nodeChildProcesses } from "../lib/NodeModules"
import { redact, toolEnv } from "../lib/Secrets"
import type { ToolSpec } from "../model/ModelClient"
import { FileAccess, type FileAccessShape } from "./FileAccess"
import { isMcpToolName, isReadOnlyMcpTool, mcpCallTitle } from "./ToolNames"

export type ToolName = "bash" | "read_file" | "write_file" | "edit_file"

export const toolNames: ReadonlyArray<ToolName> = ["bash", "read_file", "write_file", "edit_file"]

export const isToolName = (name: string): name is ToolName => (toolNames as ReadonlyArray<string>).includes(name)

export const DEFAULT_BASH_TIMEOUT_SECONDS = 120
export const DEFAULT_READ_LIMIT = 2000
/** Files larger than this are refused by read_file and edit_file (bash's head/sed/grep do better). */
export const MAX_FILE_BYTES = 32 * 1024 * 1024
/** After a timeout, the group gets SIGTERM, then SIGKILL this much later. */
const KILL_GRACE_MS = 2000
/** After bash exits, how long background processes that still hold its output may keep the result waiting. */
const PIPE_GRACE_MS = 200

/** A file a file tool is about to write, whole: its absolute path and its new content. */
export interface FileWrite {
  readonly file: string
  readonly content: string
}

export interface ToolContext {
  readonly cwd: string
  readonly maxOutput: number
  /** The id of the call being run (an editor shows a terminal under it). */
  readonly callId?: string
  /** Runs before write_file or edit_file writes a file (mm records the change there, for /undo). */
  readonly beforeWrite?: (write: FileWrite) => Effect.Effect<void>
  /** Output of a running bash as it comes (the terminal shows its latest lines live). */
  readonly onOutput?: (text: string) => void
}

export interface ToolResult {
  readonly output: string
  readonly failed: boolean
}

// ---------------------------------------------------------------------------
// What the model is told

export const toolSpecs: ReadonlyArray<ToolSpec> = [
  {
    name: "bash",
    description:
      "Run a shell command with `bash -c` in the project directory. stdin is closed, so nothing can prompt. " +
      "The result starts with a status line (`exit code N`, or `killed after N s (timeout)`) followed by stdout and stderr interleaved. " +
      "Long output keeps its beginning and its end. The command and everything it started are killed on timeout. " +
      "To leave a process running in the background, redirect its output: `cmd > log 2>&1 &`.",
    parameters: {
      type: "object",
      properties: {
        command: { type: "string", description: "the command line, run by bash -c" },
        timeout: {
          type: "number",
          description: `seconds before the command is killed (default ${DEFAULT_BASH_TIMEOUT_SECONDS})`
        }
      },
      required: ["command"]
    }
  },
  {
    name: "read_file",
    description:
      "Read a text file, relative to the project directory (absolute paths work too). Returns the lines as they are, without line numbers. " +
      `At most ${DEFAULT_READ_LIMIT} lines (and what fits in the output limit) come back at once; ` +
      "a partial read ends with a line in brackets saying which lines were shown and the offset to read on from.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path, relative to the project directory or absolute" },
        offset: { type: "integer", minimum: 1, description: "1-based number of the first line to read (default 1)" },
        limit: {
          type: "integer",
          minimum: 1,
          description: `how many lines to read at most (default ${DEFAULT_READ_LIMIT})`
        }
      },
      required: ["path"]
    }
  },
  {
    name: "write_file",
    description: "Create a file or overwrite it whole with the given content, creating missing parent directories. " +
      "To change part of an existing file, prefer edit_file.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path, relative to the project directory or absolute" },
        content: { type: "string", description: "the complete new content of the file" }
      },
      required: ["path", "content"]
    }
  },
  {
    name: "edit_file",
    description:
      "Replace one exact piece of text in a file. `old` must occur exactly once in the file, whitespace and indentation included; " +
      "if it occurs several times, include more surrounding lines to make it unique.",
    parameters: {
      type: "object",
      properties: {
        path: { type: "string", description: "file path, relative to the project directory or absolute" },
        old: { type: "string", description: "the exact text to replace; must occur exactly once" },
        new: { type: "string", description: "the text to put in its place" }
      },
      required: ["path", "old", "new"]
    }
  }
]

const realOrResolved = (file: string): string => {
  try {
    return fs.realpathSync(file)
  } catch {
    return path.resolve(file)
  }
}

/** Whether `file` (relative to `cwd`, symbolic links followed) lies outside the project directory `cwd`. */
export const isOutsideProject = (cwd: string, file: string): boolean => {
  const relative = path.relative(realOrResolved(cwd), realOrResolved(path.resolve(cwd, file)))
  return relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)
}

/**
 * Whether a call waits for approval under `permissions: ask`: every call that changes
 * things, and a read_file of a path outside the project directory (given `input` and `cwd`).
 */
export const needsApproval = (name: string, input?: Record<string, unknown>, cwd?: string): boolean =>
  name === "bash" ||
  name === "write_file" ||
  name === "edit_file" ||
  (name === "read_file" && cwd !== undefined && typeof input?.path === "string" && isOutsideProject(cwd, input.path))

// ---------------------------------------------------------------------------
// Arguments

const NonEmptyString = (what: string) =>
  Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || `expected ${what}, got an empty string`))

const PositiveSeconds = Schema.Number.pipe(
  Schema.filter((n) => (Number.isFinite(n) && n > 0) || `expected a number of seconds above 0, got ${n}`)
)

const LineCount = Schema.Number.pipe(
  Schema.filter((n) => (Number.isInteger(n) && n >= 1) || `expected a whole number of 1 or more, got ${n}`)
)

/** Optional parameters accept an explicit `null` as "not given": small models often send one. */
const BashParams = Schema.Struct({
  command: NonEmptyString("a command"),
  timeout: Schema.optionalWith(PositiveSeconds, { nullable: true })
})

const ReadFileParams = Schema.Struct({
  path: NonEmptyString("a path"),
  offset: Schema.optionalWith(LineCount, { nullable: true }),
  limit: Schema.optionalWith(LineCount, { nullable: true })
})

const WriteFileParams = Schema.Struct({ path: NonEmptyString("a path"), content: Schema.String })

const EditFileParams = Schema.Struct({ path: NonEmptyString("a path"), old: Schema.String, new: Schema.String })

const paramsSchemas = {
  bash: BashParams,
  read_file: ReadFileParams,
  write_file: WriteFileParams,
  edit_file: EditFileParams
} as const

const issueLine = (issue: ParseResult.ArrayFormatterIssue): string => {
  const key = issue.path.length === 0 ? undefined : issue.path.map(String).join(".")
  if (key === undefined) return "arguments must be a JSON object"
  if (issue._tag === "Missing") return `missing required parameter "${key}"`
  const text = issue.message
    .replace(/^Expected /, "expected ")
    .replace(/, actual /, ", got ")
    .replace(/\s+/g, " ")
  return `parameter "${key}": ${text}`
}

const decodeParams = <A, I>(schema: Schema.Schema<A, I>, value: unknown): Either.Either<A, string> =>
  Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(value).pipe(
    Either.mapLeft((error) => ParseResult.ArrayFormatter.formatErrorSync(error).map(issueLine).join("; "))
  )

const unknownTool = (name: string): string => `unknown tool "${name}"; the tools are ${toolNames.join(", ")}`

/** JSON-parses and validates the arguments of one call; Left is a one-line reason. */
export const parseToolArguments = (name: string, raw: string): Either.Either<Record<string, unknown>, string> => {
  if (!isToolName(name)) return Either.left(unknownTool(name))
  let value: unknown
  try {
    value = raw.trim() === "" ? {} : JSON.parse(raw)
  } catch (cause) {
    return Either.left(`arguments are not valid JSON (${String((cause as Error).message ?? cause).split("\n")[0]})`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left("arguments must be a JSON object")
  }
  return decodeParams(paramsSchemas[name] as unknown as Schema.Schema<Record<string, unknown>, unknown>, value)
}

// ---------------------------------------------------------------------------
// Truncation

const cutMarker = (count: number): string => `\n… [${count} characters cut] …\n`

/**
 * Keeps the start of the conceptual text `head ++ (gap characters already dropped) ++ tail`
 * and its end, within `max` characters marker included, cutting at line ends where one is near.
 */
const keepEnds = (head: string, gap: number, tail: string, max: number): string => {
  const total = head.length + gap + tail.length
  if (gap === 0 && total <= max) return head + tail
  const keep = Math.max(0, max - cutMarker(total).length)
  const whole = gap === 0 ? head + tail : undefined
  const headWant = Math.ceil(keep / 2)
  const tailWant = keep - headWant
  let start = whole === undefined ? head.slice(0, headWant) : whole.slice(0, headWant)
  let end = tailWant === 0 ? "" : whole === undefined ? tail.slice(-tailWant) : whole.slice(whole.length - tailWant)
  const lastNewline = start.lastIndexOf("\n")
  if (lastNewline >= start.length * 0.75) start = start.slice(0, lastNewline)
  const firstNewline = end.indexOf("\n")
  if (firstNewline >= 0 && firstNewline <= end.length * 0.25) end = end.slice(firstNewline + 1)
  return start + cutMarker(total - start.length - end.length) + end
}

/**
 * Text of at most `max` characters: longer text keeps its head and its tail, the middle
 * replaced by a marker such as `\n… [12345 characters cut] …\n`.
 */
export const truncateOutput = (text: string, max: number): string => keepEnds(text, 0, "", max)

/** Keeps the first and the last `cap` characters of a stream of text, counting what falls between. */
const makeCollector = (cap: number) => {
  let head = ""
  const tail: Array<string> = []
  let tailLength = 0
  let dropped = 0
  return {
    push: (text: string): void => {
      if (text === "") return
      if (head.length < cap) {
        const room = cap - head.length
        head += text.slice(0, room)
        text = text.slice(room)
        if (text === "") return
      }
      tail.push(text)
      tailLength += text.length
      while (tailLength > cap) {
        const excess = tailLength - cap
        const first = tail[0]
        if (first.length <= excess) {
          tail.shift()
          tailLength -= first.length
          dropped += first.length
        } else {
          tail[0] = first.slice(excess)
          tailLength -= excess
          dropped += excess
        }
      }
    },
    isEmpty: (): boolean => head === "",
    render: (max: number): string => keepEnds(head, dropped, tail.join(""), max)
  }
}

// ---------------------------------------------------------------------------
// bash

const liveGroups = new Set<number>()
let exitHookInstalled = false

const killGroup = (pid: number | undefined, signal: NodeJS.Signals): void => {
  if (pid === undefined) return
  try {
    process.kill(-pid, signal)
  } catch {
    // the group is gone already
  }
}

/** If mm itself exits while commands run, their process groups go with it. */
const installExitHook = (): void => {
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const pid of liveGroups) killGroup(pid, "SIGKILL")
  })
}

/**
 * A tiny process that outlives mm: it waits on a pipe only mm holds, and when the pipe closes
 * (mm ended, even by SIGKILL) it kills the command's process group. mm kills it first when
 * the command ends on its own, so what the command left running in the background stays.
 */
const startWatchdog = (pid: number): ChildProcess | undefined => {
  try {
    const watchdog = nodeChildProcesses().spawn("sh", [
      "-c",
      "read _ ; kill -9 -\"$1\" 2>/dev/null",
      "mm-watchdog",
      String(pid)
    ], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"]
    })
    watchdog.on("error", () => {})
    watchdog.stdin?.on("error", () => {})
    watchdog.unref()
    ;(watchdog.stdin as { unref?: () => void } | null)?.unref?.()
    return watchdog
  } catch {
    return undefined // no sh: the exit hook and the signal handlers still end the group
  }
}

const stopWatchdog = (watchdog: ChildProcess | undefined): void => {
  if (watchdog?.pid === undefined || watchdog.exitCode !== null) return
  try {
    process.kill(watchdog.pid, "SIGKILL")
  } catch {
    // gone already
  }
}

const isDirectory = (dir: string): boolean => {
  try {
    return fs.statSync(dir).isDirectory()
  } catch {
    return false
  }
}

const formatSeconds = (seconds: number): string => (Number.isInteger(seconds) ? String(seconds) : seconds.toFixed(1))

const runBash = (
  args: { readonly command: string; readonly timeout?: number | undefined },
  ctx: ToolContext
): Effect.Effect<ToolResult> =>
  Effect.async<ToolResult>((resume) => {
    if (!isDirectory(ctx.cwd)) {
      resume(
        Effect.succeed({ output: `cannot run bash: the project directory ${ctx.cwd} does not exist`, failed: true })
      )
      return
    }
    const seconds = args.timeout ?? DEFAULT_BASH_TIMEOUT_SECONDS
    const output = makeCollector(Math.max(ctx.maxOutput, 1024))
    let watchdog: ChildProcess | undefined
    let child: ChildProcess
    try {
      child = nodeChildProcesses().spawn("bash", ["-c", args.command], {
        cwd: ctx.cwd,
        env: toolEnv(),
        detached: true,
        stdio: ["ignore", "pipe", "pipe"]
      })
    } catch (cause) {
      resume(Effect.succeed({ output: `cannot run bash: ${(cause as Error).message}`, failed: true }))
      return
    }
    const pid = child.pid
    if (pid !== undefined) {
      installExitHook()
      liveGroups.add(pid)
      watchdog = startWatchdog(pid)
    }
    const streams = [child.stdout!, child.stderr!]
    const decoders = streams.map((stream) => {
      const decoder = new StringDecoder("utf8")
      stream.on("data", (chunk: Buffer) => {
        const text = decoder.write(chunk)
        output.push(text)
        if (text !== "") ctx.onOutput?.(text)
      })
      return decoder
    })

    let settled = false
    let timedOut = false
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
    let spawnError: Error | undefined
    let pipeGrace: NodeJS.Timeout | undefined
    const timer = setTimeout(
      () => {
        timedOut = true
        killGroup(pid, "SIGTERM")
        setTimeout(() => killGroup(pid, "SIGKILL"), KILL_GRACE_MS).unref()
      },
      Math.min(seconds * 1000, 2 ** 31 - 1)
    )

    /** Stops collecting; background processes that still hold the pipes may go on writing into the void. */
    const detachStreams = () => {
      for (const [i, stream] of streams.entries()) {
        stream.removeAllListeners("data")
        output.push(decoders[i].end())
        stream.on("data", () => {})
        stream.on("error", () => {})
        ;(stream as { unref?: () => void }).unref?.()
      }
    }

    const settle = () => {
      stopWatchdog(watchdog)
      clearTimeout(timer)
      clearTimeout(pipeGrace)
      if (pid !== undefined) liveGroups.delete(pid)
      detachStreams()
    }

    const finish = () => {
      if (settled) return
      settled = true
      settle()
      resume(Effect.succeed(bashResult({ timedOut, seconds, exit, spawnError, output, max: ctx.maxOutput })))
    }

    child.on("error", (error) => {
      spawnError = error
      finish()
    })
    child.on("exit", (code, signal) => {
      exit = { code, signal }
      pipeGrace = setTimeout(finish, PIPE_GRACE_MS)
    })
    child.on("close", finish)

    return Effect.async<void>((done) => {
      killGroup(pid, "SIGKILL")
      const running = !settled && exit === undefined && pid !== undefined
      if (!settled) {
        settled = true
        settle()
      }
      if (!running) return done(Effect.void)
      const fallback = setTimeout(() => done(Effect.void), 1000)
      child.once("exit", () => {
        clearTimeout(fallback)
        done(Effect.void)
      })
    })
  })

const bashResult = (run: {
  readonly timedOut: boolean
  readonly seconds: number
  readonly exit: { code: number | null; signal: NodeJS.Signals | null } | undefined
  readonly spawnError: Error | undefined
  readonly output: ReturnType<typeof makeCollector>
  readonly max: number
}): ToolResult => {
  if (run.spawnError !== undefined && run.exit === undefined) {
    return { output: `cannot run bash: ${run.spawnError.message}`, failed: true }
  }
  const status = bashStatus(run.timedOut, run.seconds, run.exit?.code ?? null, run.exit?.signal ?? null)
  const body = run.output.isEmpty() ? "(no output)" : run.output.render(Math.max(0, run.max - status.length - 1))
  return { output: `${status}\n${body}`, failed: run.timedOut || run.exit?.code !== 0 }
}

/** The first line of a bash result: `exit code N`, `killed after N s (timeout)` or `killed by signal S`. */
export const bashStatus = (timedOut: boolean, seconds: number, code: number | null, signal: string | null): string =>
  timedOut
    ? `killed after ${formatSeconds(seconds)} s (timeout)`
    : code !== null
    ? `exit code ${code}`
    : `killed by signal ${signal ?? "unknown"}`

/** A bash result from a finished command's whole output (the editor's terminal gives it so). */
export const bashResultOf = (run: {
  readonly timedOut: boolean
  readonly seconds: number
  readonly code: number | null
  readonly signal: string | null
  readonly output: string
  readonly max: number
}): ToolResult => {
  const status = bashStatus(run.timedOut, run.seconds, run.code, run.signal)
  const body = run.output === "" ? "(no output)" : truncateOutput(run.output, Math.max(0, run.max - status.length - 1))
  return { output: `${status}\n${body}`, failed: run.timedOut || run.code !== 0 }
}

// ---------------------------------------------------------------------------
// Files

const resolvePath = (cwd: string, file: string): string => path.resolve(cwd, file)

const fileProblem = (cause: unknown, shown: string): string => {
  const code = (cause as { code?: string }).code
  switch (code) {
    case "ENOENT":
      return `no such file: ${shown}`
    case "EISDIR":
      return `${shown} is a directory, not a file`
    case "ENOTDIR":
      return `no such file: ${shown} (part of the path is not a directory)`
    case "EACCES":
    case "EPERM":
      return `permission denied: ${shown}`
    case "EROFS":
      return `read-only file system: ${shown}`
    case "ENOSPC":
      return `no space left on the device for ${shown}`
    default:
      return `${shown}: ${String((cause as Error).message ?? cause).split("\n")[0]}`
  }
}

const failure = (output: string): ToolResult => ({ output, failed: true })

/** What a path names, when it is not a regular file: said in the line that refuses it. */
const kindOf = (stat: fs.Stats): string =>
  stat.isFIFO()
    ? "a named pipe (FIFO)"
    : stat.isCharacterDevice()
    ? "a character device"
    : stat.isBlockDevice()
    ? "a block device"
    : stat.isSocket()
    ? "a socket"
    : "not a regular file"

const notRegular = (stat: fs.Stats, shown: string): string =>
  stat.isDirectory()
    ? `${shown} is a directory, not a file; list it with bash (ls)`
    : `${shown} is ${kindOf(stat)}; the file tools read regular files only`

const tooBig = (size: number, shown: string): string =>
  `${shown} is ${size} bytes, too big for this tool; use bash (head, tail, sed -n, grep)`

const binary = (shown: string): string => `${shown} looks binary (it holds NUL bytes); only text files can be read`

/**
 * Opens a regular file for reading, never blocking: the path is checked before it is
 * opened (a FIFO or a device is refused unopened), opened with O_NONBLOCK, and checked
 * again on the open descriptor (the path may have changed in between).
 */
const openRegular = (
  file: string,
  shown: string
): Either.Either<{ readonly fd: number; readonly size: number }, string> => {
  let fd: number | undefined
  try {
    const before = fs.statSync(file)
    if (!before.isFile()) return Either.left(notRegular(before, shown))
    if (before.size > MAX_FILE_BYTES) return Either.left(tooBig(before.size, shown))
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    const stat = fs.fstatSync(fd)
    if (!stat.isFile()) throw Object.assign(new Error(notRegular(stat, shown)), { shown: true })
    if (stat.size > MAX_FILE_BYTES) throw Object.assign(new Error(tooBig(stat.size, shown)), { shown: true })
    return Either.right({ fd, size: stat.size })
  } catch (cause) {
    if (fd !== undefined) fs.closeSync(fd)
    return Either.left(
      (cause as { shown?: boolean }).shown === true ? (cause as Error).message : fileProblem(cause, shown)
    )
  }
}

/** Why the path on the disk is no file the tools may read (undefined: a regular file, or nothing there). */
const notRegularOnDisk = (file: string, shown: string): string | undefined => {
  try {
    const stat = fs.statSync(file)
    return stat.isFile() ? undefined : notRegular(stat, shown)
  } catch {
    return undefined
  }
}

/** Reads a regular text file whole (at most MAX_FILE_BYTES), or says in one line why not. */
const readBytes = (file: string, shown: string): Either.Either<Buffer, string> => {
  const opened = openRegular(file, shown)
  if (Either.isLeft(opened)) return Either.left(opened.left)
  const { fd, size } = opened.right
  try {
    // read to the end, but never past the limit, whatever fstat said
    const chunks: Array<Buffer> = []
    let total = 0
    const chunk = Buffer.allocUnsafe(Math.min(Math.max(size, 4096), 1024 * 1024) + 1)
    for (let n = fs.readSync(fd, chunk); n > 0; n = fs.readSync(fd, chunk)) {
      total += n
      if (total > MAX_FILE_BYTES) return Either.left(tooBig(total, shown))
      chunks.push(Buffer.from(chunk.subarray(0, n)))
    }
    const bytes = Buffer.concat(chunks, total)
    if (bytes.includes(0)) return Either.left(binary(shown))
    return Either.right(bytes)
  } catch (cause) {
    return Either.left(fileProblem(cause, shown))
  } finally {
    fs.closeSync(fd)
  }
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** Reads a regular text file (bytes that are not UTF-8 shown as U+FFFD), or says in one line why not. */
export const readTextLossy = (file: string, shown: string): Either.Either<string, string> =>
  Either.map(readBytes(file, shown), (bytes) => bytes.toString("utf8"))

/**
 * A file's text, for a tool that writes it back (and for the preview of a write): only a
 * file that is valid UTF-8 without NUL bytes, so that encoding the text again gives back
 * every byte not edited. Left says in one line why not.
 */
export const readText = (file: string, shown: string): Either.Either<string, string> => {
  const bytes = readBytes(file, shown)
  if (Either.isLeft(bytes)) {
    return bytes.left === binary(shown)
      ? Either.left(`${shown} holds NUL bytes; edit_file changes only UTF-8 text files`)
      : Either.left(bytes.left)
  }
  try {
    return Either.right(strictUtf8.decode(bytes.right))
  } catch {
    return Either.left(`${shown} is not UTF-8 text; edit_file changes only UTF-8 files`)
  }
}

const splitLines = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

const countLines = (text: string): number => splitLines(text).length

/** Room kept for the bracketed line that ends a partial read. */
const READ_TRAILER_ROOM = 200

/** Bytes asked of the file at a time by read_file. */
const READ_CHUNK = 64 * 1024

/**
 * The lines `first`..`wanted` of a text given in pieces, kept within `budget` characters:
 * only what can be returned is held in memory, however long the file or its lines.
 */
const makeLineWindow = (first: number, wanted: number, budget: number) => {
  const decoder = new StringDecoder("utf8")
  const shown: Array<string> = []
  let size = 0
  let line = 1
  let current = ""
  let currentLength = 0
  let full = false
  let tailLength = 0
  const collecting = () => !full && line >= first && line <= wanted
  const endLine = () => {
    if (collecting()) {
      if (shown.length > 0 && size + currentLength + 1 > budget) full = true
      else {
        const text = currentLength > current.length
          ? `${current}\n[line ${line} is ${currentLength} characters long; only its start is shown]`
          : current
        shown.push(text)
        size += text.length + 1
      }
    }
    line++
    current = ""
    currentLength = 0
  }
  const take = (piece: string) => {
    if (collecting() && current.length < budget) current += piece.slice(0, budget - current.length)
    currentLength += piece.length
  }
  const push = (text: string) => {
    let from = 0
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", from)) {
      take(text.slice(from, at))
      endLine()
      from = at + 1
    }
    take(text.slice(from))
    tailLength = currentLength
  }
  return {
    push: (bytes: Buffer) => push(decoder.write(bytes)),
    end: (): { readonly lines: number; readonly shown: ReadonlyArray<string> } => {
      push(decoder.end())
      if (tailLength > 0) endLine()
      return { lines: line - 1, shown }
    }
  }
}

const readFileTool = (
  args: { readonly path: string; readonly offset?: number | undefined; readonly limit?: number | undefined },
  ctx: ToolContext,
  text: Either.Either<string, string>
): ToolResult => {
  if (Either.isLeft(text)) return failure(text.left)
  const lines = splitLines(text.right)
  if (lines.length === 0) return { output: "(empty file)", failed: false }
  const first = args.offset ?? 1
  if (first > lines.length) {
    return failure(`offset ${first} is past the end of ${args.path} (${lines.length} lines)`)
  }
  const wanted = Math.min(lines.length, first - 1 + (args.limit ?? DEFAULT_READ_LIMIT))
  const budget = Math.max(0, ctx.maxOutput - READ_TRAILER_ROOM)
  const shown: Array<string> = []
  let size = 0
  for (let n = first; n <= wanted; n++) {
    const line = lines[n - 1]
    if (shown.length > 0 && size + line.length + 1 > budget) break
    shown.push(line)
    size += line.length + 1
  }
  const last = first + shown.length - 1
  const body = shown.join("\n")
  if (first === 1 && last === lines.length) return { output: body, failed: false }
  const range = `lines ${first}-${last} of ${lines.length} in ${args.path}`
  const trailer = last < lines.length
    ? `[${range}; read on with offset ${last + 1}]`
    : `[${range}; that is the end of the file]`
  return { output: `${body}\n${trailer}`, failed: false }
}

/**
 * read_file on the disk: a piece at a time, keeping only the lines it can return, and
 * cancellable between two pieces.
 */
const readFileFromDisk = (
  args: { readonly path: string; readonly offset?: number | undefined; readonly limit?: number | undefined },
  ctx: ToolContext
): Effect.Effect<ToolResult> =>
  Effect.async<ToolResult>((resume) => {
    const opened = openRegular(resolvePath(ctx.cwd, args.path), args.path)
    if (Either.isLeft(opened)) return resume(Effect.succeed(failure(opened.left)))
    const { fd } = opened.right
    const first = args.offset ?? 1
    const window = makeLineWindow(
      first,
      first - 1 + (args.limit ?? DEFAULT_READ_LIMIT),
      Math.max(0, ctx.maxOutput - READ_TRAILER_ROOM)
    )
    const buffer = Buffer.allocUnsafe(READ_CHUNK)
    let cancelled = false
    let read = 0
    const done = (result: ToolResult) => {
      fs.close(fd, () => {})
      if (!cancelled) resume(Effect.succeed(result))
    }
    // one read at a time; a cancel lets the read in flight finish, then closes the file
    const next = () =>
      fs.read(fd, buffer, 0, READ_CHUNK, null, (error, n) => {
        if (cancelled) return fs.close(fd, () => {})
        if (error !== null) return done(failure(fileProblem(error, args.path)))
        if (n === 0) return done(windowResult(window.end(), first, args.path))
        read += n
        if (read > MAX_FILE_BYTES) return done(failure(tooBig(read, args.path)))
        const bytes = buffer.subarray(0, n)
        if (bytes.includes(0)) return done(failure(binary(args.path)))
        window.push(bytes)
        next()
      })
    next()
    return Effect.sync(() => {
      cancelled = true
    })
  })

const windowResult = (
  found: { readonly lines: number; readonly shown: ReadonlyArray<string> },
  first: number,
  shownPath: string
): ToolResult => {
  const { lines, shown } = found
  if (lines === 0) return { output: "(empty file)", failed: false }
  if (first > lines) return failure(`offset ${first} is past the end of ${shownPath} (${lines} lines)`)
  const last = first + shown.length - 1
  const body = shown.join("\n")
  if (first === 1 && last === lines) return { output: body, failed: false }
  const range = `lines ${first}-${last} of ${lines} in ${shownPath}`
  const trailer = last < lines
    ? `[${range}; read on with offset ${last + 1}]`
    : `[${range}; that is the end of the file]`
  return { output: `${body}\n${trailer}`, failed: false }
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

/** Writes a whole file on disk, creating missing parent directories, or says in one line why not. */
const writeText = (file: string, shown: string, content: string): Either.Either<void, string> => {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true })
    fs.writeFileSync(file, content)
    return Either.right(undefined)
  } catch (cause) {
    return Either.left(fileProblem(cause, shown))
  }
}

const writeFileTool = (
  args: { readonly path: string; readonly content: string },
  ctx: ToolContext,
  files: FileAccessShape
) =>
  Effect.gen(function*() {
    const file = resolvePath(ctx.cwd, args.path)
    const existed = fs.existsSync(file)
    // a file edit_file would refuse (not UTF-8, NUL bytes) is replaced whole: the result says so
    const before = existed ? readText(file, args.path) : undefined
    const replaced =
      before !== undefined && Either.isLeft(before) && /is not UTF-8 text|holds NUL bytes/.test(before.left)
        ? ` (it replaced ${fs.statSync(file).size} bytes that were not UTF-8 text)`
        : ""
    if (ctx.beforeWrite !== undefined) yield* ctx.beforeWrite({ file, content: args.content })
    const written = yield* files.write(file, args.path, args.content)
    if (Either.isLeft(written)) return failure(written.left)
    const bytes = Buffer.byteLength(args.content)
    return {
      output: `${existed ? "overwrote" : "created"} ${args.path}: ${plural(bytes, "byte")}, ${
        plural(countLines(args.content), "line")
      }${replaced}`,
      failed: false
    }
  })

const occurrences = (text: string, part: string): Array<number> => {
  const found: Array<number> = []
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) found.push(at)
  return found
}

/**
 * What an edit does to a file's text: the whole text after it and where it lands, or why it
 * cannot be made (shown in the approval preview before it runs, and as the tool's error).
 */
export const planEdit = (
  text: string,
  args: { readonly path: string; readonly old: string; readonly new: string }
): Either.Either<
  { readonly after: string; readonly line: number; readonly oldText: string; readonly newText: string },
  string
> => {
  if (args.old === "") return Either.left("old text is empty; to create or replace a whole file use write_file")
  let [oldText, newText] = [args.old, args.new]
  let found = occurrences(text, oldText)
  if (found.length === 0 && text.includes("\r\n") && !oldText.includes("\r\n")) {
    ;[oldText, newText] = [oldText.replace(/\n/g, "\r\n"), newText.replace(/\r?\n/g, "\r\n")]
    found = occurrences(text, oldText)
  }
  // the file's last line has no newline, the model's copy of it has one: the file keeps none
  const eol = oldText.endsWith("\r\n") ? "\r\n" : "\n"
  if (
    found.length === 0 && oldText.endsWith(eol) && !text.endsWith("\n") && text.endsWith(oldText.slice(0, -eol.length))
  ) {
    oldText = oldText.slice(0, -eol.length)
    if (newText.endsWith(eol)) newText = newText.slice(0, -eol.length)
    found = occurrences(text, oldText)
  }
  if (found.length === 0) {
    return Either.left(
      `old text not found in ${args.path}; read the file again and copy the text exactly, whitespace included`
    )
  }
  if (found.length > 1) {
    return Either.left(`old text occurs ${found.length} times in ${args.path}; give more context so it is unique`)
  }
  const at = found[0]
  return Either.right({
    after: text.slice(0, at) + newText + text.slice(at + oldText.length),
    line: text.slice(0, at).split("\n").length,
    oldText,
    newText
  })
}

const editFileTool = (
  args: { readonly path: string; readonly old: string; readonly new: string },
  ctx: ToolContext,
  files: FileAccessShape
): Effect.Effect<ToolResult> =>
  Effect.gen(function*() {
    if (args.old === "") return failure("old text is empty; to create or replace a whole file use write_file")
    const file = resolvePath(ctx.cwd, args.path)
    // what is on the disk decides whether the file can be edited byte for byte
    const onDisk = fs.existsSync(file) ? readText(file, args.path) : undefined
    if (onDisk !== undefined && Either.isLeft(onDisk)) return failure(onDisk.left)
    const text = yield* files.read(file, args.path)
    if (Either.isLeft(text)) return failure(text.left)
    const plan = planEdit(text.right, args)
    if (Either.isLeft(plan)) return failure(plan.left)
    const { line, oldText, newText } = plan.right
    if (oldText === newText) {
      return { output: `old and new text are the same; ${args.path} left unchanged`, failed: false }
    }
    const edited = plan.right.after
    if (ctx.beforeWrite !== undefined) {
      yield* ctx.beforeWrite({ file, content: edited })
    }
    const written = yield* files.write(file, args.path, edited)
    if (Either.isLeft(written)) return failure(written.left)
    // counted as write_file counts: a trailing newline does not start another line
    const before = Math.max(countLines(oldText), 1)
    const after = countLines(newText)
    return {
      output: `edited ${args.path} at line ${line}: ${plural(before, "line")} replaced by ${plural(after, "line")}`,
      failed: false
    }
  })

/** The disk and a local bash: what the tools use unless an editor offers its own (src/FileAccess.ts). */
export const diskFileAccess: FileAccessShape = {
  read: (file, shown) => Effect.sync(() => readTextLossy(file, shown)),
  readsDisk: Effect.succeed(true),
  writesDisk: Effect.succeed(true),
  write: (file, shown, content) => Effect.sync(() => writeText(file, shown, content)),
  bash: (args, ctx) => runBash(args, ctx)
}

// ---------------------------------------------------------------------------
// Running a call

const dispatch = (name: ToolName, args: Record<string, unknown>, ctx: ToolContext): Effect.Effect<ToolResult> =>
  Effect.flatMap(Effect.serviceOption(FileAccess), (provided): Effect.Effect<ToolResult> => {
    const files = Option.getOrElse(provided, () => diskFileAccess)
    switch (name) {
      case "bash":
        return files.bash(args as typeof BashParams.Type, ctx)
      case "read_file": {
        const read = args as typeof ReadFileParams.Type
        return Effect.flatMap(files.readsDisk, (fromDisk) => {
          if (fromDisk) return readFileFromDisk(read, ctx)
          // an editor may hold an unsaved buffer for the path; what is on the disk must still be a regular file
          const problem = notRegularOnDisk(resolvePath(ctx.cwd, read.path), read.path)
          if (problem !== undefined) return Effect.succeed(failure(problem))
          return Effect.map(
            files.read(resolvePath(ctx.cwd, read.path), read.path),
            (text) => readFileTool(read, ctx, text)
          )
        })
      }
      case "write_file":
        return writeFileTool(args as typeof WriteFileParams.Type, ctx, files)
      case "edit_file":
        return editFileTool(args as typeof EditFileParams.Type, ctx, files)
    }
  })

/**
 * Runs one call. Never fails: any problem is a failed ToolResult the model sees. Known
 * secrets in the result are replaced by `[redacted]` before anyone sees it.
 * Interrupting it kills a running bash process group at once.
 */
export const runTool = (name: string, rawArguments: string, ctx: ToolContext): Effect.Effect<ToolResult> =>
  Either.match(parseToolArguments(name, rawArguments), {
    onLeft: (reason): Effect.Effect<ToolResult> =>
      Effect.succeed(failure(isToolName(name) ? `invalid arguments for ${name}: ${reason}` : reason)),
    onRight: (args) => dispatch(name as ToolName, args, ctx)
  }).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.succeed(
        failure(`${name} failed unexpectedly: ${String((defect as Error)?.message ?? defect).split("\n")[0]}`)
      )
    ),
    Effect.map((result) => ({ output: truncateOutput(redact(result.output), ctx.maxOutput), failed: result.failed })),
    Effect.withSpan("Tools.runTool", { attributes: { tool: name } })
  )

// ---------------------------------------------------------------------------
// Display

export interface CallDescription {
  readonly title: string
  readonly kind: "execute" | "read" | "edit" | "other"
  readonly locations: ReadonlyArray<{ readonly path: string; readonly line?: number }>
}

const TITLE_MAX = 120

const oneLine = (text: string): string => {
  const lines = text.trim().split("\n")
  const first = lines[0].trim()
  const short = first.length > TITLE_MAX ? `${first.slice(0, TITLE_MAX - 1)}…` : first
  return lines.length > 1 && short === first ? `${short} …` : short
}

const stringArg = (args: Record<string, unknown> | undefined, key: string): string | undefined =>
  typeof args?.[key] === "string" ? (args[key] as string) : undefined

const numberArg = (args: Record<string, unknown> | undefined, key: string): number | undefined =>
  typeof args?.[key] === "number" ? (args[key] as number) : undefined

const lineRange = (offset: number | undefined, limit: number | undefined): string =>
  offset === undefined && limit === undefined
    ? ""
    : limit === undefined
    ? ` (from line ${offset})`
    : ` (lines ${offset ?? 1}-${(offset ?? 1) + limit - 1})`

/**
 * For display: `title` says what the call works on without the tool's name (`ls -la` in
 * `⚙ bash  ls -la`; a path for the file tools), also fit as an ACP tool-call title.
 * Locations are absolute when `cwd` is given, as ACP clients expect.
 */
export const describeCall = (
  name: string,
  args: Record<string, unknown> | undefined,
  cwd?: string
): CallDescription => {
  const file = stringArg(args, "path")
  const where = (p: string) => (cwd === undefined ? p : path.resolve(cwd, p))
  const locate = (line?: number) =>
    file === undefined ? [] : [line === undefined ? { path: where(file) } : { path: where(file), line }]
  const titled = (detail: string | undefined) => (detail === undefined || detail === "" ? name : detail)
  switch (name) {
    case "bash": {
      const command = stringArg(args, "command")
      return { title: titled(command === undefined ? undefined : oneLine(command)), kind: "execute", locations: [] }
    }
    case "read_file": {
      const offset = numberArg(args, "offset")
      const range = lineRange(offset, numberArg(args, "limit"))
      return { title: titled(file === undefined ? undefined : file + range), kind: "read", locations: locate(offset) }
    }
    case "write_file":
    case "edit_file":
      return { title: titled(file), kind: "edit", locations: locate() }
    default:
      if (isMcpToolName(name)) {
        return { title: titled(mcpCallTitle(args)), kind: isReadOnlyMcpTool(name) ? "read" : "other", locations: [] }
      }
      return { title: name, kind: "other", locations: [] }
  }
}
