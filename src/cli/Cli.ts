import * as Args from "@effect/cli/Args"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Console from "effect/Console"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"

import { acpLayer, storeLayer } from "../app/Layers"
import { forkTarget, type StartOn } from "../domain/StartOn"
import { Secrets } from "../lib/Secrets"
import { VERSION } from "../lib/Version"
import type { RunArgs } from "./Args"
import { type ExitCode, run, withConfig, withSandbox } from "./Run"
import { listSessions, removeSessions, searchSessions, showSession } from "./SessionsCommand"

/**
 * The whole command line as @effect/cli declares it: what `mm --help` shows, and the parser
 * of the subcommands. The common top-level forms are read by hand first (src/cli/Args.ts), with
 * the same meaning; a test checks that both agree.
 */

const configOption = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withPseudoName("PATH"),
  Options.withDescription("the agent.yaml to use (otherwise $AGENT_CONFIG, then ./agent.yaml, then the defaults)"),
  Options.optional
)

const rootOptions = {
  config: configOption,
  print: Options.boolean("print").pipe(
    Options.withAlias("p"),
    Options.withDescription("answer once and exit: only the answer on stdout; what stdin holds is added as context")
  ),
  outputFormat: Options.choice("output-format", ["text", "json"]).pipe(
    Options.withDescription("with -p: text (the answer) or json (one JSON object per event, then a result)"),
    Options.withDefault("text" as const)
  ),
  continue: Options.boolean("continue").pipe(
    Options.withDescription("go on with the latest conversation of this project")
  ),
  resume: Options.text("resume").pipe(
    Options.withPseudoName("ID"),
    Options.withDescription(
      "go on with that conversation (full id, unique prefix or 8-hex suffix); without an id, pick from a list"
    ),
    Options.optional
  ),
  fork: Options.text("fork").pipe(
    Options.withPseudoName("ID[:N]"),
    Options.withDescription("go on in a new session holding that one's turns up to N (all by default)"),
    Options.optional
  ),
  yes: Options.boolean("yes").pipe(
    Options.withAlias("y"),
    Options.withDescription("allow every tool without asking, for this run")
  ),
  verbose: Options.boolean("verbose").pipe(Options.withDescription("with -p: tool calls and the session id on stderr")),
  question: Args.text({ name: "QUESTION" }).pipe(
    Args.withDescription("asked first (the REPL goes on after it; with -p, the only question)"),
    Args.repeated
  )
}

/** The root command; `onRun` gets the same RunArgs as the hand-written reading of src/cli/Args.ts would. */
export const rootCommand = <E, R>(onRun: (args: RunArgs) => Effect.Effect<void, E, R>) =>
  Command.make("mm", rootOptions, (o) => {
    const forked = Option.isSome(o.fork) ? forkTarget(o.fork.value) : undefined
    const start: StartOn = o.continue
      ? { _tag: "Latest" }
      : forked !== undefined
      ? { _tag: "Fork", ...forked }
      : Option.isSome(o.resume)
      ? { _tag: "Id", id: o.resume.value }
      : { _tag: "New" }
    const question = o.question.join(" ")
    return onRun({
      config: Option.getOrUndefined(o.config),
      question: question.trim() === "" ? undefined : question,
      print: o.print,
      outputFormat: o.outputFormat,
      start,
      yes: o.yes,
      verbose: o.verbose
    })
  }).pipe(
    Command.withDescription(
      "mm, a small coding agent with persistent sessions. Without a subcommand: the terminal REPL in the current directory (or, with -p, one answer)."
    )
  )

/** A handler's exit code, carried out of @effect/cli (whose handlers return nothing) as a failure. */
export class ExitWith extends Data.TaggedError("ExitWith")<{ readonly code: ExitCode }> {}

const exitWith = <E, R>(program: Effect.Effect<ExitCode, E, R>): Effect.Effect<void, E | ExitWith, R> =>
  Effect.flatMap(program, (code) => (code === 0 ? Effect.void : Effect.fail(new ExitWith({ code }))))

const mm = rootCommand((args) => exitWith(run(args)))

const acp = Command.make(
  "acp",
  { config: configOption },
  ({ config }) =>
    exitWith(withConfig(Option.getOrUndefined(config), (loaded) =>
      withSandbox(loaded, () =>
        Effect.flatMap(
          Effect.promise(() => import("../acp/AcpMain")),
          ({ acpChoice, runAcp }) =>
            Effect.flatMap(Secrets, (secrets) => Effect.as(runAcp(loaded, acpLayer(loaded, acpChoice(secrets))), 0))
        ))))
).pipe(Command.withDescription("run as an Agent Client Protocol agent on stdin/stdout (for Zed and other ACP editors)"))

const jsonOption = Options.boolean("json").pipe(Options.withDescription("print the listing as JSON"))

