/**
 * A model server's answer read into `ModelEvent`s: the usual SSE stream of deltas, or the
 * whole completion as one JSON body from a server that ignored `stream: true`. Text is
 * redacted as it goes; the answer is held against model.maxAnswerBytes and the watchdog.
 */
import * as Sse from "@effect/experimental/Sse"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

import { GenerationError, rawText } from "../../domain/Errors"
import type { SecretRegistry, StreamRedactor } from "../../lib/Secrets"
import { readCapped } from "../BodyRead"
import { ERROR_BODY_READ_MAX, eventTooLarge, streamCut, tooLargeError, watchdogError } from "../Failures"
import type { ModelEvent, Usage } from "../ModelClient"
import { Completion } from "./Completion"

/** How an answer is read. */
export interface Reading {
  readonly maxAnswerBytes: number
  /** The secrets the answer's text is redacted of as it streams. */
  readonly secrets: SecretRegistry
  readonly watchdogSeconds: number
  readonly watchdogMs: number
  /** Run once the answer is whole (the client's own follow-up, after the `Completed` event). */
  readonly afterAnswer: Effect.Effect<void>
  /** Words a tool call that `finish_reason: length` cut before its arguments were whole. */
  readonly cutCall?: (tool: string, usage: Usage | undefined) => string
}

/** `readCapped` within the watchdog; nothing (as a whole body) when reading fails or stalls. */
const readBody = (
  response: HttpClientResponse.HttpClientResponse,
  max: number,
  watchdogMs: number
): Effect.Effect<{ readonly text: string; readonly whole: boolean }> =>
  readCapped(response, max).pipe(
    Effect.timeout(watchdogMs),
    Effect.orElseSucceed(() => ({ text: "", whole: true }))
  )

/** An error body, read up to ERROR_BODY_READ_MAX bytes. */
export const errorBody = (response: HttpClientResponse.HttpClientResponse, watchdogMs: number): Effect.Effect<string> =>
  Effect.map(
    readBody(response, ERROR_BODY_READ_MAX, watchdogMs),
    ({ text, whole }) => whole ? text : `${text} … [body cut after ${ERROR_BODY_READ_MAX} bytes]`
  )

/** The reasoning and text still to show, then the closing event, then `afterAnswer`. */
const ending = (
  thought: string,
  said: string,
  done: ModelEvent,
  afterAnswer: Effect.Effect<void>
): Stream.Stream<ModelEvent, GenerationError> => {
  const events: Array<ModelEvent> = [
    ...(thought === "" ? [] : [{ _tag: "ReasoningDelta", text: thought } as const]),
    ...(said === "" ? [] : [{ _tag: "TextDelta", text: said } as const]),
    done
  ]
  return Stream.concat(Stream.fromIterable(events), Stream.drain(Stream.fromEffect(afterAnswer)))
}

/** A server that ignored `stream: true` and sent the whole completion as one JSON body. */
export const wholeAnswer = (
  response: HttpClientResponse.HttpClientResponse,
  reading: Reading
): Stream.Stream<ModelEvent, GenerationError> =>
  Stream.unwrap(
    Effect.map(readBody(response, reading.maxAnswerBytes, reading.watchdogMs), ({ text: body, whole }) => {
      if (!whole) return Stream.fail(tooLargeError(reading.maxAnswerBytes))
      const completion = new Completion(reading.secrets.redact, reading.cutCall)
      const text = completion.absorb(body, "message")
      if (text instanceof GenerationError) return Stream.fail(text)
      if (!completion.finished && completion.content === "") {
        return Stream.fail(streamCut(`a JSON body without an answer: ${body}`))
      }
      const rest = completion.endContent()
      const done = completion.complete()
      if (done instanceof GenerationError) return Stream.fail(done)
      return ending(
        reading.secrets.redact(completion.takeReasoning()),
        reading.secrets.redact((text ?? "") + rest),
        done,
        reading.afterAnswer
      )
    })
  )

/**
 * Cuts decoded text after each line feed, so that the SSE parser gets at most one line per piece:
 * it scans each line of a piece from the piece's start, which is quadratic when a fast server's
 * burst brings hundreds of events in one network chunk (100 KB of 7-character deltas took seconds).
 */
