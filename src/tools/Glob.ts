// glob: the paths of the project's files that match a pattern, newest first, capped.
import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { firstLineOf } from "../lib/OneLine"
import { searchDescription } from "./Describe"
import { fileProblem, resolvePath } from "./Files"
import { globMatcher } from "./GlobMatch"
import { shownPathOf } from "./Grep"
import { neverSearched, walkFiles } from "./ProjectWalk"
import { looksSecret, secretsLeftOut } from "./SecretFiles"
import { failure, GLOB_MAX_PATHS, type ToolContext, type ToolResult } from "./Tool"
import { NonBlankText, optional, withoutEmptyText } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

interface GlobArgs {
  readonly pattern: string
  readonly path?: string | undefined
}

const mtimeOf = (file: string): number => {
  try {
    return fs.lstatSync(file).mtimeMs
  } catch {
    return 0
  }
}

const globResult = (found: Array<{ shown: string; mtime: number }>, budget: number, secret: number): ToolResult => {
  const left = secret === 0 ? [] : [secretsLeftOut(secret, "not listed")]
  if (found.length === 0) return { output: ["no files match", ...left].join("\n"), failed: false }
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
  return { output: [...lines, ...left].join("\n"), failed: false }
}

/** glob on the disk: never fails (a problem is a failed result); cancelling stops the walk. */
const glob = (args: GlobArgs, ctx: ToolContext): Effect.Effect<ToolResult> => {
  const shownStart = args.path ?? "."
  const start = resolvePath(ctx.cwd, shownStart)
  const refused = neverSearched(ctx.cwd, start, shownStart)
  if (refused !== undefined) return Effect.succeed(failure(refused))
  try {
    if (!fs.statSync(start).isDirectory()) return Effect.succeed(failure(`${shownStart} is a file, not a folder`))
  } catch (cause) {
    return Effect.succeed(failure(fileProblem(cause, shownStart).replace("no such file", "no such folder")))
  }
  return Effect.async<ToolResult>((resume) => {
    let cancelled = false
    const walk = async () => {
      const matches = await globMatcher(args.pattern)
      const found: Array<{ shown: string; mtime: number }> = []
      const secretFile = ctx.secretFile ?? looksSecret
      let secret = 0
      await walkFiles(start, {
        projectDir: ctx.cwd,
        cancelled: () => cancelled,
        onFile: ({ file, relative }) => {
          if (!matches(relative)) return true
          if (secretFile(file)) secret++
          else found.push({ shown: shownPathOf(ctx.cwd, file), mtime: mtimeOf(file) })
          return true
        }
      })
      return globResult(found, Math.max(1000, ctx.maxOutput - 200), secret)
    }
    walk().then(
      (result) => !cancelled && resume(Effect.succeed(result)),
      (cause) => !cancelled && resume(Effect.succeed(failure(`glob failed: ${firstLineOf(cause)}`)))
    )
    return Effect.sync(() => {
      cancelled = true
    })
  })
}

export const globTool = defineTool({
  name: "glob",
  description: "Find files by path pattern; .gitignored files and files that look secret (.env, keys) are skipped. " +
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
