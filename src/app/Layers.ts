/**
 * The one place where the application's layers meet. Each façade takes its services from
 * here and chooses only what is its own: who answers approvals (`Approver`) and who reads and
 * writes the project's files (`FileAccess`). The tests build the same graph through
 * `servicesLayer` and `agentLayer`, with a store of their choosing.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { Agent, makeAgent } from "../agent/Agent"
import { Compactor, makeCompactor } from "../agent/Compactor"
import { Jobs, makeJobs } from "../agent/Jobs"
import { agentOffers } from "../agent/SubAgents"
import type { Approver } from "../approvals/Approver"
import { makeRememberedApprovals, RememberedApprovals } from "../approvals/RememberedApprovals"
import { Changes, makeChanges } from "../changes/Changes"
import { Checkpoints, makeCheckpoints } from "../changes/Checkpoints"
import { AppConfig, type LoadedConfig } from "../config/Config"
import { Hooks, makeHooks } from "../hooks/Hooks"
import { Secrets } from "../lib/Secrets"
import { makeMcpServers, McpServers } from "../mcp/McpServers"
import { makeServerCache, ServerCache } from "../model/chat/ServerCache"
import { makeModelClient } from "../model/ModelApis"
import { ModelClient } from "../model/ModelClient"
import { ErrorLog, errorLog } from "../sessions/ErrorLog"
import { fileSessionStore } from "../sessions/FileSessionStore"
import { Keeper, makeKeeper } from "../sessions/Keeper"
import { SessionStore } from "../sessions/SessionStore"
import { diskFileAccess, FileAccess } from "../tools/FileAccess"
import { registryFor, ToolRegistry, type ToolRegistryShape } from "../tools/Registry"
import { configuredSandbox, Sandbox } from "../tools/Sandbox"
import { built, inSequence, made } from "./Sequence"

export interface ServiceOptions {
  /** Where sessions are kept: the project's `.mm/sessions` unless a test says otherwise. */
  readonly store?: Layer.Layer<SessionStore, never, Secrets>
  /** The project the MCP servers are started for (the current directory unless said). */
  readonly projectDir?: string
  /** Told each MCP server's failure as it happens (ACP logs it on stderr). */
  readonly onMcpProblem?: (line: string) => void
  /** The tools the model is given: the built-in ones unless a test adds its own. */
  readonly tools?: ToolRegistryShape
}

/** What `mm sessions` needs: the configuration, the session store, the error log, the keeper and the checkpoints. */
export type StoreServices = AppConfig | SessionStore | ErrorLog | Keeper | Checkpoints

/** Everything below the agent. */
export type Services =
  | StoreServices
  | ModelClient
  | McpServers
  | RememberedApprovals
  | Sandbox
  | Secrets
  | ToolRegistry

/** The agent and what it keeps of the project's files. */
export type AgentServices = Agent | Changes | Hooks | Jobs

const storeSteps = (loaded: LoadedConfig, store?: Layer.Layer<SessionStore, never, Secrets>) =>
  [
    made(AppConfig, Effect.succeed(loaded)),
    store === undefined ? made(SessionStore, fileSessionStore) : built(store),
    made(ErrorLog, Effect.succeed(errorLog)),
    made(Keeper, makeKeeper),
    // the file contents kept for /undo (and shown by `mm sessions show`)
    made(Checkpoints, Effect.sync(makeCheckpoints))
  ] as const

const serviceSteps = (loaded: LoadedConfig, options: ServiceOptions = {}) =>
  [
    ...storeSteps(loaded, options.store),
    // what the server said of itself is kept a few minutes under the user's cache directory
    made(ServerCache, makeServerCache),
    // NodeHttpClient.layer's two services, made as its layers make them
    made(NodeHttpClient.HttpAgent, NodeHttpClient.makeAgent()),
    made(HttpClient.HttpClient, NodeHttpClient.make),
    made(ModelClient, makeModelClient),
    made(
      McpServers,
      makeMcpServers({ projectDir: options.projectDir ?? process.cwd(), onProblem: options.onMcpProblem })
    ),
    made(RememberedApprovals, makeRememberedApprovals),
    // the tools the model is given: the built-in ones unless a test says otherwise
    made(ToolRegistry, Effect.succeed(options.tools ?? registryFor(loaded.config, agentOffers(loaded.config)))),
    // bubblewrap is tried when the sandbox's state is first asked for, after the banner
    made(Sandbox, configuredSandbox),
    // the program's secrets (Main provides them) are among the services, for a runtime built from these
    made(Secrets, Secrets)
  ] as const

