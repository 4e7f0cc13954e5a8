// What a call will do, computed by the core before it asks for approval (and before a file
// tool runs), so that the terminal and the editor show the user the same thing.
import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { diffTexts, tooLargeSummary } from "../lib/Diff"
import { projectTargetOf } from "../lib/RealPath"
import { planEdit } from "../tools/EditFile"
import { FileAccess } from "../tools/FileAccess"
import { readText } from "../tools/Files"

/** A new file shows this many lines of its content, then how many more there are. */
export const NEW_FILE_HEAD_LINES = 40

export type Preview =
  /** bash: the whole command line, every line of it, and its timeout when given. */
  | { readonly _tag: "Command"; readonly command: string; readonly timeout: number | undefined }
  /**
   * edit_file / write_file. `before` is the file's text on disk now (undefined: no such
   * file); `after` its text once the call ran (undefined: the call will fail, `problem` says
   * why); `diff` the unified diff between them when both are known, unless it is too large to
   * show: then `tooLarge` sums the change up (`rewrites N lines (M → K lines); diff too large…`).
   */
  | {
    readonly _tag: "FileChange"
    readonly tool: "edit_file" | "write_file"
    /** As the model wrote it. */
    readonly path: string
    /** Absolute. */
    readonly file: string
    readonly outsideProject: boolean
    /** Where the path really leads (links followed), shown when that is outside the project. */
    readonly real?: string | undefined
    /** Why it counts as outside (a link that leads out, other hard links), when it does. */
    readonly outsideWhy?: string | undefined
    readonly before: string | undefined
    readonly after: string | undefined
    readonly diff: string
    readonly tooLarge?: string
    readonly problem: string | undefined
  }
  /** Any other tool: nothing beyond its title and arguments. */
  | { readonly _tag: "None" }

const stringArg = (input: Record<string, unknown> | undefined, key: string): string | undefined =>
  typeof input?.[key] === "string" ? (input[key] as string) : undefined

/**
 * The preview of one call, from the file as the tools will read it now (the disk, or an
 * editor's buffer under `mm acp`, see FileAccess.ts). Never fails: a problem is part of it.
 */
export const previewOf = (
  tool: string,
  input: Record<string, unknown> | undefined,
  cwd: string
): Effect.Effect<Preview, never, FileAccess> =>
  Effect.gen(function*() {
    const shown = stringArg(input, "path")
    if ((tool !== "edit_file" && tool !== "write_file") || shown === undefined) {
      return previewFrom(tool, input, cwd, undefined)
    }
    const file = path.resolve(cwd, shown)
    if (!fs.existsSync(file)) {
      return previewFrom(tool, input, cwd, undefined)
    }
    // edit_file changes only files that are UTF-8 text on the disk, as it will say
    const onDisk = tool === "edit_file" ? readText(file, shown) : undefined
    if (onDisk !== undefined && Either.isLeft(onDisk)) {
      return previewFrom(tool, input, cwd, onDisk)
    }
    const files = yield* FileAccess
    return previewFrom(tool, input, cwd, yield* files.read(file, shown))
  })

/** The preview, given the file's current text (undefined: there is no such file). */
export const previewFrom = (
  tool: string,
  input: Record<string, unknown> | undefined,
  cwd: string,
  current: Either.Either<string, string> | undefined
): Preview => {
  if (tool === "bash") {
    const command = stringArg(input, "command")
    if (command === undefined) return { _tag: "None" }
    return { _tag: "Command", command, timeout: typeof input?.timeout === "number" ? input.timeout : undefined }
  }
  if (tool !== "edit_file" && tool !== "write_file") return { _tag: "None" }
  const shown = stringArg(input, "path")
  if (shown === undefined) return { _tag: "None" }
  const file = path.resolve(cwd, shown)
  const target = projectTargetOf(cwd, file)
  const base = {
    _tag: "FileChange",
    tool,
    path: shown,
    file,
    outsideProject: target._tag === "Outside",
    real: target.real,
    outsideWhy: target._tag === "Outside" ? target.why : undefined
  } as const
  const before = current !== undefined && Either.isRight(current) ? current.right : undefined
  const change = (after: string | undefined, problem: string | undefined) => {
    const diff = before !== undefined && after !== undefined ? diffTexts(shown, before, after) : undefined
    return {
      ...base,
      before,
      after,
      diff: diff?.diff ?? "",
      ...(diff?.tooLarge === true ? { tooLarge: tooLargeSummary(diff) } : {}),
      problem
    }
  }
  if (tool === "write_file") {
    const content = stringArg(input, "content") ?? ""
    if (current === undefined || Either.isRight(current)) return change(content, undefined)
    return change(undefined, `${current.left}: this write will fail or replace what cannot be shown`)
  }
  const old = stringArg(input, "old")
  const replacement = stringArg(input, "new")
  if (old === undefined || replacement === undefined) return { _tag: "None" }
  if (current === undefined) return change(undefined, `no such file: ${shown}; this edit will fail`)
  if (Either.isLeft(current)) return change(undefined, `${current.left}; this edit will fail`)
  const plan = planEdit(current.right, { path: shown, old, new: replacement })
  if (Either.isLeft(plan)) return change(undefined, `this edit will fail: ${plan.left}`)
  return change(plan.right.after, undefined)
}

