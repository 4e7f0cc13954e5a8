import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { firstLineOf } from "../lib/OneLine"
import { Secrets } from "../lib/Secrets"
import { editFileTool } from "./EditFile"
import { FileAccess } from "./FileAccess"
import { globTool } from "./Glob"
import { grepTool } from "./Grep"
import { readFile } from "./ReadFile"
import { failure, isToolName, type ToolContext, type ToolName, type ToolResult } from "./Tool"
import { parseToolArguments, type ToolArgs } from "./ToolArguments"
import { truncateOutput } from "./Truncate"
import { writeFileTool } from "./WriteFile"

/** The arguments without the optional ones given as "" (a small model's way of leaving one out). */
const withoutEmpty = (args: Record<string, unknown>): Record<string, unknown> =>
  Object.fromEntries(Object.entries(args).filter(([key, value]) => key === "pattern" || value !== ""))

const dispatch = (name: ToolName, args: Record<string, unknown>, ctx: ToolContext) =>
  Effect.flatMap(FileAccess, (files): Effect.Effect<ToolResult> => {
    switch (name) {
      case "bash":
        return files.bash(args as ToolArgs["bash"], ctx)
      case "read_file":
        return readFile(args as ToolArgs["read_file"], ctx, files)
      case "write_file":
        return writeFileTool(args as ToolArgs["write_file"], ctx, files)
      case "edit_file":
        return editFileTool(args as ToolArgs["edit_file"], ctx, files)
      case "grep":
        return grepTool(withoutEmpty(args) as ToolArgs["grep"], ctx)
      case "glob":
        return globTool(withoutEmpty(args) as ToolArgs["glob"], ctx)
    }
  })

/**
 * Runs one call. Never fails: any problem is a failed ToolResult the model sees. Known
 * secrets in the result are replaced by `[redacted]` before anyone sees it.
 * Interrupting it kills a running bash process group at once.
 */
export const runTool = (
  name: string,
  rawArguments: string,
  ctx: ToolContext
): Effect.Effect<ToolResult, never, FileAccess | Secrets> =>
  Effect.flatMap(Secrets, (secrets) =>
    Either.match(parseToolArguments(name, rawArguments), {
      onLeft: (reason): Effect.Effect<ToolResult, never, FileAccess> =>
        Effect.succeed(failure(isToolName(name) ? `invalid arguments for ${name}: ${reason}` : reason)),
      onRight: (args) => dispatch(name as ToolName, args, { ...ctx, env: secrets.toolEnv() })
    }).pipe(
      Effect.catchAllDefect((defect) => Effect.succeed(failure(`${name} failed unexpectedly: ${firstLineOf(defect)}`))),
      Effect.map((result) => ({
        output: truncateOutput(secrets.redact(result.output), ctx.maxOutput),
        failed: result.failed
      }))
    )).pipe(Effect.withSpan("Tools.runTool", { attributes: { tool: name } }))
