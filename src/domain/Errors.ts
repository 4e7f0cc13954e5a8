import * as Schema from "effect/Schema"

/**
 * Every failure a person can meet carries `message`: one line, fit to be shown as is,
 * and `raw`: the underlying detail, kept for the record (the session's `errors`).
 */

export const GenerationReason = Schema.Literal(
  "unreachable",
  "model-not-found",
  "http",
  "stream-cut",
  "watchdog",
  "malformed",
  "max-steps",
  "too-large",
  /** The request is larger than the server's context window (`exceed_context_size_error`). */
  "context-overflow",
  /** The answer was cut by `finish_reason: length` in the middle of a tool call. */
  "output-limit"
)
export type GenerationReason = typeof GenerationReason.Type

export class GenerationError extends Schema.TaggedError<GenerationError>()("GenerationError", {
  reason: GenerationReason,
  message: Schema.String,
  raw: Schema.String
}) {}

export class CompactionError extends Schema.TaggedError<CompactionError>()("CompactionError", {
  reason: Schema.Literal("empty", "generation", "nothing-to-compact"),
  message: Schema.String,
  raw: Schema.String
}) {}

export class ResumeError extends Schema.TaggedError<ResumeError>()("ResumeError", {
  reason: Schema.Literal(
    "bad-id",
    "not-found",
    "ambiguous",
    "unreadable",
    "newer-version",
    "no-session",
    "disabled",
    "other-project",
    /** Another mm is answering the session's turn now. */
    "live"
  ),
  message: Schema.String,
  raw: Schema.String
}) {}

/** `/fork`, `/rewind`, `--fork`, `session/fork` could not start a fork: one line for people. */
export class ForkError extends Schema.TaggedError<ForkError>()("ForkError", {
  reason: Schema.Literal("bad-turn", "nothing", "store"),
  message: Schema.String,
  raw: Schema.String
}) {}

/** `mm sessions search`, `/sessions search`: nothing was searched (bad pattern, sessions off) or the listing failed. */
export class SearchError extends Schema.TaggedError<SearchError>()("SearchError", {
  reason: Schema.Literal("bad-pattern", "disabled", "io"),
  message: Schema.String,
  raw: Schema.String
}) {}

export class BadSessionId extends Schema.TaggedError<BadSessionId>()("BadSessionId", {
  id: Schema.String,
  message: Schema.String
}) {}

/** A failure of the session store: the file system said no, or a file is not a session. */
export class StoreError extends Schema.TaggedError<StoreError>()("StoreError", {
  reason: Schema.Literal("bad-id", "not-found", "exists", "unreadable", "newer-version", "conflict", "io"),
  id: Schema.optional(Schema.String),
  message: Schema.String,
  raw: Schema.String
}) {}

export class ConfigError extends Schema.TaggedError<ConfigError>()("ConfigError", {
  message: Schema.String
}) {}

/** The raw text of any thrown value or cause, on one line when it can be. */
export const rawText = (cause: unknown): string => {
  if (cause instanceof Error) {
    const code = (cause as { code?: unknown }).code
    return code !== undefined && !cause.message.includes(String(code))
      ? `${String(code)}: ${cause.message}`
      : cause.message
  }
  if (typeof cause === "string") return cause
  try {
    return JSON.stringify(cause) ?? String(cause)
  } catch {
    return String(cause)
  }
}
