import { createHash } from "node:crypto"

/** Longest tool name the OpenAI-style APIs accept. */
export const MAX_TOOL_NAME = 64

export const MCP_PREFIX = "mcp__"

export const isMcpToolName = (name: string): boolean => name.startsWith(MCP_PREFIX)

const clean = (part: string): string => part.replace(/[^A-Za-z0-9_-]/g, "_")

/**
 * The name the model calls: `mcp__<server>__<tool>`, characters outside `[A-Za-z0-9_-]`
 * replaced by `_`; a longer one than 64 characters is cut and ends with a suffix taken
 * from a hash of the server and tool names, so it stays the same from one run to the next.
 */
export const mcpToolName = (server: string, tool: string): string => {
  const full = `${MCP_PREFIX}${clean(server)}__${clean(tool)}`
  if (full.length <= MAX_TOOL_NAME) return full
  const suffix = createHash("sha256").update(`${server}\u0000${tool}`).digest("hex").slice(0, 8)
  return `${full.slice(0, MAX_TOOL_NAME - suffix.length - 1)}_${suffix}`
}

/** Tools whose server says they only read (`annotations.readOnlyHint`): shown to editors as `read`. */
const readOnly = new Set<string>()

export const markReadOnly = (name: string, isReadOnly: boolean): void => {
  if (isReadOnly) readOnly.add(name)
  else readOnly.delete(name)
}

export const isReadOnlyMcpTool = (name: string): boolean => readOnly.has(name)

const TITLE_MAX = 120

/** What a call works on, in one line: its first string argument, else its arguments as JSON. */
export const mcpCallTitle = (args: Record<string, unknown> | undefined): string | undefined => {
  if (args === undefined) return undefined
  const values = Object.values(args)
  const first = values.find((v): v is string => typeof v === "string" && v.trim() !== "")
  const text = (first ?? (values.length === 0 ? "" : JSON.stringify(args))).replace(/\s+/g, " ").trim()
  if (text === "") return undefined
  return text.length > TITLE_MAX ? `${text.slice(0, TITLE_MAX - 1)}…` : text
}

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
