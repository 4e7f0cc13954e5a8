/**
 * Every way a model call fails, classified and worded: one line for the person, the raw
 * detail (clipped) for the session's `errors[].raw`. The client redacts both as they leave it
 * (`redactedError`), with the secrets it knows.
 */
import type * as HttpClientError from "@effect/platform/HttpClientError"

import { GenerationError, type GenerationReason, rawText } from "../domain/Errors"
import { isRecord } from "../lib/Guards"
import { squashed } from "../lib/OneLine"
import { modelNames, portOf } from "./ServerWords"

const SERVER_MESSAGE_MAX = 200
/** How much of a bad chunk or bad arguments a message shows. */
export const CHUNK_SHOWN_MAX = 80

/** How much of an HTTP error body is read; the rest is never received. */
export const ERROR_BODY_READ_MAX = 64 * 1024
/** How much of any raw detail a failure keeps (it goes into the session's `errors[].raw`). */
const RAW_KEPT_MAX = 4096

/** `text` within `max` UTF-8 bytes, its end replaced by a marker when cut. */
const clipRaw = (text: string, max: number = RAW_KEPT_MAX): string => {
  if (text.length <= max / 4 || Buffer.byteLength(text) <= max) return text
  const marker = (cut: number) => ` … [${cut} bytes cut]`
  const total = Buffer.byteLength(text)
  let kept = Buffer.from(text.slice(0, max)).subarray(0, max - Buffer.byteLength(marker(total))).toString("utf8")
  // a character cut in two is dropped whole
  if (kept.endsWith("\ufffd")) kept = kept.slice(0, -1)
  return kept + marker(total - Buffer.byteLength(kept))
}

/** How much raw detail a failure holds until it is redacted and clipped to RAW_KEPT_MAX. */
const RAW_HELD_MAX = 64 * 1024

/** Every failure of a model call, on one line. */
export const fail = (reason: GenerationReason, message: string, raw: string): GenerationError =>
  new GenerationError({ reason, message: message.replace(/[\r\n]+/g, " "), raw: clipRaw(raw, RAW_HELD_MAX) })

/** A failure as it leaves the client: a server that echoes the key shows `[redacted]` instead. */
export const redactedError = (redact: (text: string) => string) => (error: GenerationError): GenerationError =>
  new GenerationError({ reason: error.reason, message: redact(error.message), raw: clipRaw(redact(error.raw)) })

export const tooLargeError = (maxBytes: number): GenerationError =>
  fail(
    "too-large",
    `the answer passed model.maxAnswerBytes (${maxBytes} bytes) — the turn was given up`,
    `more than ${maxBytes} bytes of answer text streamed in one model call`
  )

const seconds = (s: number): string => (Number.isInteger(s) ? String(s) : String(Math.round(s * 1000) / 1000))

export const watchdogError = (timeoutSeconds: number): GenerationError =>
  fail(
    "watchdog",
    `no token from the model for ${
      seconds(timeoutSeconds)
    } s (watchdogTimeout) — the turn was given up; if the model is slow to load, raise watchdogTimeout in agent.yaml`,
    `watchdog: no byte received for ${timeoutSeconds} s`
  )

export const streamCut = (raw: string): GenerationError =>
  fail(
    "stream-cut",
    "the model server closed the stream before the answer was complete — check the server's log, then ask again",
    raw
  )

/** An SSE event past the parser's limit. */
export const eventTooLarge = (raw: string): GenerationError =>
  fail("malformed", "the model server sent an event too large to read", raw)

/** `model.headers` names variables that are not set (`variables` say which header wanted each). */
export const unsetHeaderVariables = (variables: ReadonlyArray<string>): GenerationError =>
  fail(
    "http",
    `agent.yaml names the environment variable ${variables[0]}, but it is not set — export it before starting mm`,
    `unset environment variables: ${variables.join(", ")}`
  )

/** `model.apiKeyEnv` names a variable that is unset or empty. */
export const unsetApiKey = (apiKeyEnv: string): GenerationError =>
  fail(
    "http",
    `model.apiKeyEnv names ${apiKeyEnv}, but that environment variable is not set — export it before starting mm`,
    `environment variable ${apiKeyEnv} is unset or empty`
  )

