import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { Agent } from "../../src/agent/Agent"
import type { TurnEvent } from "../../src/agent/TurnEvent"
import { agentLayer, servicesLayer, storeLayer } from "../../src/app/Layers"
import { built, inSequence, made } from "../../src/app/Sequence"
import { Approval, type ApprovalRequest, Approver } from "../../src/approvals/Approver"
import { Changes, makeChanges } from "../../src/changes/Changes"
import { type AgentConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { SecretRegistry, Secrets } from "../../src/lib/Secrets"
import { noServerCache, ServerCache, type ServerCacheShape, type ServerMemo } from "../../src/model/chat/ServerCache"
import { makeModelClient } from "../../src/model/ModelApis"
import { ModelClient } from "../../src/model/ModelClient"
import { RetryTiming } from "../../src/model/Retry"
import type { Conversation } from "../../src/sessions/Conversation"
import * as MemorySessionStore from "../../src/sessions/MemorySessionStore"
import type { SessionStore } from "../../src/sessions/SessionStore"
import { FileAccessDisk } from "../../src/tools/FileAccess"
import type { ToolRegistryShape } from "../../src/tools/Registry"

export interface ConfigOverrides {
  readonly model?: Partial<AgentConfig["model"]>
  readonly compaction?: Partial<AgentConfig["compaction"]>
  readonly sessions?: Partial<AgentConfig["sessions"]>
  readonly skills?: Partial<AgentConfig["skills"]>
  readonly system?: string
  readonly instructions?: AgentConfig["instructions"]
  readonly watchdogTimeout?: number
  readonly maxOutput?: number
  readonly maxSteps?: number
  readonly permissions?: "ask" | "allow"
  readonly secrets?: AgentConfig["secrets"]
}

export const testConfig = (url: string, overrides: ConfigOverrides = {}): AgentConfig => ({
  ...defaultConfig(),
  ...overrides,
  model: { ...defaultConfig().model, name: "fake-model", url, ...overrides.model },
  compaction: { ...defaultConfig().compaction, ...overrides.compaction },
  sessions: { ...defaultConfig().sessions, ...overrides.sessions },
  skills: { dirs: [], ...overrides.skills },
  watchdogTimeout: overrides.watchdogTimeout ?? 5,
  permissions: overrides.permissions ?? "allow"
})

/**
 * A scripted answer: "always" takes the request's first scope remembered for the project,
 * "session" its session-only one, "project" its project scope.
 */
export type ScriptedAnswer = "once" | "always" | "session" | "project" | "deny" | Approval

const answerTo = (answer: ScriptedAnswer, request: ApprovalRequest): Approval => {
  if (typeof answer !== "string") return answer
  if (answer === "once") return Approval.once
  if (answer === "deny") return Approval.deny
  const choice = request.always.find((c) =>
    answer === "project"
      ? c.scope._tag === "Project"
      : c.scope._tag !== "Project" && c.keep === (answer === "session" ? "session" : "project")
  )
  if (choice === undefined) throw new Error(`the request for ${request.tool} offers no ${answer} scope`)
  return Approval.chose(choice)
}

/** An approver that answers from a script and remembers what it was asked. */
export const scriptedApprover = (answers: Array<ScriptedAnswer>, asked: Array<ApprovalRequest> = []) =>
  Layer.succeed(Approver, {
    ask: (request) =>
      Effect.sync(() => {
        asked.push(request)
        return answerTo(answers.shift() ?? "deny", request)
      })
  })

/** The whole core over the real HTTP model client, with the given store and approver, composed as mm composes it. */
export const coreLayer = (
  config: AgentConfig,
  store: Layer.Layer<SessionStore>,
  approver: Layer.Layer<Approver> = scriptedApprover([]),
  options: { readonly projectDir?: string; readonly tools?: ToolRegistryShape } = {}
) =>
  agentLayer(approver).pipe(
    Layer.provideMerge(
      Layer.mergeAll(
        servicesLayer({ config, file: undefined }, { store, projectDir: options.projectDir, tools: options.tools }),
        FileAccessDisk
      )
    ),
    Layer.provide(secretsLayer())
  )

/** A registry of secrets of the test's own, as Main makes one for the program. */
export const secretsLayer = () => Layer.sync(Secrets, () => new SecretRegistry())

/** What the tools need: the disk's file access and a registry of secrets. */
export const toolServices = () => Layer.mergeAll(FileAccessDisk, secretsLayer())

export const runTurn = (conversation: Conversation, question: string) =>
  Effect.flatMap(
    Agent,
    (agent) =>
      Stream.runCollect(agent.turn(conversation, question)).pipe(Effect.map((chunk): Array<TurnEvent> => [...chunk]))
  )

export const textOf = (events: ReadonlyArray<TurnEvent>): string =>
  events.flatMap((e) => (e._tag === "TextDelta" ? [e.text] : [])).join("")

/** Retries that wait milliseconds, not seconds: what a test of retrying needs. */
export const quickRetries = Layer.succeed(RetryTiming, { baseMs: 5, maxRetries: 3, capMs: 60_000 })

/** No server cache: nothing kept, nothing read (what a test of the client alone wants). */
export const serverCacheOff = Layer.succeed(ServerCache, noServerCache)

/** A server cache in memory that records its writes, starting from `start`. */
export const memoryServerCache = (start?: ServerMemo) => {
  let memo = start
  const writes: Array<ServerMemo> = []
  const shape: ServerCacheShape = {
    read: () => Effect.sync(() => memo),
    write: (_url, _model, written) =>
      Effect.sync(() => {
        memo = written
        writes.push(written)
      })
  }
  return { shape, writes }
}

/**
 * The model client alone, on Node's HTTP client, made as app/Layers.ts makes it; it needs the
 * configuration, the secrets and a server cache.
 */
export const modelClientLayer = inSequence(
  [
    made(NodeHttpClient.HttpAgent, NodeHttpClient.makeAgent()),
    made(HttpClient.HttpClient, NodeHttpClient.make),
    made(ModelClient, makeModelClient)
  ] as const
)

/** The keeper and the change log over an in-memory store and the disk (the changes tests and bench). */
export const keeperAndChanges = (config: AgentConfig) =>
  inSequence(
    [
      built(storeLayer({ config, file: undefined }, MemorySessionStore.layer())),
      built(FileAccessDisk),
      made(Changes, makeChanges)
    ] as const
  ).pipe(Layer.provide(secretsLayer()))
