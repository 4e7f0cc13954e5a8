import type * as acp from "@agentclientprotocol/sdk"
import * as Effect from "effect/Effect"

import { Secrets } from "../lib/Secrets"
import { type EditorServer, entryFromEditor } from "../mcp/McpEntries"
import { startGroup } from "../mcp/McpGroup"
import { McpServers } from "../mcp/McpServers"
import type { Conversation } from "../sessions/Conversation"

/** An editor's server as mm takes it: stdio with its `env` array, http (or sse) with its `headers`. */
const editorServer = (server: acp.McpServer): EditorServer =>
  "url" in server
    ? { name: server.name, url: server.url, headers: server.headers }
    : { name: server.name, command: server.command, args: server.args, env: server.env }

/**
 * Starts, in the background, the MCP servers an editor gave with `session/new`, `load` or
 * `resume`, for that conversation only (once: a session already holding servers keeps them).
 * A server that fails is logged on stderr now and told in the thread at the next prompt.
 */
export const startSessionServers = (
  conversation: Conversation,
  servers: ReadonlyArray<acp.McpServer> | null | undefined,
  log: (line: string) => void
) =>
  Effect.gen(function*() {
    if (servers === null || servers === undefined || servers.length === 0) return
    const mcp = yield* McpServers
    if (mcp.attached(conversation) !== undefined) return
    const secrets = yield* Secrets
    const entries = servers.map((server) => entryFromEditor(editorServer(server), conversation.cwd, secrets))
    yield* mcp.attach(conversation, startGroup(entries, { secrets, onProblem: log }))
  })

/** `session/close`: the conversation's own servers are stopped. */
export const stopSessionServers = (conversation: Conversation) =>
  Effect.flatMap(McpServers, (mcp) => mcp.detach(conversation))