/** Said at start, before any request: `model.apiKeyEnv` names a variable that is unset or empty. */
export const missingKeyWarning = (apiKeyEnv: string | undefined, env: NodeJS.ProcessEnv): string | undefined =>
  apiKeyEnv === undefined || (env[apiKeyEnv]?.trim() ?? "") !== ""
    ? undefined
    : `model.apiKeyEnv names ${apiKeyEnv}, which is not set — set ${apiKeyEnv} (export ${apiKeyEnv}=…) and start mm again`

// ---------------------------------------------------------------------------------------
// Classifying failures

/** The system error code (`ECONNREFUSED`…) somewhere in a failure's chain of causes. */
export const errorCode = (cause: unknown): string | undefined => {
  for (let current = cause, depth = 0; isRecord(current) && depth < 5; depth++) {
    const record = current
    if (typeof record.code === "string") return record.code
    const nested = Array.isArray(record.errors) ? record.errors[0] : undefined
    if (nested !== undefined && isRecord(nested) && typeof nested.code === "string") return nested.code
    current = record.cause
  }
  return undefined
}

const connectionTrouble: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset before any answer",
  UND_ERR_SOCKET: "connection reset before any answer",
  EPIPE: "connection reset before any answer",
  ENOTFOUND: "host not found",
  EAI_AGAIN: "host not found",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
  ETIMEDOUT: "connection timed out",
  ECONNABORTED: "connection aborted",
  CERT_HAS_EXPIRED: "TLS certificate expired",
  DEPTH_ZERO_SELF_SIGNED_CERT: "self-signed TLS certificate",
  UNABLE_TO_VERIFY_LEAF_SIGNATURE: "TLS certificate not trusted",
  ERR_SSL_WRONG_VERSION_NUMBER: "TLS spoken to a plain HTTP server",
  EPROTO: "TLS handshake failed"
}

const startHint = (url: string): string => {
  switch (portOf(url)) {
    case "11434":
      return " (e.g. `ollama serve`)"
    case "8080":
      return " (e.g. `llama-server -m MODEL.gguf --jinja`)"
    case "8000":
      return " (e.g. `vllm serve MODEL`)"
    case "1234":
      return " (e.g. `lms server start`)"
    default:
      return ""
  }
}

/** A failure before any byte of the answer: the server is not there, or not answering. */
export const transportError = (baseUrl: string, error: HttpClientError.RequestError): GenerationError => {
  const raw = `${error.request.method} ${error.request.url}: ${rawText(error.cause ?? error)}`
  if (error.reason === "InvalidUrl") {
    return fail("unreachable", `model.url is not a valid URL: ${JSON.stringify(baseUrl)}`, raw)
  }
  const code = errorCode(error.cause)
  const why = code === undefined ? squashed(rawText(error.cause ?? error), 80) : connectionTrouble[code] ?? code
  return fail(
    "unreachable",
    `cannot reach the model server at ${baseUrl} (${why}) — is it running?${startHint(baseUrl)}`,
    raw
  )
}

