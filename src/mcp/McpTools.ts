/** One content block of a tool result, as the SDK gives it. */
export interface McpContent {
  readonly type: string
  readonly [key: string]: unknown
}

const size = (base64: unknown): string =>
  typeof base64 === "string"
    ? `, ${Math.floor((base64.length * 3) / 4) - (base64.match(/=+$/)?.[0].length ?? 0)} bytes`
    : ""

/** Non-text content, described in one line the model can read. */
const describeContent = (block: McpContent): string => {
  switch (block.type) {
    case "image":
    case "audio":
      return `[${block.type}: ${String(block.mimeType ?? "unknown type")}${size(block.data)}]`
    case "resource_link":
      return `[resource link: ${String(block.name ?? "")} ${String(block.uri ?? "")}]`.replace(/\s+]/, "]")
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
