import { nodeCrypto } from "../lib/NodeModules"
import { squashed } from "../lib/OneLine"

/** Longest tool name the OpenAI-style APIs accept. */
const MAX_TOOL_NAME = 64

const MCP_PREFIX = "mcp__"

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
  const suffix = nodeCrypto().createHash("sha256").update(`${server}\u0000${tool}`).digest("hex").slice(0, 8)
  return `${full.slice(0, MAX_TOOL_NAME - suffix.length - 1)}_${suffix}`
}

const TITLE_MAX = 120

/** What a call works on, in one line: its first string argument, else its arguments as JSON. */
export const mcpCallTitle = (args: Record<string, unknown> | undefined): string | undefined => {
  if (args === undefined) return undefined
  const values = Object.values(args)
  const first = values.find((v): v is string => typeof v === "string" && v.trim() !== "")
  const title = squashed(first ?? (values.length === 0 ? "" : JSON.stringify(args)), TITLE_MAX)
  return title === "" ? undefined : title
}
