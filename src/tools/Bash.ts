// bash: a command line run with `bash -c` in the project directory, through FileAccess (a local
// process group, CommandProcess.ts, or an editor's terminal under `mm acp`).
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"

import { firstLineTitle, stringArg } from "./Describe"
import { FileAccess } from "./FileAccess"
import type { Preview } from "./Preview"
import { DEFAULT_BASH_TIMEOUT_SECONDS } from "./Tool"
import { NonBlankText, optional, Seconds } from "./ToolArguments"
import { defineTool } from "./ToolRecord"

export const bashTool = defineTool({
  name: "bash",
  description: "Run a command with `bash -c` in the project directory; stdin is closed. " +
    "The result starts with `exit code N` (or `killed after N s (timeout)`), then stdout and stderr interleaved; " +
    "long output keeps its start and end. On timeout, the command and all it started are killed.",
  parameters: Schema.Struct({
    command: NonBlankText("a command", "the command line, run by bash -c"),
    timeout: optional(Seconds(`seconds before the command is killed (default ${DEFAULT_BASH_TIMEOUT_SECONDS})`))
  }),
  access: "command",
  kind: "execute",
  purpose: "run shell commands with `bash`",
  describe: (args) => {
    const command = stringArg(args, "command")
    return { title: command === undefined ? "" : firstLineTitle(command), locations: [] }
  },
  preview: (input) => {
    const command = stringArg(input, "command")
    const preview: Preview = command === undefined
      ? { _tag: "None" }
      : { _tag: "Command", command, timeout: typeof input?.timeout === "number" ? input.timeout : undefined }
    return Effect.succeed(preview)
  },
  run: (args, ctx) =>
    Effect.flatMap(FileAccess, (files) => {
      const argv = ["bash", "-c", args.command]
      const confined = ctx.confine?.(argv)
      return files.run({
        argv: confined?.argv ?? argv,
        ...(confined === undefined ? {} : { env: confined.env }),
        seconds: args.timeout ?? DEFAULT_BASH_TIMEOUT_SECONDS,
        name: "bash"
      }, ctx)
    })
})