const oneLinePerPiece = (chunk: Chunk.Chunk<string>): Chunk.Chunk<string> => {
  const pieces: Array<string> = []
  for (const text of chunk) {
    let from = 0
    for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", from)) {
      pieces.push(text.slice(from, at + 1))
      from = at + 1
    }
    if (from < text.length) pieces.push(text.slice(from))
  }
  return Chunk.unsafeFromArray(pieces)
}

/** The body's SSE events up to `[DONE]`, each byte awaited no longer than the watchdog allows. */
const sseEvents = (response: HttpClientResponse.HttpClientResponse, reading: Reading) =>
  response.stream.pipe(
    Stream.timeoutFail(() => watchdogError(reading.watchdogSeconds), reading.watchdogMs),
    Stream.decodeText(),
    Stream.mapChunks(oneLinePerPiece),
    Stream.pipeThroughChannel(Sse.makeChannel()),
    Stream.takeUntil((event) => event.data.length <= 8 && event.data.trim() === "[DONE]")
  )

/** One streamed answer being read: its completion and the redactors of its text and reasoning. */
interface Streamed {
  readonly completion: Completion
  readonly redactor: StreamRedactor
  readonly thoughtRedactor: StreamRedactor
}

/** A chunk of SSE events absorbed, as the deltas to show now. */
const absorbAll = (
  { completion, redactor, thoughtRedactor }: Streamed,
  maxAnswerBytes: number,
  chunk: Chunk.Chunk<Sse.Event>
): Effect.Effect<Chunk.Chunk<ModelEvent>, GenerationError> => {
  const out: Array<ModelEvent> = []
  for (const event of chunk) {
    // an event whose data is empty carries nothing, as the SSE format says
    if (event.data.trim() === "") continue
    const text = completion.absorb(event.data, event.event)
    if (text instanceof GenerationError) return Effect.fail(text)
    const thought = thoughtRedactor.push(completion.takeReasoning())
    if (thought !== "") out.push({ _tag: "ReasoningDelta", text: thought })
    const shown = text === undefined ? "" : redactor.push(text)
    if (shown !== "") out.push({ _tag: "TextDelta", text: shown })
  }
  if (completion.bytes > maxAnswerBytes) return Effect.fail(tooLargeError(maxAnswerBytes))
  return Effect.succeed(Chunk.unsafeFromArray(out))
}

/** After the last event: what was held back, and the closing event — or the stream was cut. */
const closing = (
  { completion, redactor, thoughtRedactor }: Streamed,
  afterAnswer: Effect.Effect<void>
): Stream.Stream<ModelEvent, GenerationError> =>
  Stream.suspend(() => {
    if (!completion.finished) return Stream.fail(streamCut("the stream ended without finish_reason or [DONE]"))
    const heldText = completion.endContent()
    const done = completion.complete()
    if (done instanceof GenerationError) return Stream.fail(done)
    const thought = thoughtRedactor.push(completion.takeReasoning()) + thoughtRedactor.flush()
    const rest = redactor.push(heldText) + redactor.flush()
    return ending(thought, rest, done, afterAnswer)
  })

/** The usual answer: `text/event-stream` of completion deltas. */
export const streamedAnswer = (
  response: HttpClientResponse.HttpClientResponse,
  reading: Reading
): Stream.Stream<ModelEvent, GenerationError> =>
  Stream.suspend(() => {
    const streamed: Streamed = {
      completion: new Completion(reading.secrets.redact, reading.cutCall),
      redactor: reading.secrets.streamRedactor(),
      thoughtRedactor: reading.secrets.streamRedactor()
    }
    return sseEvents(response, reading).pipe(
      Stream.mapChunksEffect((chunk) => absorbAll(streamed, reading.maxAnswerBytes, chunk)),
      Stream.catchAll((error) =>
        error._tag === "GenerationError"
          ? Stream.fail(error)
          : streamed.completion.finished
          ? Stream.empty // the answer was whole; only the goodbye was lost
          : Stream.fail(streamCut(rawText(error)))
      ),
      Stream.catchSomeCause((cause) =>
        Option.map(
          Cause.dieOption(cause).pipe(Option.filter((defect) => defect instanceof Sse.SseError)),
          (defect) => Stream.fail(eventTooLarge(rawText(defect)))
        )
      ),
      Stream.concat(closing(streamed, reading.afterAnswer))
    )
  })
