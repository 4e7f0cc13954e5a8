/** One content block of a tool result, as the SDK gives it. */
export interface McpContent {
  readonly type: string
  readonly [key: string]: unknown
}

/** How many `=` end `base64` (its padding), counted from the end. */
const padding = (base64: string): number => {
  let end = base64.length
  while (end > 0 && base64.charCodeAt(end - 1) === 61) end--
  return base64.length - end
}

const size = (base64: unknown): string =>
  typeof base64 === "string" ? `, ${Math.floor((base64.length * 3) / 4) - padding(base64)} bytes` : ""

/** Non-text content, described in one line the model can read. */
const describeContent = (block: McpContent): string => {
  switch (block.type) {
    case "image":
    case "audio":
      return `[${block.type}: ${String(block.mimeType ?? "unknown type")}${size(block.data)}]`
    case "resource_link":
      return `[resource link: ${[String(block.name ?? "").trim(), String(block.uri ?? "").trim()].join(" ").trim()}]`
    case "resource": {
      const resource = (block.resource ?? {}) as Record<string, unknown>
      if (typeof resource.text === "string") return resource.text
      return `[resource: ${String(resource.uri ?? "")} (${String(resource.mimeType ?? "binary")}${
        size(resource.blob)
      })]`
    }
    default:
      return `[${block.type} content]`
  }
}

/** The text the model sees of a result: text blocks joined, anything else one line each. */
export const resultText = (
  result: { readonly content?: ReadonlyArray<McpContent>; readonly structuredContent?: unknown }
): string => {
  const parts = (result.content ?? []).map((block) =>
    block.type === "text" && typeof block.text === "string" ? block.text : describeContent(block)
  )
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent)
  const text = parts.join("\n")
  return text === "" ? "(no output)" : text
}
