/**
 * Why an answer stopped short (`finish_reason: length`): the model's output limit, or the
 * context window filling up. The server says which through its usage figures: an answer whose
 * prompt and completion together reach the window stopped because the window was full.
 */
import type { Usage } from "./ModelClient"

type CutBy = "context" | "output"

/** Tokens of slack: a server stops a few tokens before the window is exactly full. */
const SLACK = 16

export const cutBy = (usage: Usage | undefined, window: number): CutBy =>
  usage !== undefined && usage.promptTokens + usage.completionTokens >= window - SLACK ? "context" : "output"

const raise = (maxTokens: number | undefined): string =>
  maxTokens === undefined
    ? "set model.maxTokens higher (the server's own output limit applies now)"
    : `raise model.maxTokens (now ${maxTokens})`

const FULL_FIX = "/compact, or start the server with a larger context window"

/** The line for an answer cut short. */
export const lengthNotice = (by: CutBy, maxTokens: number | undefined): string =>
  by === "context"
    ? `the answer was cut because the context window filled up (finish_reason: length) — ${FULL_FIX}`
    : `the answer was cut at the model's output limit (finish_reason: length) — ${raise(maxTokens)}`

/** The line for a tool call cut short, its arguments incomplete. */
export const cutCallLine = (by: CutBy, tool: string, maxTokens: number | undefined): string =>
  by === "context"
    ? `the context window filled up while the model wrote tool call "${tool}" (finish_reason: length) — ${FULL_FIX}`
    : `the model's output limit cut tool call "${tool}" before its arguments were complete (finish_reason: length) — ${
      raise(maxTokens)
    }`
