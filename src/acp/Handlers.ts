import * as os from "node:os"

import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as SynchronizedRef from "effect/SynchronizedRef"

import { findInstructionFiles, instructionLabel } from "../agent/Instructions"
import { Jobs } from "../agent/Jobs"
import { AppConfig } from "../config/Config"
import { newSessionId } from "../domain/SessionId"
import { forkOf, lastTurn } from "../domain/Turns"
import { ModelClient } from "../model/ModelClient"
import { interruptedLine } from "../sessions/Interrupted"
import { Keeper } from "../sessions/Keeper"
import type { SessionSummary } from "../sessions/SessionStore"
import { instructionsLine } from "../text/Lines"
import { AcpConnection, send } from "./Connection"
import { startSessionServers, stopSessionServers } from "./McpSessions"
import { commandsUpdateOf } from "./OwnCommands"
import { cancelApplies } from "./PromptOrder"
import { replayOf, standingUpdates } from "./ReplayData"
import { decodeCursor, listPage } from "./SessionList"
import { attach, checkedCwd, forgetSession, holdSession, sessionNotFound } from "./Sessions"
import { restoreSettings, setup } from "./Settings"
import { agentText } from "./ToolUpdates"

/** The requests that open, load, list and close editor threads (prompts are in PromptTurn.ts). */

/** `initialize`: what mm offers; what the editor offers is kept for the connection. */
export const initialize = Effect.fn("Acp.initialize")(function*(params: acp.InitializeRequest) {
  if (params.protocolVersion < 1) {
    return yield* Effect.fail(
      acp.RequestError.invalidParams(
        { protocolVersion: params.protocolVersion },
        `protocol version ${params.protocolVersion} is not supported; mm speaks ACP version ${acp.PROTOCOL_VERSION}`
      )
    )
  }
  const { capabilities, version } = yield* AcpConnection
  yield* Ref.set(capabilities, params.clientCapabilities)
  const { config } = yield* AppConfig
  const sessionsOn = config.sessions.enabled
  // images are offered when the model can see them: model.vision, else what the server has
  // said by now (initialize is answered at once: an editor may send its next request right after)
  const image = config.model.vision ?? (yield* Effect.flatMap(ModelClient, (model) => model.vision)) === true
  const response: acp.InitializeResponse = {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: sessionsOn,
      promptCapabilities: { embeddedContext: true, image },
      // `fork` is not in the stable schema's type yet (ACP's session/fork is marked unstable)
      sessionCapabilities: sessionsOn ? ({ list: {}, resume: {}, close: {}, fork: {} } as acp.SessionCapabilities) : {},
      mcpCapabilities: { http: true }
    },
    agentInfo: { name: "mm", title: "mm (mini-me)", version },
    authMethods: []
  }
  return response
})

/** Says on the log which instruction files a thread's turns will read (none: nothing). */
const logInstructions = Effect.fn("Acp.logInstructions")(function*(cwd: string) {
  const { log } = yield* AcpConnection
  const { config } = yield* AppConfig
  const files = findInstructionFiles(config.instructions, cwd, os.homedir())
  if (files.length > 0) log(instructionsLine(files.map((file) => instructionLabel(file.path, file.size))))
})

/** `session/new`: a new conversation in `cwd`, with the editor's MCP servers. */
export const newSession = Effect.fn("Acp.newSession")(function*(params: acp.NewSessionRequest) {
  const { log } = yield* AcpConnection
  const keeper = yield* Keeper
  const conversation = yield* keeper.open(yield* checkedCwd(params.cwd), { createFile: "now" })
  const status = yield* conversation.status
  if (status._tag === "NotSaved") log(`not saved: ${status.reason}`)
  const id = (yield* conversation.id) || newSessionId()
  yield* holdSession(id, conversation)
  yield* logInstructions(conversation.cwd)
  yield* startSessionServers(conversation, params.mcpServers, log)
  return { sessionId: id, ...(yield* setup(conversation)) }
})

/** `session/load`: the thread, its history replayed to the editor. */
export const loadSession = Effect.fn("Acp.loadSession")(function*(
  params: acp.LoadSessionRequest,
  client: acp.AgentContext
) {
  const { log } = yield* AcpConnection
  const session = yield* attach(params.sessionId, params.cwd)
  yield* logInstructions(session.conversation.cwd)
  yield* restoreSettings(session.conversation)
  yield* startSessionServers(session.conversation, params.mcpServers, log)
  const interrupted = yield* session.conversation.takeInterrupted
  // mm stopped during the last turn: what ran is replayed above, and one message says so
  const told = interrupted === undefined ? [] : [agentText(interruptedLine(interrupted))]
  const commands = yield* commandsUpdateOf(session.conversation)
  yield* send(client, session.id, [...(yield* replayOf(session.conversation)), ...told, commands])
  return yield* setup(session.conversation)
})

/** The fields of ACP's (unstable) `ForkSessionRequest` that mm reads. */
export interface ForkRequest {
  readonly sessionId: string
  readonly cwd: string
  readonly mcpServers?: Array<acp.McpServer>
}

