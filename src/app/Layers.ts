/**
 * The one place where the application's layers meet. Each façade takes its services from
 * here and chooses only what is its own: who answers approvals (`Approver`) and who reads and
 * writes the project's files (`FileAccess`). The tests build the same graph through
 * `servicesLayer` and `agentLayer`, with a store of their choosing.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AgentLive } from "../agent/Agent"
import { CompactorLive } from "../agent/Compactor"
import type { Approver } from "../approvals/Approver"
import { RememberedApprovalsLive } from "../approvals/RememberedApprovals"
import { ChangesLive } from "../changes/Changes"
import { AppConfig, type LoadedConfig } from "../config/Config"
import { Secrets } from "../lib/Secrets"
import { McpServersLive } from "../mcp/McpServers"
import { OpenAiClientLive } from "../model/OpenAiClient"
import { ServerCacheLive } from "../model/ServerCache"
import { ErrorLogLive } from "../sessions/ErrorLog"
import { FileSessionStoreLive } from "../sessions/FileSessionStore"
import { KeeperLive } from "../sessions/Keeper"
import type { SessionStore } from "../sessions/SessionStore"
import { type FileAccess, FileAccessDisk } from "../tools/FileAccess"
import { builtinRegistry, ToolRegistry, type ToolRegistryShape } from "../tools/Registry"
import { SandboxLive } from "../tools/Sandbox"

interface ServiceOptions {
  /** Where sessions are kept: the project's `.mm/sessions` unless a test says otherwise. */
  readonly store?: Layer.Layer<SessionStore, never, Secrets>
  /** The project the MCP servers are started for (the current directory unless said). */
  readonly projectDir?: string
  /** Told each MCP server's failure as it happens (ACP logs it on stderr). */
  readonly onMcpProblem?: (line: string) => void
  /** The tools the model is given: the built-in ones unless a test adds its own. */
  readonly tools?: ToolRegistryShape
}

/** The configuration, the session store, the error log and the keeper: all `mm sessions` needs. */
export const storeLayer = (
  loaded: LoadedConfig,
  store: Layer.Layer<SessionStore, never, Secrets> = FileSessionStoreLive
) =>
  KeeperLive.pipe(
    Layer.provideMerge(Layer.mergeAll(store, ErrorLogLive)),
    Layer.provideMerge(Layer.succeed(AppConfig, loaded))
  )

/**
 * Everything below the agent: the store and keeper, the model client (on Node's own HTTP
 * client), the MCP servers, the remembered approvals, the sandbox and the tools; the program's
 * secrets (Main provides them) among them, for a runtime built from these.
 */
export const servicesLayer = (loaded: LoadedConfig, options: ServiceOptions = {}) =>
  Layer.mergeAll(
    // what the server said of itself is kept a few minutes under the user's cache directory
    OpenAiClientLive.pipe(Layer.provide(Layer.merge(NodeHttpClient.layer, ServerCacheLive))),
    McpServersLive({ projectDir: options.projectDir ?? process.cwd(), onProblem: options.onMcpProblem }),
    RememberedApprovalsLive,
    // bubblewrap is tried when the sandbox's state is first asked for, after the banner
    SandboxLive,
    Layer.succeed(ToolRegistry, options.tools ?? builtinRegistry),
    Layer.effect(Secrets, Secrets)
  ).pipe(Layer.provideMerge(storeLayer(loaded, options.store)))

/** The agent, its compactor and its change log, over the services and file access, asking `approver` before a tool acts. */
export const agentLayer = <E, R>(approver: Layer.Layer<Approver, E, R>) =>
  AgentLive.pipe(Layer.provideMerge(Layer.mergeAll(ChangesLive, CompactorLive, approver)))

// Each façade's own modules are initialised only on its path (`import()` keeps them out of the
// bundle's eager graph): `mm -p` never evaluates the terminal's, the terminal never print mode's.
const terminalIO = () => import("../terminal/TerminalIO")

/** What the terminal needs for its banner: the services and the keyboard and screen. */
export const terminalLayer = (loaded: LoadedConfig) =>
  Layer.unwrapEffect(
    Effect.map(
      Effect.promise(terminalIO),
      (terminal) =>
        Layer.mergeAll(terminal.TerminalIOLive, FileAccessDisk).pipe(Layer.provideMerge(servicesLayer(loaded)))
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
        agentLayer(printApprover(printIO(redact).err)).pipe(
          Layer.provideMerge(Layer.merge(servicesLayer(loaded), FileAccessDisk))
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
    readonly files: Layer.Layer<FileAccess>
    readonly extra: Layer.Layer<never>
    readonly log: (line: string) => void
  }
) =>
  agentLayer(choice.approver).pipe(
    Layer.provideMerge(Layer.merge(servicesLayer(loaded, { onMcpProblem: choice.log }), choice.files)),
    Layer.provideMerge(choice.extra)
  )
