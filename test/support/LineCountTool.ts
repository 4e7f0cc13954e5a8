// A small read-only tool, written by following CONTRIBUTING.md's steps for a new tool: one
// module exporting one record. test/tools/AddingATool.test.ts registers it and checks that
// every part of mm that reads tools knows it.
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

import { pathLocation, stringArg } from "../../src/tools/Describe"
import { FileAccess } from "../../src/tools/FileAccess"
import { resolvePath } from "../../src/tools/Files"
import { failure } from "../../src/tools/Tool"
import { NonBlankText } from "../../src/tools/ToolArguments"
import { defineTool } from "../../src/tools/ToolRecord"

export const lineCountTool = defineTool({
  name: "line_count",
  description: "Count the lines of a text file, relative to the project directory.",
  parameters: Schema.Struct({ path: NonBlankText("a path", "the file whose lines to count") }),
  access: "read",
  kind: "read",
  purpose: "count lines with `line_count`",
  describe: (args, cwd) => ({ title: stringArg(args, "path") ?? "", locations: pathLocation(args, cwd) }),
  run: (args, ctx) =>
    Effect.gen(function*() {
      const files = yield* FileAccess
      const text = yield* files.read(resolvePath(ctx.cwd, args.path), args.path)
      if (Either.isLeft(text)) return failure(text.left)
      const lines = text.right === "" ? 0 : text.right.split("\n").length - (text.right.endsWith("\n") ? 1 : 0)
      return { output: `${args.path}: ${lines} line${lines === 1 ? "" : "s"}`, failed: false }
    })
})
