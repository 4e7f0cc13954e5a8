import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { firstLineOf } from "../lib/OneLine"
import type { ToolSpec } from "../model/ModelClient"
import {
  DEFAULT_BASH_TIMEOUT_SECONDS,
  DEFAULT_READ_LIMIT,
  GLOB_MAX_PATHS,
  GREP_MAX_MATCHES,
  isToolName,
  toolNames
} from "./Tool"

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
  },
  {
    name: "grep",
    description:
      "Search file contents for a regular expression (JavaScript syntax); .gitignored and binary files are skipped. " +
      `Returns up to ${GREP_MAX_MATCHES} matching lines as \`path:line: text\`.`,
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "regular expression" },
        path: { type: "string", description: "folder or file to search (default: the project)" },
        glob: { type: "string", description: "only files matching this, e.g. *.ts or src/**/*.tsx" },
        ignore_case: { type: "boolean" }
      },
      required: ["pattern"]
    }
  },
  {
    name: "glob",
    description: "Find files by path pattern; .gitignored files are skipped. `*.ts` matches at any depth, " +
      `\`src/**/*.ts\` from the folder searched. Returns up to ${GLOB_MAX_PATHS} paths, newest first.`,
    parameters: {
      type: "object",
      properties: {
        pattern: { type: "string", description: "glob pattern" },
        path: { type: "string", description: "folder to search (default: the project)" }
      },
      required: ["pattern"]
    }
  }
]

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
export const BashParams = Schema.Struct({
  command: NonEmptyString("a command"),
  timeout: Schema.optionalWith(PositiveSeconds, { nullable: true })
})

export const ReadFileParams = Schema.Struct({
  path: NonEmptyString("a path"),
  offset: Schema.optionalWith(LineCount, { nullable: true }),
  limit: Schema.optionalWith(LineCount, { nullable: true })
})

export const WriteFileParams = Schema.Struct({ path: NonEmptyString("a path"), content: Schema.String })

export const EditFileParams = Schema.Struct({ path: NonEmptyString("a path"), old: Schema.String, new: Schema.String })

/** Optional text parameters of the search tools: an empty string counts as not given. */
const OptionalText = Schema.optionalWith(Schema.String, { nullable: true })

export const GrepParams = Schema.Struct({
  pattern: Schema.String.pipe(Schema.filter((s) => s !== "" || "expected a regular expression, got an empty string")),
  path: OptionalText,
  glob: OptionalText,
  ignore_case: Schema.optionalWith(Schema.Boolean, { nullable: true })
})

export const GlobParams = Schema.Struct({ pattern: NonEmptyString("a glob pattern"), path: OptionalText })

const paramsSchemas = {
  bash: BashParams,
  read_file: ReadFileParams,
  write_file: WriteFileParams,
  edit_file: EditFileParams,
  grep: GrepParams,
  glob: GlobParams
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
    return Either.left(`arguments are not valid JSON (${firstLineOf(cause)})`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left("arguments must be a JSON object")
  }
  return decodeParams(paramsSchemas[name] as unknown as Schema.Schema<Record<string, unknown>, unknown>, value)
}
