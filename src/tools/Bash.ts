// bash: a command line run with `bash -c` in the project directory, through FileAccess (a local
// process group, CommandProcess.ts, or an editor's terminal under `mm acp`). With background
// jobs on (`jobs.enabled`), `background: true` starts it as a job and returns at once (Job.ts).
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { firstLineTitle, stringArg } from "./Describe"
import { FileAccess } from "./FileAccess"
import { startJob } from "./JobProcess"
import type { Preview } from "./Preview"
import { type CommandLine, DEFAULT_BASH_TIMEOUT_SECONDS, failure, type ToolContext } from "./Tool"
import { NonBlankText, optional, Seconds } from "./ToolArguments"
import { defineTool, type ToolRecord } from "./ToolRecord"

const DESCRIPTION = "Run a command with `bash -c` in the project directory; stdin is closed. " +
  "The result starts with `exit code N` (or `killed after N s (timeout)`), then stdout and stderr interleaved; " +
  "long output keeps its start and end. On timeout, the command and all it started are killed."

const BACKGROUND = " With background: true it returns a job id at once (no timeout); " +
  "read the job with job_output, end it with job_kill."

const command = NonBlankText("a command", "the command line, run by bash -c")
const timeout = optional(Seconds(`seconds before the command is killed (default ${DEFAULT_BASH_TIMEOUT_SECONDS})`))
const background = optional(
  Schema.Boolean.annotations({ description: "run it as a background job" })
)

/** The command line confined as the call's context says (the sandbox's argv and environment). */
const commandLine = (text: string, seconds: number, ctx: ToolContext): CommandLine => {
  const argv = ["bash", "-c", text]
  const confined = ctx.confine?.(argv)
  return {
    argv: confined?.argv ?? argv,
    ...(confined === undefined ? {} : { env: confined.env }),
    seconds,
    name: "bash"
  }
}

const describe: ToolRecord["describe"] = (args) => {
  const text = stringArg(args, "command")
  return { title: text === undefined ? "" : firstLineTitle(text), locations: [] }
}

const preview: ToolRecord["preview"] = (input) => {
  const text = stringArg(input, "command")
  const shown: Preview = text === undefined
    ? { _tag: "None" }
    : { _tag: "Command", command: text, timeout: typeof input?.timeout === "number" ? input.timeout : undefined }
  return Effect.succeed(shown)
}

const runForeground = (args: { readonly command: string; readonly timeout?: number | undefined }, ctx: ToolContext) =>
  Effect.flatMap(
    FileAccess,
    (files) => files.run(commandLine(args.command, args.timeout ?? DEFAULT_BASH_TIMEOUT_SECONDS, ctx), ctx)
  )

/** A job: started confined as a foreground call would run (the same argv and environment), kept by the conversation. */
const runBackground = (text: string, ctx: ToolContext) =>
  Effect.gen(function*() {
    const jobs = ctx.jobs
    if (jobs === undefined) return failure("background jobs are not available here")
    const files = yield* FileAccess
    const line = commandLine(text, 0, ctx)
    const started = yield* (files.start ?? startJob)(line, ctx, jobs.maxBuffer)
    if (started._tag === "Left") return failure(started.left)
    return yield* jobs.add(text, started.right)
  })

export const bashTool = defineTool({
  name: "bash",
  description: DESCRIPTION,
  parameters: Schema.Struct({ command, timeout }),
  access: "command",
  kind: "execute",
  purpose: "run shell commands with `bash`",
  describe,
  preview,
  run: runForeground
})

/** `bash` with `background` (jobs on): the same tool, its schema one field longer. */
export const backgroundBashTool = defineTool({
  name: "bash",
  description: DESCRIPTION + BACKGROUND,
  parameters: Schema.Struct({ command, timeout, background }),
  access: "command",
  kind: "execute",
  purpose: "run shell commands with `bash`",
  describe,
  preview,
  run: (args, ctx) => (args.background === true ? runBackground(args.command, ctx) : runForeground(args, ctx))
})
