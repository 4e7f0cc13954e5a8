/**
 * The body of `POST {url}/responses`: stateless (`store: false`, the whole conversation as
 * `input` every time), mm's provider-neutral messages turned into Responses input items, the
 * reasoning items this API returned given back before the assistant message they belong to.
 */
import type { AgentConfig } from "../../config/Config"
import type { WireMessage, WirePart } from "../../domain/Session"
import { isRecord } from "../../lib/Guards"
import type { ChatRequest, ToolSpec } from "../ModelClient"

type ModelSettings = AgentConfig["model"]

/** One item of `input`, as the Responses API takes it. */
export type InputItem = Record<string, unknown>

/** What mm asks for in `include`: the reasoning, encrypted, so that a stateless request can carry it back. */
export const ENCRYPTED_REASONING = "reasoning.encrypted_content"

/** The effort a `model.thinking` budget in tokens stands for: under 4,096 low, under 16,384 medium, else high. */
export const effortOfBudget = (tokens: number): "low" | "medium" | "high" =>
  tokens < 4096 ? "low" : tokens < 16384 ? "medium" : "high"

/** A message's content as plain text (the text parts of a multi-part one). */
const textOf = (content: WireMessage["content"]): string =>
  content === null
    ? ""
    : typeof content === "string"
    ? content
    : content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

/** A user's (or developer's) content: text as `input_text`, images as `input_image` with their data URL. */
const inputContent = (content: WireMessage["content"]): Array<Record<string, unknown>> => {
  if (content === null) return [{ type: "input_text", text: "" }]
  if (typeof content === "string") return [{ type: "input_text", text: content }]
  return content.map((part: WirePart) =>
    part.type === "text"
      ? { type: "input_text", text: part.text }
      : { type: "input_image", image_url: part.image_url.url }
  )
}

/**
 * A reasoning item as it goes back: without its `id` and `status`, which name an item the
 * server would have to have stored (`store: false` keeps nothing), its encrypted content and
 * summary as they came.
 */
const reasoningBack = (item: unknown): InputItem | undefined => {
  if (!isRecord(item) || item.type !== "reasoning") return undefined
  const { id: _id, status: _status, ...rest } = item
  return rest
}

/** An assistant message as input items: its reasoning (same API and model only), its text, its calls. */
const assistantItems = (message: WireMessage, model: string): Array<InputItem> => {
  const items: Array<InputItem> = []
  const opaque = message.opaque
  if (opaque !== undefined && opaque.api === "responses" && opaque.model === model) {
    for (const item of opaque.items) {
      const back = reasoningBack(item)
      if (back !== undefined) items.push(back)
    }
  }
  const text = textOf(message.content)
  if (text !== "") {
    items.push({ type: "message", role: "assistant", content: [{ type: "output_text", text }] })
  }
  for (const call of message.tool_calls ?? []) {
    items.push({
      type: "function_call",
      call_id: call.id,
      name: call.function.name,
      arguments: call.function.arguments
    })
  }
  return items
}

/**
 * The conversation as `instructions` (the leading system message) and `input` items; a later
 * system message goes as a developer message. `model` is the one asked: reasoning items kept
 * from another model are left out.
 */
export const inputOf = (
  messages: ReadonlyArray<WireMessage>,
  model: string
): { readonly instructions: string | undefined; readonly input: Array<InputItem> } => {
  const first = messages[0]
  const instructions = first?.role === "system" ? textOf(first.content) : undefined
  const input: Array<InputItem> = []
  for (const message of instructions === undefined ? messages : messages.slice(1)) {
    switch (message.role) {
      case "system":
        input.push({ type: "message", role: "developer", content: inputContent(message.content) })
        break
      case "user":
        input.push({ type: "message", role: "user", content: inputContent(message.content) })
        break
      case "assistant":
        input.push(...assistantItems(message, model))
        break
      case "tool":
        input.push({
          type: "function_call_output",
          call_id: message.tool_call_id ?? "",
          output: textOf(message.content)
        })
        break
    }
  }
  return { instructions, input }
}

/** A tool as a function; `strict: false`, for mm's schemas are not written for OpenAI's strict mode. */
const toolOf = (tool: ToolSpec): InputItem => ({
  type: "function",
  name: tool.name,
  description: tool.description,
  parameters: tool.parameters,
  strict: false
})

/**
 * `reasoning` and `include` from model.thinking: a level is the effort, a budget in tokens the
 * effort it stands for, unset the model's own default; `off` asks for no reasoning at all (for
 * models without it, which refuse `reasoning.encrypted_content`). What model.extraBody says
 * under `reasoning` (a `summary`, say) is kept beside the effort.
 */
const reasoningFields = (settings: ModelSettings): Record<string, unknown> => {
  const thinking = settings.thinking
  if (thinking === "off") return {}
  const extra = settings.extraBody?.reasoning
  const effort = thinking === undefined ? undefined : typeof thinking === "number" ? effortOfBudget(thinking) : thinking
  const reasoning = { ...(effort === undefined ? {} : { effort }), ...(isRecord(extra) ? extra : {}) }
  const included = settings.extraBody?.include
  const include = Array.isArray(included)
    ? [...new Set([...included.filter((name) => typeof name === "string"), ENCRYPTED_REASONING])]
    : [ENCRYPTED_REASONING]
  return { ...(Object.keys(reasoning).length === 0 ? {} : { reasoning }), include }
}

/**
 * The request's JSON body; without `withReasoning`, no `reasoning` nor `include` at all (the
 * model refused them), whatever model.thinking and model.extraBody say.
 */
export const requestBody = (settings: ModelSettings, request: ChatRequest, withReasoning = true): string => {
  const model = request.model ?? settings.name
  const { instructions, input } = inputOf(request.messages, model)
  const { temperature, maxTokens } = settings
  const { reasoning: _reasoning, include: _include, ...otherExtra } = settings.extraBody ?? {}
  return JSON.stringify({
    ...(withReasoning ? settings.extraBody : otherExtra),
    model,
    ...(instructions === undefined ? {} : { instructions }),
    input,
    ...(request.tools.length > 0 ? { tools: request.tools.map(toolOf) } : {}),
    stream: true,
    store: false,
    ...(withReasoning ? reasoningFields(settings) : {}),
    ...(temperature !== undefined ? { temperature } : {}),
    ...(maxTokens !== undefined ? { max_output_tokens: maxTokens } : {})
  })
}
