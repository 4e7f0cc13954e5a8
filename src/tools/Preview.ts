// What a call will do, computed before it is asked and before a file tool runs, so that the
// terminal and the editor show the user the same thing (approvals/PreviewLines.ts draws it as
// lines). Each tool's record says how its own preview is made; the file tools share `filePreview`.
import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { diffTexts, tooLargeSummary } from "../lib/Diff"
import { FileAccess } from "./FileAccess"
import { writeTarget } from "./ProtectedPaths"

export type Preview =
  /** A command: the whole command line, every line of it, and its timeout when given. */
  | { readonly _tag: "Command"; readonly command: string; readonly timeout: number | undefined }
  /**
   * A file tool. `before` is the file's text on disk now (undefined: no such file); `after` its
   * text once the call ran (undefined: the call will fail, `problem` says why); `diff` the
   * unified diff between them when both are known, unless it is too large to show: then
   * `tooLarge` sums the change up (`rewrites N lines (M → K lines); diff too large…`).
   */
  | {
    readonly _tag: "FileChange"
    /** The tool's name. */
    readonly tool: string
    /** As the model wrote it. */
    readonly path: string
    /** Absolute. */
    readonly file: string
    /** Whether the write counts as outside the project: it lands outside, or on a protected path (ProtectedPaths.ts). */
    readonly outsideProject: boolean
    /** Where the path really leads (links followed), shown when that is outside the project. */
    readonly real?: string | undefined
    /** Why it counts as outside (a link that leads out, other hard links, a protected path), when it does. */
    readonly outsideWhy?: string | undefined
    /** Set when it counts as outside because it is a protected path (.git/, .mm/, agent.yaml) inside the project. */
    readonly protectedPath?: boolean
    readonly before: string | undefined
    readonly after: string | undefined
    readonly diff: string
    readonly tooLarge?: string
    readonly problem: string | undefined
  }
  /** A read of a file that looks secret (SecretFiles.ts), asked even inside the project: why it counts as secret. */
  | { readonly _tag: "Secret"; readonly reason: string }
  /** Nothing beyond the call's title and arguments. */
  | { readonly _tag: "None" }

export type FileChange = Extract<Preview, { readonly _tag: "FileChange" }>

const none: Preview = { _tag: "None" }

/** The preview of a tool that has nothing to show beyond its title. */
export const noPreview = (): Effect.Effect<Preview> => Effect.succeed(none)

/**
 * What a file tool will leave in the file, given its current text (undefined: no such file;
 * Left: it cannot be read as text, why): the text after the call, or why the call will fail.
 */
export type PlanWrite = (
  current: Either.Either<string, string> | undefined
) => { readonly after: string } | { readonly problem: string } | undefined

/** The preview of a file tool, once its current text is known. */
export const fileChangeFrom = (
  tool: string,
  shown: string,
  cwd: string,
  current: Either.Either<string, string> | undefined,
  plan: PlanWrite
): Preview => {
  const file = path.resolve(cwd, shown)
  const target = writeTarget(cwd, file)
  const planned = plan(current)
  if (planned === undefined) return none
  const before = current !== undefined && Either.isRight(current) ? current.right : undefined
  const after = "after" in planned ? planned.after : undefined
  const diff = before !== undefined && after !== undefined ? diffTexts(shown, before, after) : undefined
  return {
    _tag: "FileChange",
    tool,
    path: shown,
    file,
    outsideProject: target._tag === "Outside",
    real: target.real,
    outsideWhy: target._tag === "Outside" ? target.why : undefined,
    ...(target._tag === "Outside" && target.protectedPath ? { protectedPath: true } : {}),
    before,
    after,
    diff: diff?.diff ?? "",
    ...(diff?.tooLarge === true ? { tooLarge: tooLargeSummary(diff) } : {}),
    problem: "problem" in planned ? planned.problem : undefined
  }
}

/**
 * The preview of a file tool, read as the tools will read the file now (the disk, or an
 * editor's buffer under `mm acp`, see FileAccess.ts). `diskFirst`: the disk's copy decides
 * whether the file can be read as text at all (edit_file changes only UTF-8 text on the disk).
 * Never fails: a problem is part of the preview.
 */
export const filePreview = (
  tool: string,
  input: Record<string, unknown> | undefined,
  cwd: string,
  plan: PlanWrite,
  diskFirst?: (file: string, shown: string) => Either.Either<string, string>
): Effect.Effect<Preview, never, FileAccess> =>
  Effect.gen(function*() {
    const shown = typeof input?.path === "string" ? input.path : undefined
    if (shown === undefined) return none
    const file = path.resolve(cwd, shown)
    if (!fs.existsSync(file)) return fileChangeFrom(tool, shown, cwd, undefined, plan)
    const onDisk = diskFirst?.(file, shown)
    if (onDisk !== undefined && Either.isLeft(onDisk)) return fileChangeFrom(tool, shown, cwd, onDisk, plan)
    const files = yield* FileAccess
    return fileChangeFrom(tool, shown, cwd, yield* files.read(file, shown), plan)
  })
