import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AgentLive } from "../agent/Agent"
import { CompactorLive } from "../agent/Compactor"
import { ChangesLive } from "../changes/Changes"
import { AppConfig, loadConfig, type LoadedConfig } from "../config/Config"
import { McpServersLive } from "../mcp/McpServers"
import { OpenAiClientNode } from "../model/OpenAiClient"
import { runPrint } from "../print/Print"
import { ErrorLogLive } from "../sessions/ErrorLog"
import { FileSessionStoreLive } from "../sessions/FileSessionStore"
import { KeeperLive } from "../sessions/Keeper"
import { pickStart } from "../sessions/StartOn"
import { runTerminal } from "../terminal/Repl"
import { TerminalApprover, TerminalIOLive } from "../terminal/TerminalIO"
import { DEFAULT_RUN, type RunArgs } from "./Args"

/** Set by the program when it must end with a particular exit code. */
export class ExitCode {
  static code = 0
}

/** Loads the configuration; a bad file is one line on stderr and exit code 2. */
export const withConfig = <A, E, R>(flag: string | undefined, use: (loaded: LoadedConfig) => Effect.Effect<A, E, R>) =>
  loadConfig({ flag, env: process.env.AGENT_CONFIG, cwd: process.cwd() }).pipe(
    Effect.matchEffect({
      onFailure: (error) =>
        Effect.sync(() => {
          process.stderr.write(`mm: ${error.message}\n`)
          ExitCode.code = 2
        }),
      onSuccess: (loaded) => Effect.asVoid(use(loaded))
    })
  )

/** The configuration, the session store, the error log and the keeper. */
export const storeLayers = (loaded: LoadedConfig) =>
  KeeperLive.pipe(
    Layer.provide(Layer.mergeAll(FileSessionStoreLive, ErrorLogLive)),
    Layer.provideMerge(Layer.succeed(AppConfig, loaded))
  )

/** What the terminal needs for its banner: configuration, sessions, the model client, the keyboard. */
export const terminalLayer = (loaded: LoadedConfig) => {
  const base = storeLayers(loaded)
  const mcp = McpServersLive({ projectDir: process.cwd() }).pipe(Layer.provide(base))
  return Layer.mergeAll(base, OpenAiClientNode.pipe(Layer.provide(base)), TerminalIOLive, mcp)
}

/** The agent, over the terminal's services, asking approvals on the terminal. */
export const terminalAgentLayer = AgentLive.pipe(
  Layer.provide(Layer.mergeAll(CompactorLive, TerminalApprover)),
  Layer.provideMerge(ChangesLive)
)

/** `mm`: the terminal façade in the current directory. */
export const terminal = (configFlag: string | undefined) => run({ ...DEFAULT_RUN, config: configFlag })

/** `--yes`: every tool allowed for this run, whatever `permissions` says. */
const allowAllWhen = (yes: boolean, loaded: LoadedConfig): LoadedConfig =>
  yes ? { ...loaded, config: { ...loaded.config, permissions: "allow" } } : loaded

/** `mm [options] [QUESTION]`: the REPL, or with `-p` one answer; sets the exit code. */
export const run = (args: RunArgs) =>
  withConfig(args.config, (original) => {
    const loaded = allowAllWhen(args.yes, original)
    const program = args.print
      ? runPrint(args, process.cwd()).pipe(Effect.provide(printLayer(loaded)))
      : Effect.flatMap(
        args.start._tag === "Pick"
          ? pickStart(process.cwd()).pipe(Effect.provide(storeLayers(loaded)))
          : Effect.succeed(undefined),
        (picked) => {
          if (picked?._tag === "Failed") {
            return Effect.sync(() => {
              if (picked.line !== "") process.stderr.write(`mm: ${picked.line}\n`)
              return picked.code
            })
          }
          for (const line of picked?.lines ?? []) process.stdout.write(`${line}\n`)
          return runTerminal(process.cwd(), terminalAgentLayer, {
            start: picked?.start ?? args.start,
            question: args.question
          }).pipe(
            Effect.provide(terminalLayer(loaded))
          )
        }
      )
    return Effect.map(program, (code) => {
      if (code !== 0) ExitCode.code = code
    })
  })

/** What `-p` needs: configuration, sessions, the model client and the MCP servers; no keyboard. */
export const printLayer = (loaded: LoadedConfig) => {
  const base = storeLayers(loaded)
  const mcp = McpServersLive({ projectDir: process.cwd() }).pipe(Layer.provide(base))
  return Layer.mergeAll(base, OpenAiClientNode.pipe(Layer.provide(base)), mcp)
}
