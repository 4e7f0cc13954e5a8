import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import type { FileAccessShape } from "./FileAccess"
import { countLines, plural, readText, resolvePath } from "./Files"
import { failure, type ToolContext } from "./Tool"

export const writeFileTool = (
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
