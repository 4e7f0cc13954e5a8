import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Runtime from "effect/Runtime"
import * as Stream from "effect/Stream"

import { Agent, type CompactReport } from "../agent/Agent"
import { isAllowed, type Scope } from "../approvals/ApprovalScope"
import { approvalNeeded, isApprovalMode, type SessionSettings } from "../approvals/SessionSettings"
import { Changes } from "../changes/Changes"
import { AppConfig } from "../config/Config"
import type { ResumeError } from "../domain/Errors"
import { isSessionId, newSessionId, validateSessionId } from "../domain/SessionId"
import { mcpApprovalNeeded } from "../mcp/McpTurnTools"
import { ModelClient } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { Keeper } from "../sessions/Keeper"
import type { SessionSummary } from "../sessions/SessionStore"
import { CurrentPeer, type Peer } from "./AcpApprover"
import { mcpApprovalLookup, startSessionServers, stopSessionServers } from "./McpSessions"
import { availableCommands, parseCommand, promptText, unknownCommandText } from "./Prompt"
import { replayUpdates } from "./Replay"
import { decodeCursor, listPage } from "./SessionList"
import { configOptions, MODE_OPTION, MODEL_OPTION, modelChoices, modeState } from "./SessionOptions"
import { agentText } from "./ToolUpdates"
import { type ClientDisplay, compactionUpdate, makeTurnRenderer } from "./TurnUpdates"
import { acpChanges, acpUndo } from "./Undo"

export type AcpServices = Agent | Keeper | AppConfig | ModelClient | Changes

/** One editor thread: its conversation, and the prompt running in it, if any. */
interface AcpSession {
  readonly id: string
  readonly conversation: Conversation
  running: Fiber.RuntimeFiber<acp.PromptResponse, acp.RequestError> | undefined
}

export interface AcpAgent {
  readonly app: acp.AgentApp
  /** Cancels every running prompt and waits until their conversations are saved. */
  readonly shutdown: Effect.Effect<void>
  /** Resolves once every request received so far has been answered (or failed). */
  readonly drained: () => Promise<void>
}

const commandsUpdate: acp.SessionUpdate = { sessionUpdate: "available_commands_update", availableCommands }

const sessionNotFound = (sessionId: string, detail: string): acp.RequestError =>
  new acp.RequestError(-32002, `Resource not found: ${detail}`, { sessionId })

/** A session is bound to its project: asked for under another `cwd`, it is refused. */
const otherProject = (sessionId: string, cwd: string): acp.RequestError =>
  new acp.RequestError(-32602, `session ${sessionId} belongs to ${cwd}`, { sessionId, cwd })

const loadError = (sessionId: string) => (error: ResumeError): acp.RequestError => {
  switch (error.reason) {
    case "bad-id":
      return acp.RequestError.invalidParams({ sessionId }, error.message)
    case "other-project":
      return new acp.RequestError(-32602, error.message, { sessionId })
    case "not-found":
    case "disabled":
    case "no-session":
      return sessionNotFound(sessionId, error.message)
    default:
      return acp.RequestError.internalError({ sessionId }, error.message)
  }
}

/**
 * Sends updates in order and waits until the SDK has written every one of them. The SDK
 * queues each message as `notify` is called, so they leave in this order, before anything
 * sent afterwards (the response of the request being handled). A closed connection is not
 * an error here.
 */
const send = (client: acp.AgentContext, sessionId: string, updates: ReadonlyArray<acp.SessionUpdate>) =>
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

const compactedText = (report: CompactReport): string =>
  report._tag === "Nothing"
    ? "Nothing to compact yet: the history is no longer than the turns kept as they are."
    : `Compacted: ${report.replaced} older message(s) replaced by a summary (about ${report.tokensBefore} → ${report.tokensAfter} tokens).` +
      (report.warning === undefined ? "" : `\n\n${report.warning}`)

