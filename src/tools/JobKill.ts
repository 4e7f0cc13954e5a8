// job_kill: ends a background job and all it started (SIGTERM, then SIGKILL after a short
// grace), and says its last output. The job was approved when it started: never asked.
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { JobId, jobTitle } from "./JobOutput"
import { failure } from "./Tool"
import { defineTool } from "./ToolRecord"

export const jobKillTool = defineTool({
  name: "job_kill",
  description: "End a background job and all it started; the result has its last output.",
  parameters: Schema.Struct({ id: JobId }),
  access: "mm",
  kind: "execute",
  describe: jobTitle,
  run: (args, ctx) =>
    ctx.jobs === undefined ? Effect.succeed(failure("background jobs are not available here")) : ctx.jobs.kill(args.id)
})
