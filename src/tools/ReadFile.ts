import * as fs from "node:fs"
import { StringDecoder } from "node:string_decoder"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

import { numberArg, pathLocation, stringArg } from "./Describe"
import { FileAccess, type FileAccessShape } from "./FileAccess"
import { binary, fileProblem, notRegularOnDisk, openRegular, resolvePath, splitLines, tooBig } from "./Files"
import { DEFAULT_READ_LIMIT, failure, MAX_FILE_BYTES, type ToolContext, type ToolResult } from "./Tool"
import { Count, NonBlankText, optional } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

type ReadArgs = { readonly path: string; readonly offset?: number | undefined; readonly limit?: number | undefined }

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

const readResult = (
  args: ReadArgs,
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
  args: ReadArgs,
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

/** read_file: from the disk a piece at a time, or through `files` (an editor's buffer may be newer). */
const readFile = (read: ReadArgs, ctx: ToolContext, files: FileAccessShape): Effect.Effect<ToolResult> =>
  Effect.flatMap(files.readsDisk, (fromDisk) => {
    if (fromDisk) return readFileFromDisk(read, ctx)
    // an editor may hold an unsaved buffer for the path; what is on the disk must still be a regular file
    const problem = notRegularOnDisk(resolvePath(ctx.cwd, read.path), read.path)
    if (problem !== undefined) return Effect.succeed(failure(problem))
    return Effect.map(
      files.read(resolvePath(ctx.cwd, read.path), read.path),
      (text) => readResult(read, ctx, text)
    )
  })

const lineRange = (offset: number | undefined, limit: number | undefined): string =>
  offset === undefined && limit === undefined
    ? ""
    : limit === undefined
    ? ` (from line ${offset})`
    : ` (lines ${offset ?? 1}-${(offset ?? 1) + limit - 1})`

export const readFileTool = defineTool({
  name: "read_file",
  description: "Read a text file: its lines as they are, without numbers, " +
    `at most ${DEFAULT_READ_LIMIT} (and what fits the output limit) at once; ` +
    "a partial read ends with a bracketed line giving the offset to read on from.",
  parameters: Schema.Struct({
    path: NonBlankText("a path", "relative to the project, or absolute"),
    offset: optional(Count("first line to read, from 1 (default 1)")),
    limit: optional(Count(`most lines to read (default ${DEFAULT_READ_LIMIT})`))
  }),
  access: "read",
  kind: "read",
  purpose: "read files with `read_file`",
  describe: (args, cwd) => {
    const file = stringArg(args, "path")
    const offset = numberArg(args, "offset")
    return {
      title: file === undefined ? "" : file + lineRange(offset, numberArg(args, "limit")),
      locations: pathLocation(args, cwd, offset)
    }
  },
  run: (args, ctx) => Effect.flatMap(FileAccess, (files) => readFile(args, ctx, files))
})
