import * as Effect from "effect/Effect"
import type * as Either from "effect/Either"

import type { CallToApprove } from "../../src/approvals/ApprovalScope"
import { FileAccessDisk } from "../../src/tools/FileAccess"
import { fileChangeFrom, type PlanWrite, type Preview } from "../../src/tools/Preview"
import { builtinRegistry } from "../../src/tools/Registry"
import { describeCall, type ToolRecord } from "../../src/tools/ToolRecord"

/** A built-in tool's record, by name (the test fails at once on a name mm does not have). */
export const toolNamed = (name: string): ToolRecord => {
  const tool = builtinRegistry.find(name)
  if (tool === undefined) throw new Error(`no built-in tool named ${name}`)
  return tool
}

/** A call as the approval rule sees it: a built-in tool's, or (any other name) a tool that reaches outside. */
export const callOf = (tool: string, input: Record<string, unknown>, cwd: string): CallToApprove => ({
  tool,
  access: builtinRegistry.find(tool)?.access ?? "outside",
  input,
  cwd
})

/** A call's preview, read from the disk now, as the core computes it before asking. */
export const previewNow = (tool: string, input: Record<string, unknown> | undefined, cwd: string): Preview =>
  Effect.runSync(toolNamed(tool).preview(input, cwd).pipe(Effect.provide(FileAccessDisk)))

/** A write's preview given the file's current text (undefined: no such file; Left: why it cannot be read). */
export const writePreview = (
  input: { readonly path: string; readonly content: string },
  cwd: string,
  current: Either.Either<string, string> | undefined
): Preview => {
  const plan: PlanWrite = (now) =>
    now === undefined || now._tag === "Right"
      ? { after: input.content }
      : { problem: `${now.left}: this write will fail or replace what cannot be shown` }
  return fileChangeFrom("write_file", input.path, cwd, current, plan)
}

/** What an approval request says of a call of a built-in tool: its name, access, title, kind and locations. */
export const requestFields = (tool: string, input: Record<string, unknown>, cwd: string) => {
  const record = toolNamed(tool)
  return { tool, access: record.access, ...describeCall(record, input, cwd) }
}