/** The human part of an error body: `{error: {message}}`, `{error}`, `{message}`, `{detail}` or the text itself. */
export const serverMessage = (body: string): string => {
  let parsed: unknown
  try {
    parsed = JSON.parse(body)
  } catch {
    // a body cut short (see ERROR_BODY_READ_MAX) may still name its message near the start
    const message = /^\s*\{\s*"error"\s*:\s*\{\s*"message"\s*:\s*("(?:[^"\\]|\\.)*")/.exec(body)
    if (message !== null) {
      try {
        return squashed(JSON.parse(message[1]) as string, SERVER_MESSAGE_MAX)
      } catch {
        // not a JSON string after all
      }
    }
    // `[^<>]`, not `[^>]`: a tag is tried from each `<`, and a run of `<` without `>` made that quadratic
    return squashed(body.replace(/<[^<>]*>/g, " "), SERVER_MESSAGE_MAX)
  }
  if (isRecord(parsed)) {
    const error = parsed.error
    if (isRecord(error) && typeof error.message === "string") return squashed(error.message, SERVER_MESSAGE_MAX)
    if (typeof error === "string") return squashed(error, SERVER_MESSAGE_MAX)
    if (typeof parsed.message === "string") return squashed(parsed.message, SERVER_MESSAGE_MAX)
    if (typeof parsed.detail === "string") return squashed(parsed.detail, SERVER_MESSAGE_MAX)
  }
  return squashed(body, SERVER_MESSAGE_MAX)
}

const MISSING_AFTER_MODEL =
  /^model\b.*\b(not found|does not exist|doesn't exist|not exist|is not available|not available|unknown|no such)\b/i

/**
 * Whether a server's words say the model is missing: `model_not_found`, `try pulling it`, or
 * "model" then "not found" (or the like) later on the same line. Each line is tried once, from
 * its first "model": `\bmodel\b.*\b(not found|…)` over the whole body backtracks from every
 * "model" to the end of its line, quadratic in a line of them.
 */
const saysModelMissing = (text: string): boolean => {
  if (/model_not_found|try pulling it/i.test(text)) return true
  const word = /\bmodel\b/gi
  const lineBreak = /[\n\r\u2028\u2029]/g
  for (let found = word.exec(text); found !== null; found = word.exec(text)) {
    lineBreak.lastIndex = found.index
    const end = lineBreak.exec(text)?.index ?? text.length
    if (MISSING_AFTER_MODEL.test(text.slice(found.index, end))) return true
    word.lastIndex = end
  }
  return false
}

export const looksLikeOllama = (baseUrl: string, serverHeader: string | undefined, body: string): boolean =>
  portOf(baseUrl) === "11434" ||
  (serverHeader !== undefined && /ollama/i.test(serverHeader)) ||
  /try pulling it|ollama/i.test(body)

interface HttpAnswer {
  readonly status: number
  readonly body: string
  readonly serverHeader: string | undefined
}

/** `4858` → `4,858`. */
export const tokensFigure = (n: number): string => n.toLocaleString("en-US")

/** A request over the server's window, as the server said it: the request's tokens (when said) and the window. */
export interface Overflow {
  readonly prompt: number | undefined
  readonly window: number
}

const numberAfter = (text: string, field: string): number | undefined => {
  const found = new RegExp(`"${field}"\\s*:\\s*(\\d+)`).exec(text)
  return found === null ? undefined : Number(found[1])
}

/**
 * The overflow an error body (or a failure's raw detail holding it) reports: llama.cpp's
 * `exceed_context_size_error` with `n_prompt_tokens` and `n_ctx`, or the sentence of vLLM and
 * OpenAI (`maximum context length is 4096 tokens … 4858 tokens`); undefined otherwise.
 */
export const contextOverflow = (text: string): Overflow | undefined => {
  if (/exceed_context_size_error/.test(text)) {
    const window = numberAfter(text, "n_ctx")
    if (window !== undefined) return { prompt: numberAfter(text, "n_prompt_tokens"), window }
  }
  const sentence = /maximum context length is (\d+) tokens?\b[^\d]*(?:(\d+) (?:input )?tokens?)?/i.exec(text)
  if (sentence !== null) {
    return { prompt: sentence[2] === undefined ? undefined : Number(sentence[2]), window: Number(sentence[1]) }
  }
  // Anthropic's words: `prompt is too long: 215000 tokens > 200000 maximum`
  const anthropic = /prompt is too long:\s*(\d+)\s*tokens?\s*>\s*(\d+)/i.exec(text)
  if (anthropic !== null) return { prompt: Number(anthropic[1]), window: Number(anthropic[2]) }
  // and when the answer's room does not fit beside the prompt: `input length and `max_tokens`
  // exceed context limit: 188240 + 24576 > 200000` (the prompt may hold what the answer leaves)
  const withRoom = /exceed context limit:\s*(\d+)\s*\+\s*(\d+)\s*>\s*(\d+)/i.exec(text)
  return withRoom === null
    ? undefined
    : { prompt: Number(withRoom[1]), window: Math.max(1, Number(withRoom[3]) - Number(withRoom[2])) }
}

/**
 * The one line for a request over the window, with the figures it has; `whose` window it is:
 * a local server's, or a hosted API's model's.
 */
export const overflowLine = (
  overflow: { readonly prompt?: number | undefined; readonly window?: number | undefined },
  whose: "server" | "model" = "server"
): string =>
  overflow.window === undefined
    ? `the request is larger than the ${whose}'s window`
    : overflow.prompt === undefined
    ? `the request is larger than the ${whose}'s window of ${tokensFigure(overflow.window)} tokens`
    : `the request is ${tokensFigure(overflow.prompt)} tokens; the ${whose}'s window is ${
      tokensFigure(overflow.window)
    }`

/** A server that answered something other than the OpenAI protocol (a web page, plain text). */
export const notOpenAiLine = (baseUrl: string, contentType: string): string =>
  `${baseUrl} does not look like an OpenAI-compatible server (got ${
    contentType.split(";")[0].trim() || "a body that is not JSON"
  }) — check model.url (usually the API base, often ending in /v1)`

/**
 * Whether an answer is that of something other than an OpenAI-compatible server: a web page,
 * or a success that is not JSON. (A refusal in plain text is a server's refusal all the same.)
 */
export const looksNotOpenAi = (status: number, contentType: string, body: string): boolean => {
  if (/html/i.test(contentType) || /^\s*<(!doctype|html|head|body)\b/i.test(body)) return true
  if (status >= 300 || /json|event-stream/i.test(contentType) || body.trim() === "") return false
  try {
    JSON.parse(body)
    return false
  } catch {
    return true
  }
}

/** An HTTP 4xx/5xx turned into one line, telling a missing model from other refusals. */
export const httpError = (
  context: { readonly baseUrl: string; readonly model: string; readonly apiKeyEnv: string | undefined },
  answer: HttpAnswer
): GenerationError => {
  const { baseUrl, model } = context
  const said = serverMessage(answer.body)
  const raw = `HTTP ${answer.status} from ${baseUrl}/chat/completions: ${answer.body}`
  const overflow = answer.status === 400 || answer.status === 413 ? contextOverflow(answer.body) : undefined
  if (overflow !== undefined) return fail("context-overflow", overflowLine(overflow), raw)
  const modelMissing = saysModelMissing(said) || saysModelMissing(answer.body)
  if (answer.status === 404 || modelMissing) {
    const ollama = looksLikeOllama(baseUrl, answer.serverHeader, answer.body)
    const head = `model "${model}" is not available on ${baseUrl}`
    if (modelMissing) {
      return fail(
        "model-not-found",
        ollama ? `${head} — run \`ollama pull ${model}\`` : `${head} (${said}) — check model.name`,
        raw
      )
    }
    const detail = said === "" ? "HTTP 404" : `HTTP 404: ${said}`
    return fail(
      "model-not-found",
      `${head} (${detail}) — check model.name, and that model.url is the API base (often ending in /v1)`,
      raw
    )
  }
  const hint = answer.status === 401 || answer.status === 403
    ? context.apiKeyEnv === undefined
      ? " — does this server need a key? set model.apiKeyEnv to the variable holding it"
      : ` — check the key in $${context.apiKeyEnv}`
    : answer.status >= 500
    ? " — check the server's log"
    : ""
  return fail("http", `model server answered HTTP ${answer.status}${said === "" ? "" : `: ${said}`}${hint}`, raw)
}

/** Whether a refusal may be a missing model that the server's `/models` list can explain. */
export const maybeMissingModel = (error: GenerationError): boolean =>
  error.reason === "model-not-found" || /^model server answered HTTP (400|404|422)\b/.test(error.message)

/** A refusal from a server whose list lacks the model, said with the models it has. */
export const listedWithoutModel = (
  context: { readonly baseUrl: string; readonly model: string },
  models: ReadonlyArray<string>,
  error: GenerationError,
  ollama: boolean
): GenerationError =>
  new GenerationError({
    reason: "model-not-found",
    message: `model "${context.model}" is not available on ${context.baseUrl} — available: ${modelNames(models)}${
      ollama ? ` — or run \`ollama pull ${context.model}\`` : " — check model.name"
    }`,
    raw: error.raw
  })

/** The last attempt's failure, with every earlier attempt's raw detail before its own. */
export const afterAttempts = (
  error: GenerationError,
  attempt: number,
  earlier: ReadonlyArray<string>
): GenerationError =>
  earlier.length === 0
    ? error
    : new GenerationError({
      reason: error.reason,
      message: error.message,
      raw: [...earlier, `attempt ${attempt}: ${error.raw}`].join("\n")
    })
