// glob: the paths of the project's files that match a pattern, newest first, capped. The
// search itself runs in the search worker (GlobSearch.ts), so that no pattern can hold mm's
// main thread.
import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { searchDescription } from "./Describe"
import { fileProblem, resolvePath } from "./Files"
import { neverSearched } from "./ProjectWalk"
import { kindOf } from "./RegularRead"
import { runSearch, secretsFor } from "./SearchRunner"
import { failure, GLOB_MAX_PATHS, type ToolContext, type ToolResult } from "./Tool"
import { NonBlankText, optional, withoutEmptyText } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

interface GlobArgs {
  readonly pattern: string
  readonly path?: string | undefined
}

/**
 * glob: its arguments checked here, its search run in the search worker (SearchRunner.ts).
 * Never fails (a problem is a failed result); cancelling terminates the worker.
 */
const glob = (args: GlobArgs, ctx: ToolContext): Effect.Effect<ToolResult> => {
  const shownStart = args.path ?? "."
  const start = resolvePath(ctx.cwd, shownStart)
  const refused = neverSearched(ctx.cwd, start, shownStart)
  if (refused !== undefined) return Effect.succeed(failure(refused))
  try {
    const stat = fs.statSync(start)
    if (!stat.isDirectory()) {
      return Effect.succeed(failure(`${shownStart} is ${stat.isFile() ? "a file" : kindOf(stat)}, not a folder`))
    }
  } catch (cause) {
    return Effect.succeed(failure(fileProblem(cause, shownStart).replace("no such file", "no such folder")))
  }
  const secrets = secretsFor(ctx)
  if (typeof secrets === "string") return Effect.succeed(failure(`glob failed: ${secrets}`))
  return runSearch({
    kind: "paths",
    tool: "glob",
    pattern: args.pattern,
    cwd: ctx.cwd,
    start,
    budget: Math.max(1000, ctx.maxOutput - 200),
    secrets
  })
}

export const globTool = defineTool({
  name: "glob",
  description: "Find files by path pattern (.gitignored and secret-looking files skipped): " +
    "`*.ts` matches at any depth, " +
    `\`src/**/*.ts\` from the folder searched. Returns up to ${GLOB_MAX_PATHS} paths, newest first.`,
  parameters: Schema.Struct({
    pattern: NonBlankText("a glob pattern", "glob pattern"),
    path: optional(Schema.String.annotations({ description: "folder to search (default: the project)" }))
  }),
  access: "read",
  kind: "search",
  purpose: "find files with `glob`",
  tidy: withoutEmptyText,
  describe: searchDescription,
  run: glob
})
