/**
 * Tools for a server that cannot take the `tools` parameter (llama-server `--no-jinja`, a chat
 * template without tool support, an Ollama model without the `tools` capability): the tools
 * are described in the system prompt, earlier calls and their results are written as text in
 * the Hermes form (`<tool_call>…</tool_call>`, `<tool_response>…</tool_response>`), and the
 * reply is read back by `TextToolCalls.ts`. Pure functions; the client decides when.
 */
import type { WireMessage } from "../../domain/Session"
import type { ToolSpec } from "../ModelClient"

/** What the user is told, once, when a server's tools go as text. */
export const textToolsHint = (why: "template" | "jinja"): string =>
  why === "jinja"
    ? "the model server refuses the tools parameter (tools param requires --jinja flag) — start llama-server with --jinja; meanwhile mm describes its tools in the prompt"
    : "the server's chat template cannot take tools (chat_template_caps.supports_tools: false) — start llama-server with --jinja and a model or --chat-template that supports tools; meanwhile mm describes its tools in the prompt"

/** Whether an HTTP refusal is the server saying it cannot take the `tools` parameter. */
export const refusesTools = (status: number, body: string): boolean =>
  (status === 500 || status === 400) && /tools param requires --jinja|does not support tools/i.test(body)

/** The part of the system prompt that tells the model its tools and how to call them. */
const toolsPrompt = (tools: ReadonlyArray<ToolSpec>): string =>
  [
    "# Tools",
    "",
    "You may call the tools below. To call one, answer with only this, one block per call:",
    "<tool_call>",
    "{\"name\": \"TOOL NAME\", \"arguments\": {ARGUMENTS AS JSON}}",
    "</tool_call>",
    "Each result comes back in a <tool_response> block. Without a call, answer in plain text.",
    "",
    ...tools.map((tool) =>
      `- ${tool.name}: ${tool.description}\n  arguments (JSON schema): ${JSON.stringify(tool.parameters)}`
    )
  ].join("\n")

const callText = (message: WireMessage): string =>
  (message.tool_calls ?? [])
    .map((call) => {
      let args: unknown
      try {
        args = JSON.parse(call.function.arguments)
      } catch {
        args = {}
      }
      return `<tool_call>\n${JSON.stringify({ name: call.function.name, arguments: args })}\n</tool_call>`
    })
    .join("\n")

/**
 * The conversation as a server without tool support can take it: the tools in the system
 * prompt, calls and results as text, and no message with `tool_calls` or the `tool` role.
 */
export const withTextTools = (
  messages: ReadonlyArray<WireMessage>,
  tools: ReadonlyArray<ToolSpec>
): Array<WireMessage> => {
  const described = toolsPrompt(tools)
  const out: Array<WireMessage> = []
  for (const message of messages) {
    if (message.role === "assistant" && message.tool_calls !== undefined && message.tool_calls.length > 0) {
      const text = [message.content ?? "", callText(message)].filter((part) => part !== "").join("\n")
      out.push({ role: "assistant", content: text })
    } else if (message.role === "tool") {
      const result = `<tool_response>\n${typeof message.content === "string" ? message.content : ""}\n</tool_response>`
      const last = out[out.length - 1]
      // results of one answer's calls go back together, as one user turn
      if (last?.role === "user" && typeof last.content === "string" && last.content.startsWith("<tool_response>")) {
        out[out.length - 1] = { role: "user", content: `${last.content}\n${result}` }
      } else out.push({ role: "user", content: result })
    } else out.push(message)
  }
  if (tools.length === 0) return out
  const first = out[0]
  if (first?.role === "system") {
    out[0] = { ...first, content: `${first.content ?? ""}\n\n${described}` }
  } else out.unshift({ role: "system", content: described })
  return out
}
