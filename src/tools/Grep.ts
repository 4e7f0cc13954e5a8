// grep: the lines of the project's files that match a regular expression, as
// `path:line: text`, read-only and capped in count and size.
import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { firstLineOf } from "../lib/OneLine"
import { searchDescription } from "./Describe"
import { fileProblem, resolvePath } from "./Files"
import { globMatcher } from "./GlobMatch"
import { neverSearched, walkFiles } from "./ProjectWalk"
import { looksSecret, secretsLeftOut } from "./SecretFiles"
import { failure, GREP_MAX_MATCHES, type ToolContext, type ToolResult } from "./Tool"
import { optional, withoutEmptyText } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

/** Characters of one matching line shown. */
const LINE_MAX = 200
/** Files larger than this are not searched. */
const FILE_MAX_BYTES = 8 * 1024 * 1024
/** Bytes looked at for a NUL, which marks a binary file. */
const BINARY_PROBE = 8000

interface GrepArgs {
  readonly pattern: string
  readonly path?: string | undefined
  readonly glob?: string | undefined
  readonly ignore_case?: boolean | undefined
}

/** How a path is shown: relative to the project when inside it, else whole. */
export const shownPathOf = (cwd: string, file: string): string => {
  const relative = path.relative(cwd, file)
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative.split(path.sep).join("/")
}

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
const literalOf = (args: GrepArgs): Buffer | undefined =>
  args.ignore_case !== true && !/[\\^$.|?*+()[\]{}]/.test(args.pattern) ? Buffer.from(args.pattern) : undefined

interface Found {
  readonly lines: Array<string>
  size: number
  matches: number
  full: boolean
  /** Files of the walk left out because they look secret. */
  secret: number
}

/** Adds the matching lines of one file; false once the matches or the size are at their cap. */
const searchText = (text: string, shown: string, line: RegExp, found: Found, budget: number): boolean => {
  const lines = text.split("\n")
  for (let n = 0; n < lines.length; n++) {
    const content = lines[n].endsWith("\r") ? lines[n].slice(0, -1) : lines[n]
    if (!line.test(content)) continue
    const trimmed = content.trim()
    const cut = trimmed.length > LINE_MAX ? `${trimmed.slice(0, LINE_MAX)}…` : trimmed
    const entry = `${shown}:${n + 1}: ${cut}`
    if (found.matches >= GREP_MAX_MATCHES || found.size + entry.length + 1 > budget) {
      found.full = true
      return false
    }
    found.lines.push(entry)
    found.size += entry.length + 1
    found.matches++
  }
  return true
}

const compile = (args: GrepArgs): { line: RegExp; whole: RegExp } | string => {
  const flags = args.ignore_case === true ? "i" : ""
  try {
    return { line: new RegExp(args.pattern, flags), whole: new RegExp(args.pattern, `${flags}m`) }
  } catch (cause) {
    return `invalid regular expression: ${firstLineOf(cause)}`
  }
}

/** grep on the disk: never fails (a problem is a failed result); cancelling stops the walk. */
const grep = (args: GrepArgs, ctx: ToolContext): Effect.Effect<ToolResult> => {
  const regex = compile(args)
  if (typeof regex === "string") return Effect.succeed(failure(regex))
  const shownStart = args.path ?? "."
  const start = resolvePath(ctx.cwd, shownStart)
  const refused = neverSearched(ctx.cwd, start, shownStart)
  if (refused !== undefined) return Effect.succeed(failure(refused))
  let stat: fs.Stats
  try {
    stat = fs.statSync(start)
  } catch (cause) {
    return Effect.succeed(failure(fileProblem(cause, shownStart).replace("no such file", "no such file or folder")))
  }
  const found: Found = { lines: [], size: 0, matches: 0, full: false, secret: 0 }
  const secretFile = ctx.secretFile ?? looksSecret
  const budget = Math.max(1000, ctx.maxOutput - 200)
  const read = makeReader()
  const literal = literalOf(args)
  const search = (file: string): boolean => {
    const bytes = read(file)
    if (bytes === undefined || (literal !== undefined && bytes.indexOf(literal) === -1)) return true
    const text = bytes.toString("utf8")
    if (!regex.whole.test(text)) return true
    return searchText(text, shownPathOf(ctx.cwd, file), regex.line, found, budget)
  }
  // a file named as the path is searched: reading it was asked if it looks secret
  if (!stat.isDirectory()) {
    search(start)
    return Effect.succeed(grepResult(found))
  }
  return Effect.async<ToolResult>((resume) => {
    let cancelled = false
    const walk = async () => {
      const matches = args.glob === undefined ? undefined : await globMatcher(args.glob)
      await walkFiles(start, {
        projectDir: ctx.cwd,
        cancelled: () => cancelled,
        onFile: ({ file, relative }) => {
          if (matches !== undefined && !matches(relative)) return true
          if (!secretFile(file)) return search(file)
          found.secret++
          return true
        }
      })
      return grepResult(found)
    }
    walk().then(
      (result) => !cancelled && resume(Effect.succeed(result)),
      (cause) => !cancelled && resume(Effect.succeed(failure(`grep failed: ${firstLineOf(cause)}`)))
    )
    return Effect.sync(() => {
      cancelled = true
    })
  })
}

const grepResult = (found: Found): ToolResult => {
  const secret = found.secret === 0 ? [] : [secretsLeftOut(found.secret, "not searched")]
  if (found.lines.length === 0) return { output: ["no matches", ...secret].join("\n"), failed: false }
  const more = found.full
    ? [
      `[stopped at ${found.matches} matching lines${
        found.matches < GREP_MAX_MATCHES ? " (output limit)" : ""
      }; narrow the pattern, path or glob to see the others]`
    ]
    : []
  return { output: [...found.lines, ...more, ...secret].join("\n"), failed: false }
}

export const grepTool = defineTool({
  name: "grep",
  description:
    "Search file contents for a regular expression (JavaScript syntax); .gitignored and binary files are skipped, " +
    "and so are files that look secret (.env, keys) unless `path` names one. " +
    `Returns up to ${GREP_MAX_MATCHES} matching lines as \`path:line: text\`.`,
  parameters: Schema.Struct({
    pattern: Schema.String.annotations({ description: "regular expression" }).pipe(
      Schema.filter((s) => s !== "" || "expected a regular expression, got an empty string")
    ),
    path: optional(Schema.String.annotations({ description: "folder or file to search (default: the project)" })),
    glob: optional(Schema.String.annotations({ description: "only files matching this, e.g. *.ts or src/**/*.tsx" })),
    ignore_case: optional(Schema.Boolean)
  }),
  access: "read",
  kind: "search",
  purpose: "find text with `grep`",
  tidy: withoutEmptyText,
  describe: (args, cwd) => searchDescription(args, cwd, typeof args?.glob === "string" ? args.glob : undefined),
  run: grep
})
