/**
 * mm's request in Anthropic Messages words: the system prompt as its own blocks, tool results
 * inside user messages, tool calls as `tool_use` blocks, images as base64 blocks, the signed
 * thinking of this model's own earlier answers given back first, and `cache_control`
 * breakpoints where the prefix of the next request ends, so that it is read from the cache.
 */
import type { AgentConfig } from "../../config/Config"
import type { WireMessage, WirePart } from "../../domain/Session"
import { isRecord } from "../../lib/Guards"
import type { ChatRequest, ToolSpec } from "../ModelClient"

type ModelSettings = AgentConfig["model"]

export type Block = Record<string, unknown>

interface AnthropicMessage {
  readonly role: "user" | "assistant"
  readonly content: Array<Block>
}

/** What `max_tokens` is when model.maxTokens is not written (the API requires one). */
export const DEFAULT_MAX_TOKENS = 8192
/** The smallest thinking budget the API takes. */
const MIN_BUDGET = 1024
/** The budgets the words of model.thinking stand for. */
const BUDGETS = { low: 2048, medium: 8192, high: 16384 } as const

const EPHEMERAL = { type: "ephemeral" } as const

/** The thinking budget model.thinking asks for; undefined when it asks for none. */
export const thinkingBudget = (thinking: ModelSettings["thinking"]): number | undefined =>
  thinking === undefined || thinking === "off"
    ? undefined
    : typeof thinking === "number"
    ? Math.max(MIN_BUDGET, thinking)
    : BUDGETS[thinking]

/**
 * `max_tokens` and the budget that fits below it: the budget shrinks to leave room for an
 * answer when model.maxTokens is small, never under the API's minimum (then `max_tokens`
 * grows instead).
 */
export const limits = (
  settings: ModelSettings
): { readonly maxTokens: number; readonly budget: number | undefined } => {
  const asked = thinkingBudget(settings.thinking)
  if (asked === undefined) return { maxTokens: settings.maxTokens ?? DEFAULT_MAX_TOKENS, budget: undefined }
  if (settings.maxTokens === undefined) return { maxTokens: asked + DEFAULT_MAX_TOKENS, budget: asked }
  const budget = Math.max(MIN_BUDGET, Math.min(asked, settings.maxTokens - MIN_BUDGET))
  return { maxTokens: Math.max(settings.maxTokens, budget + MIN_BUDGET), budget }
}

/** An image part: base64 from a `data:` URL, else the URL for the API to fetch. */
const imageBlock = (url: string): Block => {
  const data = /^data:([^;,]+);base64,(.*)$/s.exec(url)
  return data === null
    ? { type: "image", source: { type: "url", url } }
    : { type: "image", source: { type: "base64", media_type: data[1], data: data[2] } }
}

const partBlock = (part: WirePart): Block | undefined =>
  part.type === "text"
    ? (part.text === "" ? undefined : { type: "text", text: part.text })
    : imageBlock(part.image_url.url)

/** A message's content as blocks; the API refuses empty text blocks, so there are none. */
const contentBlocks = (content: WireMessage["content"]): Array<Block> =>
  content === null
    ? []
    : typeof content === "string"
    ? content === "" ? [] : [{ type: "text", text: content }]
    : content.flatMap((part): Array<Block> => {
      const block = partBlock(part)
      return block === undefined ? [] : [block]
    })

const textOf = (content: WireMessage["content"]): string =>
  content === null
    ? ""
    : typeof content === "string"
    ? content
    : content.map((part) => (part.type === "text" ? part.text : "")).join("")

/** A tool call's arguments as the `input` object the API wants; what is not an object is wrapped. */
const inputOf = (args: string): unknown => {
  try {
    const parsed: unknown = JSON.parse(args.trim() === "" ? "{}" : args)
    return isRecord(parsed) ? parsed : { value: parsed }
  } catch {
    return { arguments: args }
  }
}

/** The signed thinking of an answer this model wrote, to give back first; nothing for any other. */
const ownThinking = (message: WireMessage, model: string): Array<Block> => {
  const opaque = message.opaque
  if (opaque === undefined || opaque.api !== "anthropic" || opaque.model !== model) return []
  return opaque.items.filter((item): item is Block =>
    isRecord(item) && (item.type === "thinking" || item.type === "redacted_thinking")
  )
}

const assistantBlocks = (message: WireMessage, model: string): Array<Block> => [
  ...ownThinking(message, model),
  ...contentBlocks(message.content),
  ...(message.tool_calls ?? []).map((call) => ({
    type: "tool_use",
    id: call.id,
    name: call.function.name,
    input: inputOf(call.function.arguments)
  }))
]

const toolResult = (message: WireMessage): Block => {
  const blocks = contentBlocks(message.content)
  return {
    type: "tool_result",
    tool_use_id: message.tool_call_id ?? "",
    content: blocks.length === 0 ? [{ type: "text", text: "(no output)" }] : blocks
  }
}

