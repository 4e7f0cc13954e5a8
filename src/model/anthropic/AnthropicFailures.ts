/**
 * The Anthropic API's refusals in one line each. Its error body is
 * `{"type":"error","error":{"type":"overloaded_error","message":"…"}}`; a busy API (429 with
 * `retry-after`, 529 overloaded, a gateway's 502–504) is asked again, a prompt over the
 * model's window becomes mm's context overflow (the turn compacts and asks again).
 */
import type { GenerationError } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { squashed } from "../../lib/OneLine"
import { contextOverflow, fail, overflowLine } from "../Failures"
import { Busy, busyIfRetried, retryAfterMs } from "../Retry"

const SAID_MAX = 200

/** The error's kind and words, from the body (`error.type`, `error.message`), or the body itself. */
export const errorWords = (body: string): { readonly kind: string | undefined; readonly said: string } => {
  try {
    const parsed: unknown = JSON.parse(body)
    const error = isRecord(parsed) ? parsed.error : undefined
    if (isRecord(error)) {
      return {
        kind: typeof error.type === "string" ? error.type : undefined,
        said: typeof error.message === "string" ? squashed(error.message, SAID_MAX) : ""
      }
    }
  } catch {
    // not JSON: the text, squashed
  }
  return { kind: undefined, said: squashed(body.replace(/<[^<>]*>/g, " "), SAID_MAX) }
}

interface Context {
  readonly baseUrl: string
  readonly model: string
  readonly apiKeyEnv: string | undefined
}

export interface Refusal {
  readonly status: number
  readonly body: string
  readonly retryAfter: string | undefined
}

/** The line's tail: the kind and words of the error. */
const saying = (kind: string | undefined, said: string): string =>
  said === "" ? (kind === undefined ? "" : `: ${kind}`) : `: ${said}`

/** A refusal of `POST {url}/messages`, as one line, or `Busy` when it is worth asking again. */
export const refusal = (context: Context, answer: Refusal): GenerationError | Busy => {
  const { status, body } = answer
  const { kind, said } = errorWords(body)
  const raw = `HTTP ${status} from ${context.baseUrl}/messages: ${body}`
  const overflow = status === 400 || status === 413 ? contextOverflow(body) : undefined
  if (overflow?.prompt !== undefined) {
    return fail(
      "context-overflow",
      overflowLine(overflow, "model"),
      raw
    )
  }
  if (status === 529 || kind === "overloaded_error") {
    const error = fail("http", `the Anthropic API is overloaded (HTTP ${status})${saying(kind, said)}`, raw)
    return new Busy(error, `API overloaded (${status})`, retryAfterMs(answer.retryAfter))
  }
  if (status === 401 || status === 403) {
    const fix = context.apiKeyEnv === undefined
      ? "set model.apiKeyEnv to the variable holding your Anthropic key"
      : `check the key in $${context.apiKeyEnv} (model.apiKeyEnv)`
    return fail("http", `the Anthropic API refused the key (HTTP ${status}${saying(kind, said)}) — ${fix}`, raw)
  }
  if (status === 404 || kind === "not_found_error") {
    return fail(
      "model-not-found",
      `model "${context.model}" is not available on ${context.baseUrl}${saying(kind, said)} — check model.name${
        status === 404 && kind === undefined ? ", and that model.url is the API base (ending in /v1)" : ""
      }`,
      raw
    )
  }
  const hint = status >= 500 ? " — try again later" : ""
  const error = fail("http", `the Anthropic API answered HTTP ${status}${saying(kind, said)}${hint}`, raw)
  return busyIfRetried(error, status, () => answer.retryAfter)
}

/** An `error` event in the middle of an answer. */
export const midAnswerError = (data: string): GenerationError => {
  const { kind, said } = errorWords(data)
  return fail(
    "http",
    `the Anthropic API reported an error mid-answer${kind === undefined ? "" : ` (${kind})`}: ${
      said === "" ? "(no message)" : said
    }`,
    data
  )
}