/** The agent over the services, asking `approver` before a tool acts, and its change log. */
const agentSteps = <E, R>(approver: Layer.Layer<Approver, E, R>) =>
  [
    made(Changes, makeChanges),
    made(Compactor, makeCompactor),
    // the user's hooks: nothing is loaded or run for an event without one
    made(Hooks, makeHooks),
    built(approver),
    // the conversations' background jobs, ended when the layer closes (mm exits)
    made(Jobs, makeJobs),
    made(Agent, makeAgent)
  ] as const

const diskFiles = made(FileAccess, Effect.succeed(diskFileAccess))

/** The configuration, the session store, the error log, the keeper and the checkpoints: all `mm sessions` needs. */
export const storeLayer = (loaded: LoadedConfig, store?: Layer.Layer<SessionStore, never, Secrets>) =>
  inSequence(storeSteps(loaded, store))

/** Everything below the agent: the store and keeper, the model client, the MCP servers. */
export const servicesLayer = (loaded: LoadedConfig, options: ServiceOptions = {}) =>
  inSequence(serviceSteps(loaded, options))

/** The agent, its compactor and its change log, over the services and file access, asking `approver` before a tool acts. */
export const agentLayer = <E, R>(approver: Layer.Layer<Approver, E, R>) => inSequence(agentSteps(approver))

// Each façade's own modules are initialised only on its path (`import()` keeps them out of the
// bundle's eager graph): `mm -p` never evaluates the terminal's, the terminal never print mode's.
const terminalIO = () => import("../terminal/TerminalIO")

/** What the terminal needs for its banner: the services and the keyboard and screen. */
export const terminalLayer = (loaded: LoadedConfig) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.promise(terminalIO),
      (terminal) =>
        inSequence(
          [
            ...serviceSteps(loaded),
            made(terminal.TerminalIO, terminal.makeTerminalIO),
            diskFiles
          ] as const
        )
    )
  )

/** The terminal's agent, asking approvals on the terminal; built once the banner is out. */
export const terminalAgentLayer = Layer.unwrapEffect(
  Effect.map(Effect.promise(terminalIO), ({ TerminalApprover }) => agentLayer(TerminalApprover))
)

/** `mm -p`: the services and the agent, with nobody to ask (a call that needs approval is refused). */
export const printLayer = (loaded: LoadedConfig) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.zip(Secrets, Effect.promise(() => import("../print/Print"))),
      ([{ redact }, { printApprover, printIO }]) =>
        inSequence(
          [
            ...serviceSteps(loaded),
            diskFiles,
            ...agentSteps(printApprover(printIO(redact).err))
          ] as const
        )
    )
  )

/**
 * `mm acp`: the services and the agent, with the approver and file access the ACP façade
 * passes in (the editor's), and whatever else it adds (its logger). Taking them as arguments
 * keeps the ACP SDK off every other path.
 */
export const acpLayer = <RA>(
  loaded: LoadedConfig,
  choice: {
    readonly approver: Layer.Layer<Approver, never, RA>
    readonly files: Layer.Layer<FileAccess, never, AppConfig>
    readonly extra: Layer.Layer<never>
    readonly log: (line: string) => void
  }
) =>
  inSequence(
    [
      ...serviceSteps(loaded, { onMcpProblem: choice.log }),
      built(choice.files),
      ...agentSteps(choice.approver)
    ] as const
  ).pipe(Layer.provideMerge(choice.extra))
