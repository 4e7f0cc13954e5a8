import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Console from "effect/Console"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { AgentLive } from "./Agent"
import { CompactorLive } from "./Compactor"
import { AppConfig, type LoadedConfig, loadConfig } from "./Config"
import { ErrorLogLive } from "./ErrorLog"
import { FileSessionStoreLive } from "./FileSessionStore"
import { Keeper, KeeperLive } from "./Keeper"
import { OpenAiClientNode } from "./OpenAiClient"
import { sessionsListing } from "./Terminal/Render"
import { runTerminal } from "./Terminal/Repl"
import { VERSION } from "./Version"
import { TerminalApprover, TerminalIOLive } from "./Terminal/TerminalIO"

/** Set by the program when it must end with a particular exit code. */
export class ExitCode {
  static code = 0
}

const configOption = Options.text("config").pipe(
  Options.withAlias("c"),
  Options.withDescription("path of the agent.yaml to use (default: $AGENT_CONFIG, then ./agent.yaml)"),
  Options.optional
)

/** Loads the configuration; a bad file is one line on stderr and exit code 2. */
const withConfig = <A, E, R>(flag: Option.Option<string>, use: (loaded: LoadedConfig) => Effect.Effect<A, E, R>) =>
  loadConfig({ flag: Option.getOrUndefined(flag), env: process.env.AGENT_CONFIG, cwd: process.cwd() }).pipe(
    Effect.matchEffect({
      onFailure: (error) =>
        Effect.sync(() => {
          process.stderr.write(`mm: ${error.message}\n`)
          ExitCode.code = 2
        }),
      onSuccess: (loaded) => Effect.asVoid(use(loaded))
    })
  )

export const storeLayers = (loaded: LoadedConfig) =>
  KeeperLive.pipe(
    Layer.provide(Layer.mergeAll(FileSessionStoreLive, ErrorLogLive)),
    Layer.provideMerge(Layer.succeed(AppConfig, loaded))
  )

const terminalLayer = (loaded: LoadedConfig) => {
  const base = storeLayers(loaded)
  const model = OpenAiClientNode.pipe(Layer.provide(base))
  const io = TerminalIOLive
  const agent = AgentLive.pipe(
    Layer.provide(Layer.mergeAll(CompactorLive.pipe(Layer.provide(model)), TerminalApprover.pipe(Layer.provide(io)))),
    Layer.provideMerge(Layer.mergeAll(base, model, io))
  )
  return agent
}

const mm = Command.make("mm", { config: configOption }, ({ config }) =>
  withConfig(config, (loaded) => runTerminal(process.cwd()).pipe(Effect.provide(terminalLayer(loaded))))
).pipe(Command.withDescription("a small coding agent with persistent sessions; without a subcommand, the terminal REPL"))

const acp = Command.make("acp", { config: configOption }, ({ config }) =>
  withConfig(config, (loaded) =>
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
    withConfig(config, (loaded) =>
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

export const cli = Command.run(mm.pipe(Command.withSubcommands([acp, sessions])), {
  name: "mm",
  version: VERSION
})
