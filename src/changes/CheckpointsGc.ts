import * as Effect from "effect/Effect"

import type { Session } from "../domain/Session"
import { messageOf } from "../lib/OneLine"
import { Keeper } from "../sessions/Keeper"
import { SessionStore } from "../sessions/SessionStore"
import { CheckpointError, checkpointsDirOf, collectGarbage, type GcReport } from "./Checkpoints"

/** Every blob a session's `changes` name. */
export const blobsOf = (session: Session): Set<string> => {
  const names = new Set<string>()
  for (const change of session.changes ?? []) {
    if (change.before !== null) names.add(change.before)
    if (change.after !== null) names.add(change.after)
  }
  // the images sent with questions are blobs too
  for (const message of session.messages) for (const image of message.images ?? []) names.add(image.blob)
  return names
}

export interface ProjectGcReport extends GcReport {
  readonly sessions: number
}

/**
 * `mm checkpoints gc`: removes the blobs of the project's `.mm/checkpoints/` that no session
 * of its sessions directory names. Refused when a session file cannot be read (it may name
 * some), or when sessions are off. `only`: just these blobs are candidates (`mm sessions rm`).
 */
export const checkpointsGc = Effect.fn("Checkpoints.gc")(function*(cwd: string, only?: ReadonlySet<string>) {
  const keeper = yield* Keeper
  const store = yield* SessionStore
  const dir = keeper.dirFor(cwd)
  const refuse = (message: string) => new CheckpointError({ reason: "refused", message, raw: message })
  if (dir === undefined) {
    return yield* refuse(
      "sessions are off (sessions.enabled: false): mm cannot tell which checkpoints are in use; nothing removed"
    )
  }
  const listing = yield* store.list(dir).pipe(Effect.mapError((error) => refuse(`${error.message}; nothing removed`)))
  const referenced = new Set<string>()
  for (const entry of listing) {
    if (entry._tag === "Unreadable") {
      return yield* refuse(
        `session ${entry.id} is unreadable (${entry.reason}), and may use some checkpoints; nothing removed`
      )
    }
    const session = yield* store.load(dir, entry.summary.id).pipe(
      Effect.mapError((error) => refuse(`${error.message}; nothing removed`))
    )
    for (const name of blobsOf(session)) referenced.add(name)
  }
  const now = yield* Effect.clockWith((clock) => clock.currentTimeMillis)
  const report = yield* Effect.try({
    try: () => collectGarbage(checkpointsDirOf(cwd), referenced, now, { only }),
    catch: (cause) =>
      new CheckpointError({
        reason: "io",
        message: `cannot clean ${checkpointsDirOf(cwd)}: ${messageOf(cause)}`,
        raw: String(cause)
      })
  })
  return { ...report, sessions: listing.length } satisfies ProjectGcReport
})

export const gcLine = (report: ProjectGcReport): string =>
  `removed ${report.removed} checkpoint(s) no session uses (${report.freedBytes} bytes) from ${report.dir}; ` +
  `kept ${report.kept} (used by the ${report.sessions} session(s), or written in the last minute)`
