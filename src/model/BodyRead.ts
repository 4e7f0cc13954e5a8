/** A server's body read up to a cap: what a server sends is never read whole into memory unbounded. */
import type * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"

/**
 * At most `max` bytes of a body, as text; the rest is never read (the connection is
 * dropped). `whole` says whether that was the entire body.
 */
export const readCapped = (
  response: HttpClientResponse.HttpClientResponse,
  max: number
): Effect.Effect<{ readonly text: string; readonly whole: boolean }, HttpClientError.ResponseError> =>
  response.stream.pipe(
    Stream.runFoldWhile(
      { chunks: [] as Array<Uint8Array>, size: 0 },
      (acc) => acc.size <= max,
      (acc, chunk) => {
        acc.chunks.push(chunk)
        acc.size += chunk.byteLength
        return acc
      }
    ),
    Effect.map(({ chunks, size }) => ({
      text: Buffer.concat(chunks).subarray(0, max).toString("utf8"),
      whole: size <= max
    }))
  )

/** What a server may say of itself (a model list, `/props`, `/api/show`): far more than any real answer. */
export const PROBE_BODY_MAX = 8 * 1024 * 1024

/** A body about the server, as text: empty when larger than PROBE_BODY_MAX (it is then no answer). */
export const probeBody = (
  response: HttpClientResponse.HttpClientResponse
): Effect.Effect<string, HttpClientError.ResponseError> =>
  Effect.map(readCapped(response, PROBE_BODY_MAX), ({ text, whole }) => (whole ? text : ""))
