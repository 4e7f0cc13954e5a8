// grep: the lines of the project's files that match a regular expression, as
// `path:line: text`, read-only and capped in count and size. The search itself runs in the
// search worker (GrepSearch.ts), so that no pattern can hold mm's main thread.
import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { firstLineOf } from "../lib/OneLine"
import { searchDescription } from "./Describe"
import { fileProblem, notRegularOnDisk, resolvePath } from "./Files"
import { neverSearched } from "./ProjectWalk"
import { runSearch, secretsFor } from "./SearchRunner"
import { failure, GREP_MAX_MATCHES, type ToolContext, type ToolResult } from "./Tool"
import { optional, withoutEmptyText } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

interface GrepArgs {
  readonly pattern: string
  readonly path?: string | undefined
  readonly glob?: string | undefined
  readonly ignore_case?: boolean | undefined
}

/** Why the pattern is not a regular expression; undefined when it is (compiling one only parses it). */
const invalidPattern = (args: GrepArgs): string | undefined => {
  try {
    new RegExp(args.pattern, args.ignore_case === true ? "i" : "")
    return undefined
  } catch (cause) {
    return `invalid regular expression: ${firstLineOf(cause)}`
  }
}

/**
 * grep: its arguments checked here, its search run in the search worker (SearchRunner.ts).
 * Never fails (a problem is a failed result); cancelling terminates the worker.
 */
const grep = (args: GrepArgs, ctx: ToolContext): Effect.Effect<ToolResult> => {
  const invalid = invalidPattern(args)
  if (invalid !== undefined) return Effect.succeed(failure(invalid))
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
  // a FIFO, a device or a socket named as the path: one line, never handed to the search
  const special = stat.isDirectory() ? undefined : notRegularOnDisk(start, shownStart)
  if (special !== undefined) return Effect.succeed(failure(special))
  const secrets = secretsFor(ctx)
  if (typeof secrets === "string") return Effect.succeed(failure(`grep failed: ${secrets}`))
  return runSearch({
    kind: "lines",
    tool: "grep",
    pattern: args.pattern,
    ignoreCase: args.ignore_case === true,
    glob: args.glob,
    cwd: ctx.cwd,
    start,
    // a file named as the path is searched, whatever its name: reading it was asked if it looks secret
    folder: stat.isDirectory(),
    budget: Math.max(1000, ctx.maxOutput - 200),
    secrets
  })
}

export const grepTool = defineTool({
  name: "grep",
  description:
    "Search file contents for a JavaScript regular expression; .gitignored, binary and secret-looking files " +
    "(.env, keys) are skipped unless `path` names one. " +
    `Returns up to ${GREP_MAX_MATCHES} lines as \`path:line: text\`.`,
  parameters: Schema.Struct({
    pattern: Schema.String.annotations({ description: "regular expression" }).pipe(
      Schema.filter((s) => s !== "" || "expected a regular expression, got an empty string")
    ),
    path: optional(Schema.String.annotations({ description: "folder or file to search (default: the project)" })),
    glob: optional(Schema.String.annotations({ description: "only files matching this glob" })),
    ignore_case: optional(Schema.Boolean)
  }),
  access: "read",
  kind: "search",
  purpose: "find text with `grep`",
  tidy: withoutEmptyText,
  describe: (args, cwd) => searchDescription(args, cwd, typeof args?.glob === "string" ? args.glob : undefined),
  run: grep
})
