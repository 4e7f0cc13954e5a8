/**
 * The first step of every API's reading of one streamed event: its data parsed as a JSON
 * object, or the failure that says it is not one. What the object means is each API's own.
 */
import { type GenerationError, rawText } from "../domain/Errors"
import { isRecord } from "../lib/Guards"
import { squashed } from "../lib/OneLine"
import { CHUNK_SHOWN_MAX, fail } from "./Failures"

/**
 * One event's data as an object. `sent` begins the line of a failure, naming who sent what
 * ("the model server sent a chunk"). Plain `JSON.parse` and narrowing: this runs once per token.
 */
export const eventObject = (data: string, sent: string): Record<string, unknown> | GenerationError => {
  let event: unknown
  try {
    event = JSON.parse(data)
  } catch (cause) {
    return fail(
      "malformed",
      `${sent} that is not JSON: ${squashed(data, CHUNK_SHOWN_MAX)}`,
      `${rawText(cause)} in data: ${data}`
    )
  }
  return isRecord(event)
    ? event
    : fail("malformed", `${sent} that is not an object: ${squashed(data, CHUNK_SHOWN_MAX)}`, data)
}