/** One message's blocks, in the role the API gives it. */
const converted = (message: WireMessage, model: string): AnthropicMessage => {
  switch (message.role) {
    case "assistant":
      return { role: "assistant", content: assistantBlocks(message, model) }
    case "tool":
      return { role: "user", content: [toolResult(message)] }
    case "system":
      // a system message in the middle of the history (none today) is said as the user's
      return { role: "user", content: contentBlocks(message.content) }
    default:
      return { role: "user", content: contentBlocks(message.content) }
  }
}

/**
 * The messages in the API's shape, with the position (in the result) of the message each of
 * mm's came into: consecutive messages of one role become one (tool results go together into
 * one user message, as the API wants them), and a message left empty is dropped.
 */
const conversation = (
  messages: ReadonlyArray<WireMessage>,
  model: string
): { readonly out: Array<AnthropicMessage>; readonly at: Array<number> } => {
  const out: Array<AnthropicMessage> = []
  const at: Array<number> = []
  for (const message of messages) {
    const next = converted(message, model)
    const last = out.at(-1)
    if (next.content.length === 0) {
      at.push(out.length - 1)
      continue
    }
    if (last !== undefined && last.role === next.role) {
      // tool results come first in a user message, as the API requires
      last.content.push(...next.content)
      if (next.role === "user") {
        last.content.sort((a, b) => Number(b.type === "tool_result") - Number(a.type === "tool_result"))
      }
    } else {
      out.push(next)
    }
    at.push(out.length - 1)
  }
  return { out, at }
}

/** Marks a message's last block that may carry a breakpoint (thinking blocks may not). */
const markLast = (message: AnthropicMessage | undefined): boolean => {
  if (message === undefined) return false
  for (let i = message.content.length - 1; i >= 0; i--) {
    const block = message.content[i]
    if (block.type === "thinking" || block.type === "redacted_thinking") continue
    message.content[i] = { ...block, cache_control: EPHEMERAL }
    return true
  }
  return false
}

/**
 * The history's breakpoints: the end of the request (the next request of this turn reads up to
 * here), and the last message before the newest question (the end of what the turns before
 * left, so a new turn reads that even when more than the API's look-back was added since).
 * With the system prompt's and the tools', at most four.
 */
const markHistory = (messages: ReadonlyArray<WireMessage>, out: Array<AnthropicMessage>, at: Array<number>): void => {
  let question = -1
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === "user") {
      question = i
      break
    }
  }
  markLast(out.at(-1))
  const before = question > 0 ? at[question - 1] : -1
  if (before >= 0 && before < out.length - 1 && before !== at[question]) markLast(out[before])
}

const toolsOf = (tools: ReadonlyArray<ToolSpec>): Array<Block> =>
  tools.map((tool, index) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.parameters,
    ...(index === tools.length - 1 ? { cache_control: EPHEMERAL } : {})
  }))

/**
 * Whether this turn's tool loop began without signed thinking of this model (an answer
 * written under another API or model, or with thinking off): the API refuses thinking then,
 * since each of the turn's answers must begin with its thinking, so it is left out until the
 * next question.
 */
export const loopWithoutThinking = (messages: ReadonlyArray<WireMessage>, model: string): boolean => {
  let question = messages.length - 1
  while (question >= 0 && messages[question].role !== "user") question--
  return messages.slice(question + 1).some((message) =>
    message.role === "assistant" && (message.tool_calls?.length ?? 0) > 0 && ownThinking(message, model).length === 0
  )
}

/** The JSON body of `POST {url}/messages`, streamed. */
export const messagesBody = (settings: ModelSettings, request: ChatRequest): string => {
  const model = request.model ?? settings.name
  const leading = request.messages.findIndex((message) => message.role !== "system")
  const systemMessages = leading === -1 ? request.messages : request.messages.slice(0, leading)
  const rest = leading === -1 ? [] : request.messages.slice(leading)
  const systemText = systemMessages.map((message) => textOf(message.content)).filter((text) => text !== "")
  const { out, at } = conversation(rest, model)
  markHistory(rest, out, at)
  const asked = limits(settings)
  const budget = loopWithoutThinking(rest, model) ? undefined : asked.budget
  const maxTokens = budget === undefined ? settings.maxTokens ?? asked.maxTokens : asked.maxTokens
  return JSON.stringify({
    ...settings.extraBody,
    model,
    max_tokens: maxTokens,
    ...(systemText.length === 0
      ? {}
      : { system: [{ type: "text", text: systemText.join("\n\n"), cache_control: EPHEMERAL }] }),
    messages: out,
    ...(request.tools.length > 0 ? { tools: toolsOf(request.tools) } : {}),
    ...(budget === undefined ? {} : { thinking: { type: "enabled", budget_tokens: budget } }),
    ...(settings.temperature !== undefined && budget === undefined ? { temperature: settings.temperature } : {}),
    stream: true
  })
}
