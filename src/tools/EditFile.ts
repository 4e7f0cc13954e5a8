import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

import { pathLocation, stringArg } from "./Describe"
import { FileAccess } from "./FileAccess"
import { countLines, plural, readText, resolvePath } from "./Files"
import { filePreview, type PlanWrite } from "./Preview"
import { failure, type ToolContext, type ToolResult } from "./Tool"
import { NonBlankText } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

const occurrences = (text: string, part: string): Array<number> => {
  const found: Array<number> = []
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) found.push(at)
  return found
}

/**
 * What an edit does to a file's text: the whole text after it and where it lands, or why it
 * cannot be made (shown in the approval preview before it runs, and as the tool's error).
 */
const planEdit = (
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

const editFile = (
  args: { readonly path: string; readonly old: string; readonly new: string },
  ctx: ToolContext
): Effect.Effect<ToolResult, never, FileAccess> =>
  Effect.gen(function*() {
    const files = yield* FileAccess
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

/** What the edit will leave in the file, or why it will fail. */
const planned = (shown: string, old: string, replacement: string): PlanWrite => (current) => {
  if (current === undefined) return { problem: `no such file: ${shown}; this edit will fail` }
  if (Either.isLeft(current)) return { problem: `${current.left}; this edit will fail` }
  const plan = planEdit(current.right, { path: shown, old, new: replacement })
  return Either.isLeft(plan) ? { problem: `this edit will fail: ${plan.left}` } : { after: plan.right.after }
}

export const editFileTool = defineTool({
  name: "edit_file",
  description: "Replace one exact piece of text in a file: `old` must occur exactly once, whitespace included " +
    "(add surrounding lines to make it unique).",
  parameters: Schema.Struct({
    path: NonBlankText("a path", "relative to the project, or absolute"),
    old: Schema.String.annotations({ description: "the exact text to replace" }),
    new: Schema.String.annotations({ description: "the text to put in its place" })
  }),
  access: "write",
  kind: "edit",
  purpose: "edit files with `edit_file`",
  describe: (args, cwd) => ({ title: stringArg(args, "path") ?? "", locations: pathLocation(args, cwd) }),
  preview: (input, cwd) => {
    const [shown, old, replacement] = [stringArg(input, "path"), stringArg(input, "old"), stringArg(input, "new")]
    if (shown === undefined || old === undefined || replacement === undefined) return Effect.succeed({ _tag: "None" })
    // edit_file changes only files that are UTF-8 text on the disk, as it will say
    return filePreview("edit_file", input, cwd, planned(shown, old, replacement), readText)
  },
  // a stored edit shows the piece it replaced (the file's old text is gone)
  changeFromArguments: (args) =>
    typeof args.old === "string" && typeof args.new === "string" ? { before: args.old, after: args.new } : undefined,
  run: editFile
})
