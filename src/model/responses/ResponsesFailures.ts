/**
 * The Responses API's refusals in mm's words: its error body `{"error": {message, type, code}}`
 * before the answer, or an `error` / `response.failed` event during it. A request over the
 * model's window (`context_length_exceeded`) is mm's context overflow, which the turn compacts
 * and asks again.
 */
import type { GenerationError } from "../../domain/Errors"
import { isRecord } from "../../lib/Guards"
import { squashed } from "../../lib/OneLine"
import { contextOverflow, fail, overflowLine } from "../Failures"
import { Busy, retryAfterMs } from "../Retry"

const MESSAGE_MAX = 200

/** What an error object (`{message, type, code}`) says. */
interface Said {
  readonly message: string
  readonly code: string
  readonly type: string
  /** The request's field the error is about (`include`, `reasoning.effort`…). */
  readonly param: string
}

const saidBy = (error: unknown): Said => {
  if (!isRecord(error)) return { message: "", code: "", type: "", param: "" }
  const field = (name: string) => (typeof error[name] === "string" ? error[name] as string : "")
  return {
    message: squashed(field("message"), MESSAGE_MAX),
    code: field("code"),
    type: field("type"),
    param: field("param")
  }
}

/** The `error` object of an error body; an empty one when the body is not that shape. */
const saidIn = (body: string): Said => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (isRecord(parsed)) return saidBy(isRecord(parsed.error) ? parsed.error : parsed)
  } catch {
    // not JSON: its text is the message
  }
  return { message: squashed(body.replace(/<[^<>]*>/g, " "), MESSAGE_MAX), code: "", type: "", param: "" }
}

/**
 * Whether a refusal is of the reasoning mm asked for (`reasoning`, or `include` of the
 * encrypted reasoning): a model without reasoning (gpt-4.1, gpt-4o) refuses both.
 */
export const refusesReasoning = (status: number, body: string): boolean => {
  if (status !== 400) return false
  const said = saidIn(body)
  return /^(include|reasoning)\b/.test(said.param) ||
    (/^unsupported_(parameter|value)$/.test(said.code) && /reasoning|encrypted content/i.test(said.message))
}

const isOverflow = (said: Said, raw: string): boolean =>
  said.code === "context_length_exceeded" || contextOverflow(raw) !== undefined

/** The line for a request over the model's window, with the figures when the server gave them. */
const overflowFailure = (raw: string, window: number): GenerationError => {
  const figures = contextOverflow(raw)
  return fail(
    "context-overflow",
    overflowLine({ prompt: figures?.prompt, window: figures?.window ?? window }, "model"),
    raw
  )
}

/** What the client knows when it words a refusal. */
export interface Asked {
  readonly url: string
  readonly model: string
  readonly apiKeyEnv: string | undefined
  /** The window in force, said when the server does not say its own. */
  readonly window: number
}

/**
 * An HTTP refusal of the request: `Busy` when it is worth asking again (429 that is not an
 * exhausted quota, 500, 502, 503, 504; waiting `retry-after` when the server said it), else one line.
 */
export const refusal = (
  asked: Asked,
  status: number,
  body: string,
  retryAfter: string | undefined
): GenerationError | Busy => {
  const said = saidIn(body)
  const raw = `HTTP ${status} from ${asked.url}/responses: ${body}`
  const words = said.message === "" ? `HTTP ${status}` : `HTTP ${status}: ${said.message}`
  if (status === 400 && isOverflow(said, body)) return overflowFailure(raw, asked.window)
  if (status === 404 || said.code === "model_not_found") {
    return fail(
      "model-not-found",
      `model "${asked.model}" is not available at ${asked.url} (${words}) — check model.name`,
      raw
    )
  }
  if (status === 401) {
    const key = asked.apiKeyEnv === undefined
      ? "model.apiKeyEnv is not set — set it to the variable holding your OpenAI key"
      : `check the key in $${asked.apiKeyEnv} (model.apiKeyEnv)`
    return fail("http", `the Responses API refused the key (${words}) — ${key}`, raw)
  }
  if (status === 403) {
    return fail(
      "http",
      `the Responses API refused the request (${words}) — check that the key's project may use model "${asked.model}"`,
      raw
    )
  }
  if (status === 429 && (said.code === "insufficient_quota" || said.type === "insufficient_quota")) {
    return fail("http", `the Responses API says the account's quota is used up (${words}) — check its billing`, raw)
  }
  const error = fail("http", `the Responses API answered ${words}${status >= 500 ? " — try again later" : ""}`, raw)
  return status === 429 || status === 500 || status === 502 || status === 503 || status === 504
    ? new Busy(error, status === 429 ? "rate limited (429)" : `server busy (${status})`, retryAfterMs(retryAfter))
    : error
}

/**
 * An `error` event, or `response.failed`, in the middle of an answer: one line with what the
 * server said; an overflow is mm's context overflow (the window is the one in force, read by
 * the turn).
 */
export const eventFailure = (event: Record<string, unknown>, data: string): GenerationError => {
  const response = event.response
  const said = event.type === "response.failed" && isRecord(response)
    ? saidBy(response.error)
    : saidBy(isRecord(event.error) ? event.error : event)
  if (isOverflow(said, data)) {
    // mid-answer, the window alone is said, as it was counted before the answer began
    return fail("context-overflow", overflowLine({ window: contextOverflow(data)?.window }, "model"), data)
  }
  const what = event.type === "response.failed" ? "the answer failed" : "the model server reported an error mid-answer"
  return fail("http", `${what}: ${said.message === "" ? said.code || "(no message)" : said.message}`, data)
}