/** The ACP agent: each request translated into calls of the core, run on `runtime`. */
export const makeAcpAgent = (
  runtime: Runtime.Runtime<AcpServices>,
  options: { readonly version: string; readonly log: (line: string) => void }
): AcpAgent => {
  const { log } = options
  const sessions = new Map<string, AcpSession>()
  const runExit = Runtime.runPromiseExit(runtime)
  const fork = Runtime.runFork(runtime)
  const { config } = Runtime.runSync(runtime)(AppConfig)
  /** What the editor said it offers, at `initialize`. */
  let capabilities: acp.ClientCapabilities | undefined
  const display = (): ClientDisplay => ({
    notices: capabilities?.session?.notices !== undefined && capabilities?.session?.notices !== null,
    compaction: capabilities?.session?.compaction !== undefined && capabilities?.session?.compaction !== null
  })

  /** The models to choose from: the configured one, then what the server's `/models` lists (asked once). */
  let listed: Promise<ReadonlyArray<string>> | undefined
  const models = Effect.promise(() => {
    listed ??= Runtime.runPromise(runtime)(Effect.flatMap(ModelClient, (model) => model.models))
    return listed
  }).pipe(Effect.map((ids) => modelChoices(config.model.name, ids)))

  /** The modes and config options a session starts with (and shows after each change). */
  const setup = (conversation: Conversation) =>
    Effect.gen(function*() {
      const settings = yield* Ref.get(conversation.settings)
      return { modes: modeState(settings), configOptions: configOptions(settings, yield* models) }
    })

  const unexpected = (cause: Cause.Cause<unknown>): acp.RequestError => {
    const line = Cause.pretty(cause).split("\n")[0]
    log(`internal error: ${line}`)
    return acp.RequestError.internalError(undefined, line)
  }

  /** Runs a request's program; its typed failure is the JSON-RPC error the editor gets. */
  const answer = async <A>(program: Effect.Effect<A, acp.RequestError, AcpServices>): Promise<A> => {
    const exit = await runExit(program)
    if (Exit.isSuccess(exit)) return exit.value
    const failure = Cause.failureOption(exit.cause)
    throw Option.isSome(failure) ? failure.value : unexpected(exit.cause)
  }

  const announceLater = (client: acp.AgentContext, sessionId: string) =>
    setImmediate(() => void Effect.runPromise(send(client, sessionId, [commandsUpdate])))

  const checkedId = (sessionId: string) =>
    validateSessionId(sessionId).pipe(Effect.mapError((e) => acp.RequestError.invalidParams({ sessionId }, e.message)))

  /** The thread of `sessionId`: the one this process holds, else the stored one, loaded. */
  /**
   * ACP requires an absolute `cwd`: a relative one would silently mean mm's own directory, and
   * one that does not exist would be created by the first session file and used by the tools.
   */
  const checkedCwd = (cwd: string) => {
    if (!path.isAbsolute(cwd)) {
      return Effect.fail(
        acp.RequestError.invalidParams({ cwd }, `cwd must be an absolute path, got ${JSON.stringify(cwd)}`)
      )
    }
    const isDirectory = (() => {
      try {
        return fs.statSync(cwd).isDirectory()
      } catch {
        return false
      }
    })()
    return isDirectory
      ? Effect.succeed(path.resolve(cwd))
      : Effect.fail(acp.RequestError.invalidParams({ cwd }, `cwd is not an existing directory: ${cwd}`))
  }

  const attach = (sessionId: string, rawCwd: string) =>
    Effect.gen(function*() {
      const id = yield* checkedId(sessionId)
      const cwd = yield* checkedCwd(rawCwd)
      const held = sessions.get(id)
      if (held !== undefined) {
        if (held.conversation.cwd !== cwd) return yield* Effect.fail(otherProject(id, held.conversation.cwd))
        return held
      }
      const keeper = yield* Keeper
      const conversation = yield* keeper.load(path.resolve(cwd), id).pipe(Effect.mapError(loadError(id)))
      const raced = sessions.get(id)
      if (raced !== undefined) return raced
      const session: AcpSession = { id, conversation, running: undefined }
      sessions.set(id, session)
      return session
    })

  const newSession = (params: acp.NewSessionRequest) =>
    Effect.gen(function*() {
      const keeper = yield* Keeper
      const conversation = yield* keeper.open(yield* checkedCwd(params.cwd), { createFile: "now" })
      const status = yield* conversation.status
      if (status._tag === "NotSaved") log(`not saved: ${status.reason}`)
      const id = (yield* conversation.id) || newSessionId()
      sessions.set(id, { id, conversation, running: undefined })
      yield* startSessionServers(conversation, params.mcpServers, log)
      return { sessionId: id, ...(yield* setup(conversation)) }
    })

  const loadSession = (params: acp.LoadSessionRequest, client: acp.AgentContext) =>
    Effect.gen(function*() {
      const session = yield* attach(params.sessionId, params.cwd)
      yield* startSessionServers(session.conversation, params.mcpServers, log)
      const { messages } = yield* session.conversation.snapshot
      yield* send(client, session.id, [...replayUpdates(messages, session.conversation.cwd), commandsUpdate])
      return yield* setup(session.conversation)
    })

  const resumeSession = (params: acp.ResumeSessionRequest, client: acp.AgentContext) =>
    Effect.gen(function*() {
      const session = yield* attach(params.sessionId, params.cwd)
      yield* startSessionServers(session.conversation, params.mcpServers, log)
      yield* send(client, session.id, [commandsUpdate])
      return yield* setup(session.conversation)
    })

  const heldSession = (sessionId: string) =>
    Effect.suspend(() => {
      const session = sessions.get(sessionId)
      return session !== undefined
        ? Effect.succeed(session)
        : Effect.fail(
          isSessionId(sessionId)
            ? sessionNotFound(sessionId, `no session ${sessionId} in this agent; session/load it first`)
            : acp.RequestError.invalidParams({ sessionId }, "not a session id (expected YYYYMMDD-HHMMSS-xxxxxxxx)")
        )
    })

  /** Changes a session's settings, then tells the editor what they are now. */
  const changeSettings = (
    session: AcpSession,
    client: acp.AgentContext,
    change: (settings: SessionSettings) => SessionSettings
  ) =>
    Effect.gen(function*() {
      const before = yield* Ref.get(session.conversation.settings)
      const after = change(before)
      yield* Ref.set(session.conversation.settings, after)
      const { configOptions: options } = yield* setup(session.conversation)
      const updates: Array<acp.SessionUpdate> = [{ sessionUpdate: "config_option_update", configOptions: options }]
      if (after.mode !== before.mode) {
        updates.unshift({ sessionUpdate: "current_mode_update", currentModeId: after.mode })
      }
      yield* send(client, session.id, updates)
      return options
    })

  const setMode = (params: acp.SetSessionModeRequest, client: acp.AgentContext) =>
    Effect.gen(function*() {
      const session = yield* heldSession(params.sessionId)
      const mode = params.modeId
      if (!isApprovalMode(mode)) {
        return yield* Effect.fail(
          acp.RequestError.invalidParams(
            { modeId: mode },
            `unknown mode ${JSON.stringify(mode)}; the modes are ask, edits, allow`
          )
        )
      }
      yield* changeSettings(session, client, (settings) => ({ ...settings, mode }))
      return {}
    })

  const setConfigOption = (params: acp.SetSessionConfigOptionRequest, client: acp.AgentContext) =>
    Effect.gen(function*() {
      const session = yield* heldSession(params.sessionId)
      const value = params.value
      if (typeof value !== "string") {
        return yield* Effect.fail(
          acp.RequestError.invalidParams(
            { configId: params.configId },
            `${params.configId} takes one of its listed values`
          )
        )
      }
      if (params.configId === MODE_OPTION) {
        if (!isApprovalMode(value)) {
          return yield* Effect.fail(
            acp.RequestError.invalidParams(
              { value },
              `unknown mode ${JSON.stringify(value)}; the modes are ask, edits, allow`
            )
          )
        }
        return { configOptions: yield* changeSettings(session, client, (settings) => ({ ...settings, mode: value })) }
      }
      if (params.configId === MODEL_OPTION) {
        const choices = yield* models
        if (!choices.includes(value)) {
          return yield* Effect.fail(
            acp.RequestError.invalidParams(
              { value },
              `unknown model ${JSON.stringify(value)}; the models are ${choices.join(", ")}`
            )
          )
        }
        const model = value === config.model.name ? undefined : value
        return { configOptions: yield* changeSettings(session, client, (settings) => ({ ...settings, model })) }
      }
      return yield* Effect.fail(
        acp.RequestError.invalidParams(
          { configId: params.configId },
          `unknown config option ${JSON.stringify(params.configId)}; the options are mode, model`
        )
      )
    })

  /** `session/close`: its running prompt is cancelled, its MCP servers stopped, and this agent forgets it. */
  const closeSession = (params: acp.CloseSessionRequest) =>
    Effect.gen(function*() {
      const session = sessions.get(params.sessionId)
      if (session === undefined) {
        return yield* Effect.fail(sessionNotFound(params.sessionId, `no session ${params.sessionId} in this agent`))
      }
      sessions.delete(session.id)
      if (session.running !== undefined) yield* Fiber.interrupt(session.running)
      yield* stopSessionServers(session.conversation)
      return {}
    })

  const listSessions = (params: acp.ListSessionsRequest) =>
    Effect.gen(function*() {
      const cursor = decodeCursor(params.cursor)
      if (cursor === undefined) {
        return yield* Effect.fail(acp.RequestError.invalidParams({ cursor: params.cursor }, "unknown cursor"))
      }
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

  const turn = (peer: Peer, conversation: Conversation, question: string) =>
    Effect.gen(function*() {
      const agent = yield* Agent
      const titleBefore = (yield* conversation.snapshot).title
      const renderer = makeTurnRenderer(conversation.cwd, display())
      const mcpApproval = yield* mcpApprovalLookup(conversation)
      const asks = (allowed: ReadonlyArray<Scope>, settings: SessionSettings) =>
      (
        tool: string,
        input: Record<string, unknown>
      ) => {
        const server = mcpApproval(tool)
        const needed = server === undefined
          ? approvalNeeded(config.permissions, settings.mode, tool, input, conversation.cwd)
          : mcpApprovalNeeded(config.permissions, settings.mode, server)
        return needed && !isAllowed(allowed, { tool, input, cwd: conversation.cwd })
      }
      yield* agent.turn(conversation, question).pipe(
        Stream.runForEach((event) =>
          Effect.flatMap(
            Effect.all([Ref.get(conversation.allowed), Ref.get(conversation.settings)]),
            ([allowed, settings]) => send(peer.client, peer.sessionId, renderer.render(event, asks(allowed, settings)))
          )
        ),
        Effect.onInterrupt(() => send(peer.client, peer.sessionId, renderer.closeOpenCalls()))
      )
      const after = yield* conversation.snapshot
      if (titleBefore === "" && after.title !== "") {
        yield* send(peer.client, peer.sessionId, [{
          sessionUpdate: "session_info_update",
          title: after.title,
          updatedAt: after.updatedAt
        }])
      }
      const failure = renderer.failure()
      // a failed generation is an error of the prompt, as other ACP agents answer it (docs/reference/acp.md)
      if (failure !== undefined) {
        return yield* Effect.fail(new acp.RequestError(-32603, failure.message, { reason: failure.reason }))
      }
      return { stopReason: renderer.stopReason() ?? "end_turn" } satisfies acp.PromptResponse
    })

  /** `/new`: the editor keeps its id; the conversation so far moves to a new one. */
  const startOver = (peer: Peer, conversation: Conversation) =>
    Effect.gen(function*() {
      const archived = yield* Effect.either(conversation.archiveAndReset)
      if (Either.isLeft(archived)) {
        yield* send(peer.client, peer.sessionId, [
          agentText(`Could not start over: ${archived.left.message}. The conversation goes on as it was.`)
        ])
        return { stopReason: "end_turn" } satisfies acp.PromptResponse
      }
      yield* Ref.set(conversation.allowed, [])
      const status = yield* conversation.status
      const text = status._tag === "Off"
        ? "Started a new conversation. The previous one was not kept: sessions are off (sessions.enabled: false)."
        : status._tag === "NotSaved"
        ? `Started a new conversation. The previous one was not kept: sessions cannot be saved (${status.reason}).`
        : archived.right === undefined
        ? "Started a new conversation (the previous one was empty: nothing to keep)."
        : `Started a new conversation. The previous one is kept as session ${archived.right}: ${
          path.join(status.dir, `${archived.right}.json`)
        }`
      yield* send(peer.client, peer.sessionId, [agentText(text)])
      return { stopReason: "end_turn" } satisfies acp.PromptResponse
    })

  const compact = (peer: Peer, conversation: Conversation, hint: string | undefined) =>
    Effect.gen(function*() {
      const agent = yield* Agent
      const done = yield* Effect.either(agent.compact(conversation, hint))
      const told = Either.isLeft(done) ? done.left.message : compactedText(done.right)
      const shown = !display().compaction || (Either.isRight(done) && done.right._tag === "Nothing")
        ? agentText(told)
        : compactionUpdate(Either.isLeft(done) ? { error: told } : { summary: told })
      yield* send(peer.client, peer.sessionId, [shown])
      return { stopReason: "end_turn" } satisfies acp.PromptResponse
    })

  const prompt = (session: AcpSession, blocks: ReadonlyArray<acp.ContentBlock>, client: acp.AgentContext) => {
    const { conversation } = session
    const peer: Peer = {
      sessionId: session.id,
      cwd: conversation.cwd,
      client,
      log,
      ...(capabilities === undefined ? {} : { capabilities })
    }
    const text = promptText(blocks)
    const command = parseCommand(text)
    const program: Effect.Effect<acp.PromptResponse, acp.RequestError, AcpServices> = text.trim() === ""
      ? Effect.succeed({ stopReason: "end_turn" })
      : command === undefined
      ? turn(peer, conversation, text)
      : command.name === "new"
      ? startOver(peer, conversation)
      : command.name === "compact"
      ? compact(peer, conversation, command.hint)
      : command.name === "undo" || command.name === "changes"
      ? Effect.flatMap(
        Changes,
        (changes) => (command.name === "undo" ? acpUndo : acpChanges)(changes, peer, conversation, command.arg)
      )
      : Effect.as(send(client, session.id, [agentText(unknownCommandText(command.word))]), {
        stopReason: "end_turn" as const
      })
    return Effect.locally(program, CurrentPeer, peer)
  }

  const runPrompt = async (
    params: acp.PromptRequest,
    client: acp.AgentContext,
    signal: AbortSignal
  ): Promise<acp.PromptResponse> => {
    const session = sessions.get(params.sessionId)
    if (session === undefined) {
      throw isSessionId(params.sessionId)
        ? sessionNotFound(params.sessionId, `no session ${params.sessionId} in this agent; session/load it first`)
        : acp.RequestError.invalidParams(
          { sessionId: params.sessionId },
          "not a session id (expected YYYYMMDD-HHMMSS-xxxxxxxx)"
        )
    }
    if (session.running !== undefined) {
      throw acp.RequestError.invalidRequest(
        { sessionId: session.id },
        "a prompt is already running in this session; wait for its answer or send session/cancel"
      )
    }
    const fiber = fork(prompt(session, params.prompt, client))
    session.running = fiber
    const cancel = () => void fork(Fiber.interrupt(fiber))
    signal.addEventListener("abort", cancel)
    try {
      const exit = await new Promise<Exit.Exit<acp.PromptResponse, acp.RequestError>>((resolve) =>
        fiber.addObserver(resolve)
      )
      if (Exit.isSuccess(exit)) return exit.value
      if (Cause.isInterruptedOnly(exit.cause)) return { stopReason: "cancelled" }
      const failure = Cause.failureOption(exit.cause)
      throw Option.isSome(failure) ? failure.value : unexpected(exit.cause)
    } finally {
      signal.removeEventListener("abort", cancel)
      if (session.running === fiber) session.running = undefined
    }
  }

  const inFlight = new Set<Promise<unknown>>()
  /** Keeps count of a request until its answer is ready, so that none is dropped at exit. */
  const tracked = <P, A>(handle: (request: P) => A | Promise<A>) => (request: P): A | Promise<A> => {
    const answered = handle(request)
    if (!(answered instanceof Promise)) return answered
    inFlight.add(answered)
    const forget = () => void inFlight.delete(answered)
    answered.then(forget, forget)
    return answered
  }
  const drained = async () => {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight])
  }

  const app = acp
    .agent({ name: "mm" })
    .onRequest(acp.methods.agent.initialize, ({ params }) => {
      if (params.protocolVersion < 1) {
        throw acp.RequestError.invalidParams(
          { protocolVersion: params.protocolVersion },
          `protocol version ${params.protocolVersion} is not supported; mm speaks ACP version ${acp.PROTOCOL_VERSION}`
        )
      }
      capabilities = params.clientCapabilities
      const sessionsOn = config.sessions.enabled
      return {
        protocolVersion: acp.PROTOCOL_VERSION,
        agentCapabilities: {
          loadSession: sessionsOn,
          promptCapabilities: { embeddedContext: true },
          sessionCapabilities: sessionsOn ? { list: {}, resume: {}, close: {} } : {},
          mcpCapabilities: { http: true }
        },
        agentInfo: { name: "mm", title: "mm (mini-me)", version: options.version },
        authMethods: []
      }
    })
    .onRequest(
      acp.methods.agent.session.new,
      tracked(async ({ params, client }) => {
        const response = await answer(newSession(params))
        announceLater(client, response.sessionId)
        return response
      })
    )
    .onRequest(acp.methods.agent.session.load, tracked(({ params, client }) => answer(loadSession(params, client))))
    .onRequest(acp.methods.agent.session.resume, tracked(({ params, client }) => answer(resumeSession(params, client))))
    .onRequest(acp.methods.agent.session.list, tracked(({ params }) => answer(listSessions(params))))
    .onRequest(
      acp.methods.agent.session.prompt,
      tracked(({ params, client, signal }) => runPrompt(params, client, signal))
    )
    .onRequest(acp.methods.agent.session.setMode, tracked(({ params, client }) => answer(setMode(params, client))))
    .onRequest(
      acp.methods.agent.session.setConfigOption,
      tracked(({ params, client }) => answer(setConfigOption(params, client)))
    )
    .onRequest(acp.methods.agent.session.close, tracked(({ params }) => answer(closeSession(params))))
    .onNotification(acp.methods.agent.session.cancel, ({ params }) => {
      const running = sessions.get(params.sessionId)?.running
      if (running !== undefined) fork(Fiber.interrupt(running))
    })

  const shutdown = Effect.suspend(() =>
    Effect.forEach(
      [...sessions.values()].flatMap((s) => (s.running === undefined ? [] : [s.running])),
      (fiber) => Fiber.interrupt(fiber),
      { discard: true }
    )
  )

  return { app, shutdown, drained }
}
