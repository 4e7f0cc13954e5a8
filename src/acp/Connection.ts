import * as acp from "@agentclientprotocol/sdk"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as SynchronizedRef from "effect/SynchronizedRef"

import type { Agent } from "../agent/Agent"
import type { Jobs } from "../agent/Jobs"
import type { RememberedApprovals } from "../approvals/RememberedApprovals"
import type { Changes } from "../changes/Changes"
import type { Checkpoints } from "../changes/Checkpoints"
import type { AppConfig } from "../config/Config"
import type { Secrets } from "../lib/Secrets"
import type { McpServers } from "../mcp/McpServers"
import type { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import type { Keeper } from "../sessions/Keeper"
import type { FileAccess } from "../tools/FileAccess"
import type { ToolRegistry } from "../tools/Registry"
import type { Sandbox } from "../tools/Sandbox"
import type { ClientDisplay } from "./TurnUpdates"

/** The core's services the ACP agent runs on (the layer of AcpMain.ts provides them). */
export type AcpServices =
  | Agent
  | Jobs
  | Keeper
  | AppConfig
  | ModelClient
  | Changes
  | Checkpoints
  | FileAccess
  | McpServers
  | Secrets
  | RememberedApprovals
  | Sandbox
  | ToolRegistry

/** The prompt running in a thread: it answers the `session/prompt` request. */
export type PromptFiber = Fiber.RuntimeFiber<acp.PromptResponse, acp.RequestError>

/** One editor thread: its conversation, and the prompt running in it, if any. */
export interface AcpSession {
  readonly id: string
  readonly conversation: Conversation
  readonly running: SynchronizedRef.SynchronizedRef<PromptFiber | undefined>
}

/** What the agent holds and learns over one editor connection. */
export interface ConnectionShape {
  /** The threads this process holds, by session id. */
  readonly sessions: Ref.Ref<HashMap.HashMap<string, AcpSession>>
  /** What the editor said it offers, at `initialize`. */
  readonly capabilities: Ref.Ref<acp.ClientCapabilities | undefined>
  /** What the server's `/models` listed, once asked (it is asked once). */
  readonly listed: SynchronizedRef.SynchronizedRef<Option.Option<ReadonlyArray<string>>>
  readonly version: string
  /** mm's own lines: on stderr, never on stdout. */
  readonly log: (line: string) => void
}

export class AcpConnection extends Context.Tag("mm/AcpConnection")<AcpConnection, ConnectionShape>() {}

export const makeConnection = (options: { readonly version: string; readonly log: (line: string) => void }) =>
  Effect.gen(function*() {
    const connection: ConnectionShape = {
      sessions: yield* Ref.make(HashMap.empty<string, AcpSession>()),
      capabilities: yield* Ref.make<acp.ClientCapabilities | undefined>(undefined),
      listed: yield* SynchronizedRef.make(Option.none<ReadonlyArray<string>>()),
      version: options.version,
      log: options.log
    }
    return connection
  })

/** What the editor can show beside the answer's text, as it said at `initialize`. */
export const clientDisplay = Effect.gen(function*() {
  const capabilities = yield* Ref.get((yield* AcpConnection).capabilities)
  const display: ClientDisplay = {
    notices: capabilities?.session?.notices !== undefined && capabilities?.session?.notices !== null,
    compaction: capabilities?.session?.compaction !== undefined && capabilities?.session?.compaction !== null
  }
  return display
})

/**
 * Sends updates in order and waits until the SDK has written every one of them. The SDK
 * queues each message as `notify` is called, so they leave in this order, before anything
 * sent afterwards (the response of the request being handled). A closed connection is not
 * an error here.
 */
export const send = (client: acp.AgentContext, sessionId: string, updates: ReadonlyArray<acp.SessionUpdate>) =>
  updates.length === 0
    ? Effect.void
    : Effect.promise(async () => {
      try {
        await Promise.all(
          updates.map((update) => client.notify(acp.methods.client.session.update, { sessionId, update }))
        )
      } catch {
        // the editor went away; there is nobody left to tell
      }
    })
