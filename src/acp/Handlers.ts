import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as Fiber from "effect/Fiber"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as SynchronizedRef from "effect/SynchronizedRef"

import { AppConfig } from "../config/Config"
import { newSessionId } from "../domain/SessionId"
import { Keeper } from "../sessions/Keeper"
import type { SessionSummary } from "../sessions/SessionStore"
import { AcpConnection, commandsUpdate, send } from "./Connection"
import { startSessionServers, stopSessionServers } from "./McpSessions"
import { replayOf, standingUpdates } from "./ReplayData"
import { decodeCursor, listPage } from "./SessionList"
import { attach, checkedCwd, forgetSession, holdSession, sessionNotFound } from "./Sessions"
import { restoreSettings, setup } from "./Settings"

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
  const sessionsOn = (yield* AppConfig).config.sessions.enabled
  const response: acp.InitializeResponse = {
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: sessionsOn,
      promptCapabilities: { embeddedContext: true },
      sessionCapabilities: sessionsOn ? { list: {}, resume: {}, close: {} } : {},
      mcpCapabilities: { http: true }
    },
    agentInfo: { name: "mm", title: "mm (mini-me)", version },
    authMethods: []
  }
  return response
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
  yield* restoreSettings(session.conversation)
  yield* startSessionServers(session.conversation, params.mcpServers, log)
  yield* send(client, session.id, [...(yield* replayOf(session.conversation)), commandsUpdate])
  return yield* setup(session.conversation)
})

/** `session/resume`: the thread, without its history (the editor has it). */
export const resumeSession = Effect.fn("Acp.resumeSession")(function*(
  params: acp.ResumeSessionRequest,
  client: acp.AgentContext
) {
  const { log } = yield* AcpConnection
  const session = yield* attach(params.sessionId, params.cwd)
  yield* restoreSettings(session.conversation)
  yield* startSessionServers(session.conversation, params.mcpServers, log)
  yield* send(client, session.id, [...(yield* standingUpdates(session.conversation)), commandsUpdate])
  return yield* setup(session.conversation)
})

/** `session/close`: its running prompt is cancelled, its MCP servers stopped, and this agent forgets it. */
export const closeSession = Effect.fn("Acp.closeSession")(function*(params: acp.CloseSessionRequest) {
  const forgotten = yield* forgetSession(params.sessionId)
  if (Option.isNone(forgotten)) {
    return yield* Effect.fail(sessionNotFound(params.sessionId, `no session ${params.sessionId} in this agent`))
  }
  const session = forgotten.value
  const running = yield* SynchronizedRef.get(session.running)
  if (running !== undefined) yield* Fiber.interrupt(running)
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

/** `session/cancel`: the running prompt of the thread is interrupted; its request answers `cancelled`. */
export const cancelPrompt = Effect.fn("Acp.cancelPrompt")(function*(params: acp.CancelNotification) {
  const { sessions } = yield* AcpConnection
  const session = HashMap.get(yield* Ref.get(sessions), params.sessionId)
  if (Option.isNone(session)) return
  const running = yield* SynchronizedRef.get(session.value.running)
  if (running !== undefined) yield* Fiber.interruptFork(running)
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
