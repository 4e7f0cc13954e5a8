import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import type { SecretRegistry } from "../lib/Secrets"
import { noPreview } from "../tools/Preview"
import type { ToolResult } from "../tools/Tool"
import { parseArguments } from "../tools/ToolArguments"
import { isMcpToolName, mcpCallTitle } from "../tools/ToolNames"
import type { ToolRecord } from "../tools/ToolRecord"
import type { McpGroup, McpTool } from "./McpGroup"
import { resultText } from "./McpTools"

/** The MCP tools of one turn, as tool records (their servers' schemas as they are). */
export interface McpTurnTools {
  /** The tools of the servers ready now (a server that failed meanwhile is left out). */
  readonly tools: () => ReadonlyArray<ToolRecord>
  /** Failures not told yet, to show before the turn goes on. */
  readonly notices: ReadonlyArray<string>
  readonly find: (name: string) => ToolRecord | undefined
}

export const noMcpTools: McpTurnTools = { tools: () => [], notices: [], find: () => undefined }

/** What a call of an MCP tool may take when its server does not answer: the turn's watchdog. */
const DEFAULT_TIMEOUT_SECONDS = 120

/**
 * One call of `tool` on its server; never fails: a problem is a failed result the model sees.
 * A server that times out has its tools left out for the rest of the turn (`timedOut`).
 */
const callTool = (
  groups: ReadonlyArray<McpGroup>,
  secrets: SecretRegistry,
  timedOut: Set<string>,
  tool: McpTool,
  args: Record<string, unknown>,
  timeoutSeconds: number
): Effect.Effect<ToolResult> => {
  const group = groups.find((g) => g.servers().some((s) => s.name === tool.server && s.state._tag === "Ready"))
  const connection = group?.connection(tool.server)
  if (connection === undefined) {
    return Effect.succeed({ output: `mcp server "${tool.server}" is not running`, failed: true })
  }
  return Effect.tryPromise({
    try: (signal) => connection.call(tool.tool, args, { timeoutMs: Math.round(timeoutSeconds * 1000), signal }),
    catch: (cause) => cause as Error & { timeout?: boolean; lost?: boolean }
  }).pipe(
    Effect.map((outcome): ToolResult => ({ output: resultText(outcome), failed: outcome.isError })),
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

/**
 * An MCP tool as a tool record: the model is told the server's own description and schema;
 * its arguments need only be a JSON object (the server checks the rest); it reaches what mm
 * cannot see, so it is asked unless its server's `approval: allow` says otherwise; an editor
 * shows it as `read` when the server says it only reads.
 */
const mcpToolRecord = (
  tool: McpTool,
  run: (args: Record<string, unknown>, timeoutSeconds: number) => Effect.Effect<ToolResult>
): ToolRecord => ({
  name: tool.name,
  description: tool.description === "" ? `${tool.tool} (MCP server ${tool.server})` : tool.description,
  parameters: tool.inputSchema,
  access: "outside",
  kind: tool.readOnly ? "read" : "other",
  ...(tool.approval === "allow" ? { preapproved: true } : {}),
  prepare: (raw) =>
    Either.map(parseArguments(raw), (args) => ({
      input: args,
      run: (ctx) => run(args, ctx.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS)
    })),
  describe: (args) => ({ title: mcpCallTitle(args) ?? "", locations: [] }),
  preview: noPreview
})

export const turnTools = (groups: ReadonlyArray<McpGroup>, secrets: SecretRegistry): McpTurnTools => {
  const timedOut = new Set<string>()
  const notices = groups.flatMap((g) => g.takeProblems())
  const records = new Map<McpTool, ToolRecord>()
  const recordOf = (tool: McpTool): ToolRecord => {
    let record = records.get(tool)
    if (record === undefined) {
      record = mcpToolRecord(tool, (args, seconds) => callTool(groups, secrets, timedOut, tool, args, seconds))
      records.set(tool, record)
    }
    return record
  }
  const all = (): Array<ToolRecord> => {
    const seen = new Set<string>()
    return groups.flatMap((group) =>
      group.servers().flatMap((server) => {
        if (server.state._tag !== "Ready" || timedOut.has(server.name)) return []
        return server.state.tools.filter((t) => !seen.has(t.name) && (seen.add(t.name), true)).map(recordOf)
      })
    )
  }
  return {
    tools: all,
    notices,
    find: (name) => (isMcpToolName(name) ? all().find((tool) => tool.name === name) : undefined)
  }
}
