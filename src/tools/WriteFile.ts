import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

import { pathLocation, stringArg } from "./Describe"
import { FileAccess } from "./FileAccess"
import { countLines, plural, readText, resolvePath } from "./Files"
import { filePreview } from "./Preview"
import { failure, type ToolContext } from "./Tool"
import { NonBlankText } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

const writeFile = (args: { readonly path: string; readonly content: string }, ctx: ToolContext) =>
  Effect.gen(function*() {
    const files = yield* FileAccess
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

export const writeFileTool = defineTool({
  name: "write_file",
  description: "Create or overwrite a whole file (missing folders are made). " +
    "To change part of a file, use edit_file.",
  parameters: Schema.Struct({
    path: NonBlankText("a path", "relative to the project, or absolute"),
    content: Schema.String.annotations({ description: "the complete new content of the file" })
  }),
  access: "write",
  kind: "edit",
  purpose: "write files with `write_file`",
  describe: (args, cwd) => ({ title: stringArg(args, "path") ?? "", locations: pathLocation(args, cwd) }),
  preview: (input, cwd) =>
    filePreview("write_file", input, cwd, (current) =>
      current === undefined || Either.isRight(current)
        ? { after: stringArg(input, "content") ?? "" }
        : { problem: `${current.left}: this write will fail or replace what cannot be shown` }),
  // a stored write shows its content as a new file only when it created one
  changeFromArguments: (args, output) =>
    typeof args.content === "string" && !output.startsWith("overwrote ") ? { after: args.content } : undefined,
  run: writeFile
})
