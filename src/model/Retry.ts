/** A busy server asked again: which failures are worth another try, how long to wait, and the loop. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

import type { GenerationError } from "../domain/Errors"
import { errorCode } from "./Failures"
import type { ModelEvent } from "./ModelClient"

export interface RetryTimingShape {
  readonly baseMs: number
  readonly maxRetries: number
  readonly capMs: number
}

/** How mm waits before asking a busy server again (tests shorten it). */
export class RetryTiming extends Context.Reference<RetryTiming>()("mm/RetryTiming", {
  defaultValue: (): RetryTimingShape => ({ baseMs: 1000, maxRetries: 3, capMs: 60_000 })
}) {}

/** Statuses that mean "busy, ask again later". */
const RETRIED_STATUSES = new Set([429, 502, 503, 504])
const RESET_CODES = new Set(["ECONNRESET", "UND_ERR_SOCKET", "EPIPE"])

/** A failure worth another try: the server was busy, or dropped the connection before answering. */
export class Busy {
  readonly _tag = "Busy"
  constructor(
    readonly error: GenerationError,
    readonly label: string,
    readonly retryAfterMs: number | undefined
  ) {}
}

/** `Retry-After` in milliseconds: seconds or an HTTP date; undefined when absent or unreadable. */
export const retryAfterMs = (value: string | undefined, now: number = Date.now()): number | undefined => {
  if (value === undefined || value.trim() === "") return undefined
  const text = value.trim()
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1000
  const date = Date.parse(text)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** The wait before attempt `n + 1`: `Retry-After` when the server said it, else exponential with jitter; capped. */
export const retryDelayMs = (
  attempt: number,
  retryAfter: number | undefined,
  timing: { readonly baseMs: number; readonly capMs: number },
  random: number = Math.random()
): number =>
  Math.min(timing.capMs, Math.round(retryAfter ?? timing.baseMs * 2 ** (attempt - 1) * (0.75 + random * 0.5)))

const waitWords = (
  ms: number
): string => (ms >= 1000 || ms === 0 ? `${Math.round(ms / 1000)} s` : `${(ms / 1000).toFixed(1)} s`)

/** A failure to connect, `Busy` when the server reset the connection (`cause` is the transport's own). */
export const busyIfReset = (error: GenerationError, cause: unknown): GenerationError | Busy => {
  const code = errorCode(cause)
  return code !== undefined && RESET_CODES.has(code)
    ? new Busy(error, "connection reset by the server", undefined)
    : error
}

/** A refusal, `Busy` when its status means "ask again later" (waiting `Retry-After` when it says so). */
export const busyIfRetried = (
  error: GenerationError,
  status: number,
  retryAfter: () => string | undefined
): GenerationError | Busy =>
  RETRIED_STATUSES.has(status) ? new Busy(error, `server busy (${status})`, retryAfterMs(retryAfter())) : error

/**
 * `answer` (the request, up to the first byte of its answer), asked again while the server is
 * busy: up to `maxRetries` more times, each wait announced by a `Retrying` event. `giveUp` words
 * the failure that ends it, knowing the raw detail of the attempts before.
 */
export const withRetries = (
  answer: Effect.Effect<Stream.Stream<ModelEvent, GenerationError>, GenerationError | Busy>,
  timing: RetryTimingShape,
  giveUp: (error: GenerationError, attempt: number, earlier: ReadonlyArray<string>) => Effect.Effect<GenerationError>
): Stream.Stream<ModelEvent, GenerationError> => {
  const attempt = (n: number, earlier: ReadonlyArray<string>): Stream.Stream<ModelEvent, GenerationError> =>
    Stream.unwrap(
      Effect.catchAll(answer, (failure) => {
        const error = failure instanceof Busy ? failure.error : failure
        if (!(failure instanceof Busy) || n > timing.maxRetries) {
          return Effect.flip(giveUp(error, n, earlier))
        }
        const waitMs = retryDelayMs(n, failure.retryAfterMs, timing)
        const notice: ModelEvent = { _tag: "Retrying", text: `${failure.label} — retrying in ${waitWords(waitMs)}` }
        return Effect.succeed(
          Stream.make(notice).pipe(
            Stream.concat(Stream.drain(Stream.fromEffect(Effect.sleep(waitMs)))),
            Stream.concat(attempt(n + 1, [...earlier, `attempt ${n}: ${error.raw}`]))
          )
        )
      })
    )
  return attempt(1, [])
}