/** Checks what the SDK does not (session/fork is not in its stable schema): the shape of the params. */
export const parseForkRequest = (params: unknown): ForkRequest => {
  const { cwd, mcpServers, sessionId } = (params ?? {}) as Record<string, unknown>
  if (typeof sessionId !== "string" || typeof cwd !== "string") {
    throw acp.RequestError.invalidParams(undefined, "session/fork needs a sessionId and a cwd (strings)")
  }
  if (mcpServers !== undefined && mcpServers !== null && !Array.isArray(mcpServers)) {
    throw acp.RequestError.invalidParams(undefined, "mcpServers must be an array")
  }
  return { sessionId, cwd, mcpServers: Array.isArray(mcpServers) ? (mcpServers as Array<acp.McpServer>) : [] }
}

/**
 * `session/fork`: a new thread holding the whole conversation of `sessionId` so far (held by
 * this agent or stored), with `forkedFrom` in its file; the original is not touched. Its
 * history comes with `session/load` of the new id, as for any stored thread.
 */
export const forkSession = Effect.fn("Acp.forkSession")(function*(params: ForkRequest) {
  const { log } = yield* AcpConnection
  const source = yield* attach(params.sessionId, params.cwd)
  const held = yield* source.conversation.snapshot
  const conversation = yield* (yield* Keeper).open(source.conversation.cwd, { createFile: "now" })
  const fresh = yield* conversation.snapshot
  const forked = forkOf(held, lastTurn(held), new Date())
  const warning = yield* conversation.update(() => ({ ...forked, id: fresh.id, createdAt: fresh.createdAt }))
  if (warning !== undefined) log(warning)
  const id = fresh.id || newSessionId()
  yield* holdSession(id, conversation)
  yield* startSessionServers(conversation, params.mcpServers ?? [], log)
  return { sessionId: id, ...(yield* setup(conversation)) }
})

/** `session/resume`: the thread, without its history (the editor has it). */
export const resumeSession = Effect.fn("Acp.resumeSession")(function*(
  params: acp.ResumeSessionRequest,
  client: acp.AgentContext
) {
  const { log } = yield* AcpConnection
  const session = yield* attach(params.sessionId, params.cwd)
  yield* logInstructions(session.conversation.cwd)
  yield* restoreSettings(session.conversation)
  yield* startSessionServers(session.conversation, params.mcpServers, log)
  const commands = yield* commandsUpdateOf(session.conversation)
  yield* send(client, session.id, [...(yield* standingUpdates(session.conversation)), commands])
  return yield* setup(session.conversation)
})

/** `session/close`: its running prompt is cancelled, its jobs and MCP servers stopped, and this agent forgets it. */
export const closeSession = Effect.fn("Acp.closeSession")(function*(params: acp.CloseSessionRequest) {
  const forgotten = yield* forgetSession(params.sessionId)
  if (Option.isNone(forgotten)) {
    return yield* Effect.fail(sessionNotFound(params.sessionId, `no session ${params.sessionId} in this agent`))
  }
  const session = forgotten.value
  const running = yield* SynchronizedRef.get(session.running)
  if (running !== undefined) yield* Fiber.interrupt(running)
  yield* (yield* Jobs).end(session.conversation)
  yield* stopSessionServers(session.conversation)
  return {}
})

/** `session/list`: the stored threads of `cwd` (mm's own directory without one), a page at a time. */
export const listSessions = Effect.fn("Acp.listSessions")(function*(params: acp.ListSessionsRequest) {
  const cursor = decodeCursor(params.cursor)
  if (cursor === undefined) {
    return yield* Effect.fail(acp.RequestError.invalidParams({ cursor: params.cursor }, "unknown cursor"))
  }
  const { log } = yield* AcpConnection
  const keeper = yield* Keeper
  const cwd = params.cwd === undefined || params.cwd === null ? process.cwd() : yield* checkedCwd(params.cwd)
  const listing = yield* keeper.list(cwd)
  if (listing._tag === "Failed") log(`cannot list sessions: ${listing.reason}`)
  if (listing._tag !== "Listed") return { sessions: [] }
  const summaries = listing.entries.flatMap((entry): Array<SessionSummary> =>
    entry._tag === "Readable" ? [entry.summary] : []
  )
  return listPage(summaries, cursor)
})

/**
 * `session/cancel`: the running prompt of the thread is interrupted; its request answers
 * `cancelled`. A cancel that arrived before that prompt (PromptOrder.ts) leaves it alone.
 */
export const cancelPrompt = Effect.fn("Acp.cancelPrompt")(function*(params: acp.CancelNotification) {
  const { sessions } = yield* AcpConnection
  const session = HashMap.get(yield* Ref.get(sessions), params.sessionId)
  if (Option.isNone(session)) return
  const running = yield* SynchronizedRef.get(session.value.running)
  if (running !== undefined && cancelApplies(params, running)) yield* Fiber.interruptFork(running)
})

/** Every running prompt cancelled; waits until their conversations are saved. */
export const cancelAll = Effect.gen(function*() {
  const { sessions } = yield* AcpConnection
  const held = HashMap.toValues(yield* Ref.get(sessions))
  const running = yield* Effect.forEach(held, (session) => SynchronizedRef.get(session.running))
  yield* Effect.forEach(running, (fiber) => (fiber === undefined ? Effect.void : Fiber.interrupt(fiber)), {
    discard: true
  })
})
