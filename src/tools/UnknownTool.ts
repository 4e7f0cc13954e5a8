import * as Either from "effect/Either"

import { noPreview } from "./Preview"
import { isMcpToolName, mcpCallTitle } from "./ToolNames"
import type { ToolRecord } from "./ToolRecord"

/**
 * The record of a tool mm does not have: a name the model made up, or a stored call of an MCP
 * server's tool that is not running now. Its calls are refused; a stored one is still shown
 * (an MCP tool's by its first string argument, as when it ran).
 */
export const unknownToolRecord = (name: string): ToolRecord => ({
  name,
  description: "",
  parameters: { type: "object" },
  access: "outside",
  kind: "other",
  prepare: () => Either.left(`unknown tool "${name}"`),
  describe: (args) => ({ title: isMcpToolName(name) ? (mcpCallTitle(args) ?? "") : "", locations: [] }),
  preview: noPreview
})