/** One line of a preview as shown to a person; the kind decides its colour in the terminal. */
export interface PreviewLine {
  readonly kind: "text" | "header" | "hunk" | "added" | "removed" | "context" | "note" | "warning"
  readonly text: string
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`

const linesOf = (text: string): Array<string> => {
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

const diffLine = (line: string): PreviewLine => {
  if (line.startsWith("+++ ") || line.startsWith("--- ")) return { kind: "header", text: line }
  if (line.startsWith("@@")) return { kind: "hunk", text: line }
  if (line.startsWith("+")) return { kind: "added", text: line }
  if (line.startsWith("-")) return { kind: "removed", text: line }
  if (line.startsWith("\\")) return { kind: "note", text: line }
  return { kind: "context", text: line }
}

/** `outside the project: REAL PATH`, and why when it is not plain (a link, hard links). */
export const outsideLines = (preview: FileChange): Array<PreviewLine> => {
  const real = preview.real ?? preview.file
  const lines: Array<PreviewLine> = [{ kind: "warning", text: `outside the project: ${real}` }]
  if (preview.outsideWhy !== undefined && real !== preview.file) {
    lines.push({ kind: "warning", text: `(${preview.path} is a link: ${preview.outsideWhy})` })
  } else if (preview.outsideWhy?.includes("hard link") === true) {
    lines.push({ kind: "warning", text: `(${preview.outsideWhy})` })
  }
  return lines
}

/**
 * The preview as lines for a person (the terminal prints them above its question): the
 * whole command; a diff; or a new file's first lines and its size. Long lines are left
 * whole: the one who prints them wraps them.
 */
export const previewLines = (preview: Preview): ReadonlyArray<PreviewLine> => {
  switch (preview._tag) {
    case "None":
      return []
    case "Command":
      return [
        ...preview.command.replace(/\n$/, "").split("\n").map((text): PreviewLine => ({ kind: "text", text })),
        ...(preview.timeout === undefined ? [] : [{ kind: "note", text: `(timeout ${preview.timeout} s)` } as const])
      ]
    case "FileChange": {
      const out: Array<PreviewLine> = []
      if (preview.outsideProject) out.push(...outsideLines(preview))
      if (preview.problem !== undefined) out.push({ kind: "warning", text: preview.problem })
      if (preview.after === undefined) return out
      if (preview.before === undefined) {
        const lines = linesOf(preview.after)
        const bytes = Buffer.byteLength(preview.after)
        out.push({
          kind: "header",
          text: `new file ${preview.path} (${plural(bytes, "byte")}, ${plural(lines.length, "line")})`
        })
        for (const line of lines.slice(0, NEW_FILE_HEAD_LINES)) out.push({ kind: "added", text: `+${line}` })
        if (lines.length > NEW_FILE_HEAD_LINES) {
          out.push({ kind: "note", text: `… ${plural(lines.length - NEW_FILE_HEAD_LINES, "more line")}` })
        }
        return out
      }
      if (preview.tooLarge !== undefined) {
        out.push({ kind: "header", text: `${preview.path}: ${preview.tooLarge}` })
        return out
      }
      if (preview.diff === "") {
        out.push({ kind: "note", text: `${preview.path} stays as it is (no change)` })
        return out
      }
      return [...out, ...linesOf(preview.diff).map(diffLine)]
    }
  }
}

export type FileChange = Extract<Preview, { readonly _tag: "FileChange" }>

/** The change a file tool is about to make (undefined for other tools): the diff its finished call shows. */
export const fileChangeOf = (
  tool: string,
  input: Record<string, unknown>,
  cwd: string
): Effect.Effect<FileChange | undefined, never, FileAccess> => {
  if (tool !== "edit_file" && tool !== "write_file") return Effect.succeed(undefined)
  return Effect.map(previewOf(tool, input, cwd), (preview) => (preview._tag === "FileChange" ? preview : undefined))
}
