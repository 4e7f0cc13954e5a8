import * as fs from "node:fs"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import type { FileAccessShape } from "./FileAccess"
import { countLines, plural, readText, resolvePath } from "./Files"
import { failure, type ToolContext, type ToolResult } from "./Tool"

const occurrences = (text: string, part: string): Array<number> => {
  const found: Array<number> = []
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) found.push(at)
  return found
}

/**
 * What an edit does to a file's text: the whole text after it and where it lands, or why it
 * cannot be made (shown in the approval preview before it runs, and as the tool's error).
 */
export const planEdit = (
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

export const editFileTool = (
  args: { readonly path: string; readonly old: string; readonly new: string },
  ctx: ToolContext,
  files: FileAccessShape
): Effect.Effect<ToolResult> =>
  Effect.gen(function*() {
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
