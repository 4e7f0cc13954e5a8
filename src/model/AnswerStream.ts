/**
 * A model server's answer read into `ModelEvent`s, whatever the API: the usual SSE stream of
 * events, or the whole answer as one JSON body from a server that ignored `stream: true`. Each
 * API's adapter brings what reads its events (an `AnswerReader`); text is redacted as it goes
 * and the answer held against model.maxAnswerBytes and the watchdog here, once for all.
 */
import * as Sse from "@effect/experimental/Sse"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Cause from "effect/Cause"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"

import { GenerationError, rawText } from "../domain/Errors"
import type { SecretRegistry, StreamRedactor } from "../lib/Secrets"
import { readCapped } from "./BodyRead"
import { ERROR_BODY_READ_MAX, eventTooLarge, streamCut, tooLargeError, watchdogError } from "./Failures"
import type { ModelEvent } from "./ModelClient"

/** One API's reading of one answer: its events absorbed one by one, then the whole answer. */
export interface AnswerReader {
  /** One event's data (and SSE event name): the text to show now, if any, or why the answer failed. */
  absorb(data: string, eventName: string): string | GenerationError | undefined
  /** The reasoning that arrived since this was last called. */
  takeReasoning(): string
  /** How far the server has read the prompt, when it said so since this was last called (llama-server). */
  takeProgress?(): { readonly processed: number; readonly total: number } | undefined
  /** Text held back until the answer ends (a `<think>` split still open), handed out once. */
  endContent(): string
  /** The answer's text so far. */
  readonly content: string
  /** Bytes of text (answer and tool-call arguments) streamed so far. */
  readonly bytes: number
  /** Whether the API said the answer is over. */
  readonly finished: boolean
  /** The closing `Completed` event, or why the whole answer cannot be used. */
  complete(): ModelEvent | GenerationError
}

/** How an answer is read. */
export interface Reading {
  /** A fresh reader of this API's events, for one answer. */
  readonly begin: () => AnswerReader
  readonly maxAnswerBytes: number
  /** The secrets the answer's text is redacted of as it streams. */
  readonly secrets: SecretRegistry
  readonly watchdogSeconds: number
  readonly watchdogMs: number
  /** Run once the answer is whole (the client's own follow-up, after the `Completed` event). */
  readonly afterAnswer: Effect.Effect<void>
  /** Whether the event with this data ends the stream (chat's `[DONE]`); by default none does. */
  readonly isLast?: (data: string) => boolean
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
      const completion = reading.begin()
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

/** The body's SSE events up to the last one, each byte awaited no longer than the watchdog allows. */
const sseEvents = (response: HttpClientResponse.HttpClientResponse, reading: Reading) => {
  const events = response.stream.pipe(
    Stream.timeoutFail(() => watchdogError(reading.watchdogSeconds), reading.watchdogMs),
    Stream.decodeText(),
    Stream.mapChunks(oneLinePerPiece),
    Stream.pipeThroughChannel(Sse.makeChannel())
  )
  const isLast = reading.isLast
  return isLast === undefined ? events : Stream.takeUntil(events, (event) => isLast(event.data))
}

/** One streamed answer being read: its reader and the redactors of its text and reasoning. */
interface Streamed {
  readonly completion: AnswerReader
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
    const progress = completion.takeProgress?.()
    if (progress !== undefined) out.push({ _tag: "PromptProgress", ...progress })
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
    if (!completion.finished) return Stream.fail(streamCut("the stream ended before the answer said it was over"))
    const heldText = completion.endContent()
    const done = completion.complete()
    if (done instanceof GenerationError) return Stream.fail(done)
    const thought = thoughtRedactor.push(completion.takeReasoning()) + thoughtRedactor.flush()
    const rest = redactor.push(heldText) + redactor.flush()
    return ending(thought, rest, done, afterAnswer)
  })

/** The usual answer: `text/event-stream` of the API's events. */
export const streamedAnswer = (
  response: HttpClientResponse.HttpClientResponse,
  reading: Reading
): Stream.Stream<ModelEvent, GenerationError> =>
  Stream.suspend(() => {
    const streamed: Streamed = {
      completion: reading.begin(),
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
