/**
 * Whether a request fits the server's window, and the one line that says why when it does not:
 * mm's own system prompt and tools, the question alone, this turn's tool results, or the
 * conversation. Shares are estimated from characters and, once the server has counted the
 * request (an overflow says `n_prompt_tokens`), scaled to its count.
 */
import * as Effect from "effect/Effect"

import type { Message } from "../domain/Session"
import { tokensFigure } from "../model/Failures"
import type { ModelApi, ToolSpec } from "../model/ModelClient"
import { specOf } from "../tools/Registry"
import { estimateTokens } from "./Compactor"
import type { Deps, Emit } from "./Deps"
import type { TurnState } from "./TurnState"

/** Tokens kept free for a question and its answer: below this, a window is too small to work in. */
export const ANSWER_ROOM = 1024

/** What gives more room: a local server started larger, or a hosted API's larger model. */
const larger = (api: ModelApi): string =>
  api === "chat" ? "a larger window (llama-server -c)" : "a model with a larger window"

/** The advice to grow the window, as its own clause (`server`: how the server is named in it). */
const grow = (api: ModelApi, server = "the server"): string =>
  api === "chat" ? `start ${server} with ${larger(api)}` : `use ${larger(api)}`

/** The tool specs as the request carries them (`{type: "function", function: …}`), estimated. */
export const toolTokens = (tools: ReadonlyArray<ToolSpec>): number =>
  tools.length === 0
    ? 0
    : Math.ceil(JSON.stringify(tools.map((tool) => ({ type: "function", function: tool }))).length / 4)

/** What goes before every conversation: the system prompt and the tool specs, estimated. */
export const fixedTokens = (system: string, tools: ReadonlyArray<ToolSpec>): number =>
  estimateTokens([{ content: system }]) + toolTokens(tools)

/** A request's parts, in tokens (not rounded: they add up to `total`); `total` the server's count when it gave one. */
export interface Shares {
  readonly fixed: number
  readonly history: number
  readonly question: number
  /** This turn's messages after the question: its tool calls and their results. */
  readonly turn: number
  readonly total: number
  /** Server tokens per estimated token (1 when the server did not count). */
  readonly scale: number
  /** Whether `total` is the server's count (else an estimate). */
  readonly counted: boolean
}

/**
 * The shares of a request of `base` (system prompt first) and `added` (the question first),
 * scaled so that they add up to `counted` when the server said how many tokens it was.
 */
export const sharesOf = (
  base: ReadonlyArray<Message>,
  added: ReadonlyArray<Message>,
  tools: ReadonlyArray<ToolSpec>,
  counted: number | undefined
): Shares => {
  const system = base[0]?.role === "system" ? base[0].content ?? "" : ""
  const raw = {
    fixed: fixedTokens(system, tools),
    history: estimateTokens(base[0]?.role === "system" ? base.slice(1) : base),
    question: estimateTokens(added.slice(0, 1)),
    turn: estimateTokens(added.slice(1))
  }
  const sum = raw.fixed + raw.history + raw.question + raw.turn
  const scale = counted === undefined || sum === 0 ? 1 : counted / sum
  return {
    fixed: raw.fixed * scale,
    history: raw.history * scale,
    question: raw.question * scale,
    turn: raw.turn * scale,
    total: counted ?? sum,
    scale,
    counted: counted !== undefined
  }
}

/** Whether the question does not fit even alone, with mm's system prompt and tools: compaction cannot help. */
export const questionAloneOver = (shares: Shares, window: number): boolean =>
  shares.fixed >= window || shares.fixed + shares.question > window

const about = (n: number): string => `about ${tokensFigure(Math.round(n))}`

/**
 * The one line for a request that does not fit `window`, naming what is too large: mm's own
 * system prompt and tools, the question alone, this turn's tool results, else the conversation.
 */
