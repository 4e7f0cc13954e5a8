import * as Effect from "effect/Effect"

import { firstLineOf } from "../lib/OneLine"
import type { SecretRegistry } from "../lib/Secrets"
import type { ToolSpec } from "../model/ModelClient"
import type { ToolResult } from "../tools/Tool"
import { isMcpToolName, mcpCallTitle } from "../tools/ToolNames"
import { truncateOutput } from "../tools/Truncate"
import type { McpGroup, McpTool } from "./McpGroup"
import type { CallOutcome } from "./McpSdk"
import { resultText } from "./McpTools"

/**
 * Whether a call of an MCP tool waits for the user: as `bash` does (`permissions`, and the
 * session.s mode: `allow` never asks, `edits` and `auto` still ask), unless its server says `allow`.
 */
export const mcpApprovalNeeded = (
  permissions: "ask" | "auto" | "allow",
  mode: "ask" | "edits" | "auto" | "allow",
  approval: "ask" | "allow"
): boolean => approval === "ask" && mode !== "allow" && !(mode === "ask" && permissions === "allow")

/** The MCP tools of one turn, and how to run them. */
export interface McpTurnTools {
  /** What the model is told, for the next request (a server that failed meanwhile is left out). */
  readonly specs: () => ReadonlyArray<ToolSpec>
  /** Failures not told yet, to show before the turn goes on. */
  readonly notices: ReadonlyArray<string>
  readonly find: (name: string) => McpTool | undefined
  /** The arguments as an object, or a one-line reason why not. */
  readonly parse: (raw: string) => { readonly args: Record<string, unknown> } | { readonly error: string }
  readonly title: (name: string, args: Record<string, unknown> | undefined) => string
  /** Runs one call; never fails: a problem is a failed result the model sees. */
  readonly run: (
    tool: McpTool,
    args: Record<string, unknown>,
    options: { readonly maxOutput: number; readonly timeoutSeconds: number }
  ) => Effect.Effect<ToolResult>
}

export const noMcpTools: McpTurnTools = {
  specs: () => [],
  notices: [],
  find: () => undefined,
  parse: () => ({ error: "not an MCP tool" }),
  title: (name) => name,
  run: () => Effect.succeed({ output: "not an MCP tool", failed: true })
}

const parseArgs = (raw: string): { readonly args: Record<string, unknown> } | { readonly error: string } => {
  try {
    const value: unknown = raw.trim() === "" ? {} : JSON.parse(raw)
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { error: "arguments must be a JSON object" }
    }
    return { args: value as Record<string, unknown> }
  } catch (cause) {
    return { error: `arguments are not valid JSON (${firstLineOf(cause)})` }
  }
}

const outcomeResult = (outcome: CallOutcome, maxOutput: number, secrets: SecretRegistry): ToolResult => ({
  output: truncateOutput(secrets.redact(resultText(outcome)), maxOutput),
  failed: outcome.isError
})

export const turnTools = (groups: ReadonlyArray<McpGroup>, secrets: SecretRegistry): McpTurnTools => {
  const timedOut = new Set<string>()
  const notices = groups.flatMap((g) => g.takeProblems())
  const all = (): Array<{ readonly group: McpGroup; readonly tool: McpTool }> => {
    const seen = new Set<string>()
    return groups.flatMap((group) =>
      group.servers().flatMap((server) => {
        if (server.state._tag !== "Ready" || timedOut.has(server.name)) return []
        return server.state.tools.filter((t) => !seen.has(t.name) && (seen.add(t.name), true)).map((tool) => ({
          group,
          tool
        }))
      })
    )
  }
  const find = (name: string) => (isMcpToolName(name) ? all().find((entry) => entry.tool.name === name) : undefined)
  return {
    specs: () =>
      all().map(({ tool }) => ({
        name: tool.name,
        description: tool.description === "" ? `${tool.tool} (MCP server ${tool.server})` : tool.description,
        parameters: tool.inputSchema
      })),
    notices,
    find: (name) => find(name)?.tool,
    parse: parseArgs,
    title: (name, args) => mcpCallTitle(args) ?? name,
    run: (tool, args, { maxOutput, timeoutSeconds }) => {
      const group = groups.find((g) => g.servers().some((s) => s.name === tool.server && s.state._tag === "Ready"))
      const connection = group?.connection(tool.server)
      if (connection === undefined) {
        return Effect.succeed({ output: `mcp server "${tool.server}" is not running`, failed: true })
      }
      return Effect.tryPromise({
        try: (signal) => connection.call(tool.tool, args, { timeoutMs: Math.round(timeoutSeconds * 1000), signal }),
        catch: (cause) => cause as Error & { timeout?: boolean; lost?: boolean }
      }).pipe(
        Effect.map((outcome) => outcomeResult(outcome, maxOutput, secrets)),
        Effect.catchAll((error) =>
          Effect.sync(() => {
            if (error.timeout === true) timedOut.add(tool.server)
            if (error.lost === true) group?.toldLost(tool.server)
            const tail = error.timeout === true ? "; its tools are left out for the rest of this turn" : ""
            return { output: secrets.redact(`mcp server "${tool.server}" ${error.message}${tail}`), failed: true }
          })
        )
      )
    }
  }
}
