import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { StoreError } from "../domain/Errors"
import { type Session, SESSION_VERSION } from "../domain/Session"
import { validateSessionId } from "../domain/SessionId"
import { FILE_SUFFIX, newerVersionMessage, parseSession, type Rejection } from "./SessionCodec"

/** The store's errors, worded the same whichever store raises them. */

export const validId = (id: unknown): Effect.Effect<string, StoreError> =>
  validateSessionId(id).pipe(
    Effect.mapError((error) =>
      new StoreError({ reason: "bad-id", id: error.id, message: error.message, raw: error.message })
    )
  )

export const notFound = (dir: string, id: string): StoreError =>
  new StoreError({
    reason: "not-found",
    id,
    message: `no session ${id} in ${dir}`,
    raw: `${dir}: no ${id}${FILE_SUFFIX}`
  })

const newerSession = (id: string, version: number): StoreError =>
  new StoreError({
    reason: "newer-version",
    id,
    message: newerVersionMessage(id, version),
    raw: `version ${version} > ${SESSION_VERSION}`
  })

/** A session held in memory that claims a newer version is not written either. */
export const refuseNewer = (session: Session): Effect.Effect<void, StoreError> =>
  session.version > SESSION_VERSION ? Effect.fail(newerSession(session.id, session.version)) : Effect.void

/** Another writer replaced the file since this one last read or wrote it. */
export const changedMeanwhile = (id: string, expected: string, found: string | undefined): StoreError =>
  new StoreError({
    reason: "conflict",
    id,
    message: `session ${id} was changed by another mm since it was loaded`,
    raw: `expected updatedAt ${expected}, found ${found ?? "none"}`
  })

const rejected = (id: string, rejection: Rejection): StoreError =>
  rejection._tag === "Newer"
    ? newerSession(id, rejection.version)
    : new StoreError({
      reason: "unreadable",
      id,
      message: `session ${id} is unreadable: ${rejection.detail}`,
      raw: rejection.detail
    })

export const notOverwritten = (id: string, version: number): StoreError =>
  new StoreError({
    reason: "newer-version",
    id,
    message:
      `session ${id} was written by a newer mm (version ${version}); this mm reads version ${SESSION_VERSION} and leaves it as it is`,
    raw: `version ${version} > ${SESSION_VERSION}`
  })

export const decodeFile = (text: string, id: string): Effect.Effect<Session, StoreError> =>
  Either.match(parseSession(text, id), {
    onLeft: (rejection) => Effect.fail(rejected(id, rejection)),
    onRight: Effect.succeed
  })