const checkpointsGcCommand = Command.make(
  "gc",
  { config: configOption },
  ({ config }) =>
    exitWith(withConfig(Option.getOrUndefined(config), (loaded) =>
      Effect.gen(function*() {
        const { checkpointsGc, gcLine } = yield* Effect.promise(() => import("../changes/CheckpointsGc"))
        const done = yield* Effect.either(checkpointsGc(process.cwd()))
        if (done._tag === "Left") {
          yield* Console.error(`mm: ${done.left.message}`)
          return 1
        }
        yield* Console.log(gcLine(done.right))
        return 0
      }).pipe(Effect.provide(storeLayer(loaded)))))
).pipe(
  Command.withDescription("remove the checkpoints (.mm/checkpoints) that no session of this project uses any more")
)

const checkpoints = Command.make("checkpoints").pipe(
  Command.withDescription("the file contents kept for /undo"),
  Command.withSubcommands([checkpointsGcCommand])
)

const list = Command.make(
  "list",
  { config: configOption, json: jsonOption },
  ({ config, json }) => exitWith(listSessions(Option.getOrUndefined(config), json))
).pipe(Command.withDescription("list this project's saved conversations (the default)"))

const show = Command.make(
  "show",
  { config: configOption, id: Args.text({ name: "ID" }) },
  ({ config, id }) => exitWith(showSession(Option.getOrUndefined(config), id))
).pipe(
  Command.withDescription(
    "print a conversation as Markdown: questions, answers, tool calls with input and output, errors"
  )
)

const rm = Command.make(
  "rm",
  {
    config: configOption,
    yes: Options.boolean("yes").pipe(Options.withAlias("y"), Options.withDescription("do not ask for confirmation")),
    ids: Args.text({ name: "ID" }).pipe(Args.atLeast(1))
  },
  ({ config, yes, ids }) => exitWith(removeSessions(Option.getOrUndefined(config), ids, yes))
).pipe(Command.withDescription("delete the named conversations (asks first on a terminal; --yes for scripts)"))

const search = Command.make(
  "search",
  {
    config: configOption,
    json: jsonOption,
    regex: Options.boolean("regex").pipe(Options.withDescription("PATTERN is a JavaScript regular expression")),
    ignoreCase: Options.boolean("ignore-case").pipe(
      Options.withAlias("i"),
      Options.withDescription("any case (slower: every file is decoded)")
    ),
    pattern: Args.text({ name: "PATTERN" })
  },
  ({ config, ignoreCase, json, pattern, regex }) =>
    exitWith(searchSessions(Option.getOrUndefined(config), { pattern, regex, ignoreCase }, json))
).pipe(
  Command.withDescription(
    "find the conversations (and compaction archives) whose questions, answers or tool outputs hold PATTERN, newest first"
  )
)

const sessions = Command.make(
  "sessions",
  { config: configOption, json: jsonOption },
  ({ config, json }) => exitWith(listSessions(Option.getOrUndefined(config), json))
).pipe(
  Command.withDescription(
    "this project's saved conversations: list (the default), show ID, search PATTERN, rm ID…; an id may be a unique prefix"
  ),
  Command.withSubcommands([list, show, search, rm])
)

const init = Command.make(
  "init",
  {
    url: Options.text("url").pipe(
      Options.withPseudoName("URL"),
      Options.withDescription("the model server's base URL (otherwise the usual local ports are tried)"),
      Options.optional
    ),
    model: Options.text("model").pipe(
      Options.withPseudoName("NAME"),
      Options.withDescription("the model's name (otherwise picked from what the server lists)"),
      Options.optional
    ),
    force: Options.boolean("force").pipe(Options.withDescription("replace an existing agent.yaml"))
  },
  ({ url, model, force }) =>
    exitWith(
      // `mm init` alone needs the configuration's defaults and the model picker: loaded here, not at every start
      Effect.flatMap(
        Effect.promise(() => import("./Init")),
        ({ initProject }) =>
          initProject({ url: Option.getOrUndefined(url), model: Option.getOrUndefined(model), force })
      )
    )
).pipe(
  Command.withDescription("write a commented agent.yaml for this project, with the model server found on this machine")
)

const parse = Command.run(mm.pipe(Command.withSubcommands([acp, sessions, checkpoints, init])), {
  name: "mm",
  version: VERSION
})

const cliLayer = Layer.mergeAll(NodeContext.layer, CliConfig.layer({ showBuiltIns: false, showTypes: false }))

/** The whole command line, parsed by @effect/cli: subcommands and --completions (--help is src/cli/Help.ts). */
export const cli = (argv: ReadonlyArray<string>) =>
  parse(argv).pipe(
    Effect.provide(cliLayer),
    Effect.as(0),
    Effect.catchTag("ExitWith", (exit) => Effect.succeed(exit.code))
  )

/** What @effect/cli makes of a top-level command line (tests compare it with src/cli/Args.ts). */
export const libraryRunArgs = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    let seen: RunArgs | undefined
    const root = rootCommand((parsed) => Effect.sync(() => void (seen = parsed)))
    yield* Command.run(root, { name: "mm", version: VERSION })(["node", "mm", ...args]).pipe(Effect.provide(cliLayer))
    return seen
  })
