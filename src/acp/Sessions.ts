import * as fs from "node:fs"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as SynchronizedRef from "effect/SynchronizedRef"

import type { ResumeError } from "../domain/Errors"
import { isSessionId, validateSessionId } from "../domain/SessionId"
import { type Conversation } from "../sessions/Conversation"
import { Keeper } from "../sessions/Keeper"
import { AcpConnection, type AcpSession, type PromptFiber } from "./Connection"

export const sessionNotFound = (sessionId: string, detail: string): acp.RequestError =>
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
    case "live":
      // not this agent's fault, nor the request's: the thread is busy elsewhere, its line says where
      return new acp.RequestError(-32603, error.message, { sessionId })
    case "not-found":
    case "disabled":
    case "no-session":
      return sessionNotFound(sessionId, error.message)
    default:
      return acp.RequestError.internalError({ sessionId }, error.message)
  }
}

const checkedId = (sessionId: string) =>
  validateSessionId(sessionId).pipe(Effect.mapError((e) => acp.RequestError.invalidParams({ sessionId }, e.message)))

/**
 * ACP requires an absolute `cwd`: a relative one would silently mean mm's own directory, and
 * one that does not exist would be created by the first session file and used by the tools.
 */
export const checkedCwd = (cwd: string) =>
  !path.isAbsolute(cwd)
    ? Effect.fail(acp.RequestError.invalidParams({ cwd }, `cwd must be an absolute path, got ${JSON.stringify(cwd)}`))
    : Effect.try(() => fs.statSync(cwd).isDirectory()).pipe(
      Effect.orElseSucceed(() => false),
      Effect.flatMap((isDirectory) =>
        isDirectory
          ? Effect.succeed(path.resolve(cwd))
          : Effect.fail(acp.RequestError.invalidParams({ cwd }, `cwd is not an existing directory: ${cwd}`))
      )
    )

const sessionOf = (id: string, conversation: Conversation) =>
  Effect.map(SynchronizedRef.make<PromptFiber | undefined>(undefined), (running): AcpSession => ({
    id,
    conversation,
    running
  }))

/** `session/new`: the new thread is held under its id. */
export const holdSession = Effect.fn("Acp.holdSession")(function*(id: string, conversation: Conversation) {
  const { sessions } = yield* AcpConnection
  const session = yield* sessionOf(id, conversation)
  yield* Ref.update(sessions, HashMap.set(id, session))
  return session
})

/** The thread of `sessionId`: the one this process holds, else the stored one, loaded. */
export const attach = Effect.fn("Acp.attach")(function*(sessionId: string, rawCwd: string) {
  const id = yield* checkedId(sessionId)
  const cwd = yield* checkedCwd(rawCwd)
  const { sessions } = yield* AcpConnection
  const held = HashMap.get(yield* Ref.get(sessions), id)
  if (Option.isSome(held)) {
    const heldCwd = held.value.conversation.cwd
    return heldCwd === cwd ? held.value : yield* Effect.fail(otherProject(id, heldCwd))
  }
  const keeper = yield* Keeper
  const conversation = yield* keeper.load(path.resolve(cwd), id).pipe(Effect.mapError(loadError(id)))
  const loaded = yield* sessionOf(id, conversation)
  // another request may have loaded it meanwhile: that one is kept
  return yield* Ref.modify(
    sessions,
    (table): [AcpSession, HashMap.HashMap<string, AcpSession>] =>
      Option.match(HashMap.get(table, id), {
        onNone: () => [loaded, HashMap.set(table, id, loaded)],
        onSome: (raced) => [raced, table]
      })
  )
})

/** A thread this process holds; a prompt or a settings change needs one. */
export const heldSession = Effect.fn("Acp.heldSession")(function*(sessionId: string) {
  const { sessions } = yield* AcpConnection
  const session = HashMap.get(yield* Ref.get(sessions), sessionId)
  if (Option.isSome(session)) return session.value
  return yield* Effect.fail(
    isSessionId(sessionId)
      ? sessionNotFound(sessionId, `no session ${sessionId} in this agent; session/load it first`)
      : acp.RequestError.invalidParams({ sessionId }, "not a session id (expected YYYYMMDD-HHMMSS-xxxxxxxx)")
  )
})

/** This process lets go of a thread; the one it held, if any. */
export const forgetSession = Effect.fn("Acp.forgetSession")(function*(sessionId: string) {
  const { sessions } = yield* AcpConnection
  return yield* Ref.modify(sessions, (table) => [HashMap.get(table, sessionId), HashMap.remove(table, sessionId)])
})
