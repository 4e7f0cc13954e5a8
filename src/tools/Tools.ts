import * as Effect from "effect/Effect"

import { firstLineOf } from "../lib/OneLine"
import { Secrets } from "../lib/Secrets"
import type { FileAccess } from "./FileAccess"
import { failure, type ToolContext, type ToolResult } from "./Tool"
import type { PreparedCall, ToolRecord } from "./ToolRecord"
import { truncateOutput } from "./Truncate"

/**
 * Runs one prepared call of `tool`, in mm's environment less the variables that hold secrets.
 * Never fails: any problem is a failed ToolResult the model sees. Known secrets in the result
 * are replaced by `[redacted]` before anyone sees it, and it is cut to `ctx.maxOutput`.
 * Interrupting it stops the call (a running command's process group is killed at once).
 */
export const runPrepared = (
  tool: ToolRecord,
  call: PreparedCall,
  ctx: ToolContext
): Effect.Effect<ToolResult, never, FileAccess | Secrets> =>
  Effect.flatMap(Secrets, (secrets) =>
    call.run({ ...ctx, env: secrets.toolEnv() }).pipe(
      Effect.catchAllDefect((defect) =>
        Effect.succeed(failure(`${tool.name} failed unexpectedly: ${firstLineOf(defect)}`))
      ),
      Effect.map((result) => ({
        output: truncateOutput(secrets.redact(result.output), ctx.maxOutput),
        failed: result.failed
      }))
    )).pipe(Effect.withSpan("Tools.run", { attributes: { tool: tool.name } }))

/** Checks the arguments of a call of `tool` (JSON text), then runs it as `runPrepared` does. */
export const runTool = (
  tool: ToolRecord,
  rawArguments: string,
  ctx: ToolContext
): Effect.Effect<ToolResult, never, FileAccess | Secrets> => {
  const prepared = tool.prepare(rawArguments)
  return prepared._tag === "Left"
    ? Effect.succeed(failure(`invalid arguments for ${tool.name}: ${prepared.left}`))
    : runPrepared(tool, prepared.right, ctx)
}
