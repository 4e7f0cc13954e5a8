import * as Command from "@effect/cli/Command"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { FileSessionStoreLive } from "./FileSessionStore"
import * as Option from "effect/Option"
import { Keeper } from "./Keeper"
import { sessionsListing } from "./Terminal/Render"
import { VERSION } from "./Version"
import { ExitCode, storeLayers, terminal, withConfig } from "./Wiring"

const configOption = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withDescription("path of the agent.yaml to use (default: $AGENT_CONFIG, then ./agent.yaml)"),
  Options.optional
)

const mm = Command.make("mm", { config: configOption }, ({ config }) => terminal(Option.getOrUndefined(config))).pipe(
  Command.withDescription("a small coding agent with persistent sessions; without a subcommand, the terminal REPL")
)

const acp = Command.make("acp", { config: configOption }, ({ config }) =>
  withConfig(Option.getOrUndefined(config), (loaded) =>
    Effect.flatMap(
      Effect.promise(() => import("./Acp/AcpMain")),
      (module) => module.runAcp(loaded)
    )
  )
).pipe(Command.withDescription("run as an Agent Client Protocol agent on stdio (for Zed and other ACP editors)"))

const sessions = Command.make(
  "sessions",
  { config: configOption, json: Options.boolean("json").pipe(Options.withDescription("print the listing as JSON")) },
  ({ config, json }) =>
    withConfig(Option.getOrUndefined(config), (loaded) =>
      Effect.gen(function* () {
        const keeper = yield* Keeper
        const listing = yield* keeper.list(process.cwd())
        if (!json) return yield* Console.log(sessionsListing(listing, ""))
        const out =
          listing._tag === "Listed"
            ? {
                dir: listing.dir,
                sessions: listing.entries.map((e) =>
                  e._tag === "Readable" ? { ...e.summary, readable: true } : { id: e.id, readable: false, reason: e.reason }
                )
              }
            : listing._tag === "Off"
              ? { enabled: false, sessions: [] }
              : { dir: listing.dir, error: listing.reason, sessions: [] }
        if (listing._tag === "Failed") ExitCode.code = 1
        return yield* Console.log(JSON.stringify(out, null, 2))
      }).pipe(Effect.provide(storeLayers(loaded)))
    )
).pipe(Command.withDescription("list this project's saved sessions (the same listing as /sessions)"))

const checkpointsGcCommand = Command.make("gc", { config: configOption }, ({ config }) =>
  withConfig(Option.getOrUndefined(config), (loaded) =>
    Effect.gen(function* () {
      const { checkpointsGc, gcLine } = yield* Effect.promise(() => import("./CheckpointsGc"))
      const done = yield* Effect.either(checkpointsGc(process.cwd()))
      if (done._tag === "Left") {
        ExitCode.code = 1
        return yield* Console.error(`mm: ${done.left.message}`)
      }
      return yield* Console.log(gcLine(done.right))
    }).pipe(Effect.provide(Layer.merge(storeLayers(loaded), FileSessionStoreLive)))
  )
).pipe(Command.withDescription("remove the checkpoints (.mm/checkpoints) that no session of this project uses any more"))

const checkpoints = Command.make("checkpoints").pipe(
  Command.withDescription("the file contents kept for /undo"),
  Command.withSubcommands([checkpointsGcCommand])
)

const parse = Command.run(mm.pipe(Command.withSubcommands([acp, sessions, checkpoints])), {
  name: "mm",
  version: VERSION
})

/** The whole command line, parsed by @effect/cli: subcommands, options, --help. */
export const cli = (argv: ReadonlyArray<string>) => parse(argv).pipe(Effect.provide(NodeContext.layer))