export const overflowLine = (shares: Shares, window: number, api: ModelApi = "chat"): string => {
  const server = `the server takes ${tokensFigure(window)}`
  if (shares.fixed >= window) {
    return `mm's own system prompt and tools are ${about(shares.fixed)} tokens; ${server} — ${grow(api, "it")}`
  }
  if (questionAloneOver(shares, window)) {
    const withOwn = shares.fixed + shares.question
    // the server's own count when the question was all the request held besides mm's own
    const figure = shares.counted && Math.abs(withOwn - shares.total) < 0.5
      ? tokensFigure(shares.total)
      : about(withOwn)
    const alone = `the question alone is ${about(shares.question)} tokens (${figure} with mm's system prompt and tools)`
    return `${alone}; ${server} — shorten it, or ${larger(api)}`
  }
  if (shares.turn > 0 && shares.fixed + shares.question + shares.turn > window) {
    const results = `this turn's tool results are ${about(shares.turn)} tokens and fill the window`
    return `${results}; ${server} — ask for less at once, or ${larger(api)}`
  }
  const total = shares.counted ? tokensFigure(shares.total) : about(shares.total)
  return `this conversation is ${total} tokens; ${server} — /compact, /new, or ${larger(api)}`
}

/**
 * The line for a window too small to work in (mm's prompt and tools plus room for an answer);
 * undefined when it is not. `mcp` is the MCP servers' share of `fixed`: when mm would fit
 * without it, the servers' tools are what to cut, not the window to grow.
 */
export const tooSmallLine = (fixed: number, window: number, mcp = 0, api: ModelApi = "chat"): string | undefined => {
  if (fixed + ANSWER_ROOM <= window) return undefined
  const head = `the server's window of ${tokensFigure(window)} tokens is too small to work in`
  if (mcp > 0 && fixed - mcp + ANSWER_ROOM <= window) {
    const why = `the MCP servers' tools take ${about(mcp)} of it, leaving little room for the conversation`
    return `${head}: ${why} and the answers — turn off a server with many tools (enabled: false), or use ${larger(api)}`
  }
  const why = `mm's system prompt and tools take ${about(fixed)} of it, leaving little room for the conversation`
  return `${head}: ${why} and the answers — ${grow(api)}`
}

/** Said once per run: the key in `shownWarnings`. */
const TOO_SMALL = "window-too-small"

/** Says once per run that the window is too small to work in, when it is (the window as known now). */
export const sayTooSmall = Effect.fn("Agent.sayTooSmall")(
  function*(deps: Deps, emit: Emit, system: string, tools: ReadonlyArray<ToolSpec>) {
    if (deps.shownWarnings.has(TOO_SMALL)) return
    const own = new Set(deps.tools.specs.map((tool) => tool.name))
    const mcp = toolTokens(tools.filter((tool) => !own.has(tool.name)))
    const line = tooSmallLine(fixedTokens(system, tools), yield* deps.model.contextWindow, mcp, deps.model.api)
    if (line === undefined) return
    deps.shownWarnings.add(TOO_SMALL)
    yield* emit({ _tag: "Notice", text: line })
  }
)

/** The tools this turn's requests carry: mm's own and the MCP servers'. */
export const turnTools = (deps: Deps, state: TurnState): Array<ToolSpec> => [
  ...deps.tools.specs,
  ...state.mcpTools.tools().map(specOf)
]

/** The system prompt of this turn's requests. */
export const turnSystem = (state: TurnState): string | undefined =>
  state.base[0]?.role === "system" ? state.base[0].content ?? "" : undefined

/** `sayTooSmall` with this turn's system prompt and tools: before the first call, and after each (the window may just have become known). */
export const sayTooSmallFor = (deps: Deps, state: TurnState) =>
  sayTooSmall(deps, state.emit, turnSystem(state) ?? "", turnTools(deps, state))

/**
 * The line for a conversation that compaction left over its threshold (`limit`): every turn
 * would compact again, and answers have little room.
 */
export const overThresholdLine = (
  tokens: number,
  fixed: number,
  limit: number,
  window: number,
  api: ModelApi = "chat"
): string => {
  const head = `compaction cannot bring this conversation under ${tokensFigure(limit)} tokens (compaction.threshold)`
  const still = `it is still ${about(tokens)} of the server's ${tokensFigure(window)}`
  const own = `${about(fixed)} of them mm's system prompt and tools`
  return `${head}: ${still}, ${own}, so answers have little room — /new, or ${larger(api)}`
}
