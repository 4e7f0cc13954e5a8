// job_kill: ends a background job and all it started (SIGTERM, then SIGKILL after a short
// grace), and says its last output. The job was approved when it started: never asked.
import * as Schema from "effect/Schema"

import { JobId, jobTitle, withJobs } from "./JobOutput"
import { defineTool } from "./ToolRecord"

export const jobKillTool = defineTool({
  name: "job_kill",
  description: "End a background job and all it started; the result has its last output.",
  parameters: Schema.Struct({ id: JobId }),
  access: "mm",
  kind: "execute",
  describe: jobTitle,
  run: (args, ctx) => withJobs(ctx, (jobs) => jobs.kill(args.id))
})
