// job_output: what a background job (`bash` with `background: true`) printed since the last
// read, and whether it still runs. It reads mm's own buffer and nothing else: never asked.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { failure, type ToolContext, type ToolResult } from "./Tool"
import { Count } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

/** A job's number, as `bash` with `background: true` gave it. */
export const JobId = Count("the job's id, as bash gave it")

/** `job 2`, the title of a call on job 2. */
export const jobTitle = (args: Record<string, unknown> | undefined) => ({
  title: typeof args?.id === "number" ? `job ${args.id}` : "",
  locations: []
})

/** Runs `use` on the conversation's jobs; a failed result where there are none (a sub-agent, a test without them). */
export const withJobs = (
  ctx: ToolContext,
  use: (jobs: NonNullable<ToolContext["jobs"]>) => Effect.Effect<ToolResult>
): Effect.Effect<ToolResult> =>
  ctx.jobs === undefined ? Effect.succeed(failure("background jobs are not available here")) : use(ctx.jobs)

export const jobOutputTool = defineTool({
  name: "job_output",
  description: "What a background job printed since the last read, and whether it still runs (or its exit code).",
  parameters: Schema.Struct({ id: JobId }),
  access: "mm",
  kind: "read",
  describe: jobTitle,
  run: (args, ctx) => withJobs(ctx, (jobs) => jobs.output(args.id))
})
