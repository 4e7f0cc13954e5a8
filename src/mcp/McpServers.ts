import * as Context from "effect/Context"
import * as Effect from "effect/Effect"

import { AppConfig } from "../config/Config"
import { Secrets } from "../lib/Secrets"
import type { Conversation } from "../sessions/Conversation"
import { entryFromConfig } from "./McpEntries"
import { type McpGroup, startGroup } from "./McpGroup"
import { type McpTurnTools, noMcpTools, turnTools } from "./McpTurnTools"

export interface McpServersShape {
  /** The servers of agent.yaml, starting in the background; undefined when none is configured. */
  readonly configured: McpGroup | undefined
  /** Starts an editor's servers for one conversation; they stop with mm. */
  readonly attach: (conversation: Conversation, group: McpGroup) => Effect.Effect<void>
  readonly attached: (conversation: Conversation) => McpGroup | undefined
  /** Stops the servers attached to a conversation (ACP `session/close`). */
  readonly detach: (conversation: Conversation) => Effect.Effect<void>
  /** Waits (up to the start-up timeout) for the conversation's servers, then gives their tools. */
  readonly forTurn: (conversation: Conversation) => Effect.Effect<McpTurnTools>
}

export class McpServers extends Context.Tag("mm/McpServers")<McpServers, McpServersShape>() {}

/** A one-line summary for the terminal's banner: `mcp: 2 servers, 14 tools`, and which failed. */
export const summaryLine = (group: McpGroup): string => {
  const servers = group.servers().filter((s) => s.state._tag !== "Disabled")
  if (!group.settled()) {
    return `mcp: ${servers.length} server${servers.length === 1 ? "" : "s"} starting — /mcp to see them`
  }
  const ready = servers.filter((s) => s.state._tag === "Ready")
  const tools = ready.reduce((n, s) => n + (s.state._tag === "Ready" ? s.state.tools.length : 0), 0)
  const failed = servers.filter((s) => s.state._tag === "Failed").map((s) => s.name)
  const head = `mcp: ${ready.length} server${ready.length === 1 ? "" : "s"}, ${tools} tool${tools === 1 ? "" : "s"}`
  return failed.length === 0 ? head : `${head} · failed: ${failed.join(", ")} — /mcp to see why`
}

/** `/mcp`: every server, its state and its tools. */
export const serversListing = (groups: ReadonlyArray<McpGroup>): string => {
  const servers = groups.flatMap((g) => g.servers())
  if (servers.length === 0) return "no MCP servers — add them under mcpServers in agent.yaml (docs/how-to/mcp.md)"
  return servers
    .map((s) => {
      const state = s.state._tag === "Ready"
        ? `ready, ${s.state.tools.length} tool(s)`
        : s.state._tag === "Failed"
        ? `failed: ${s.state.reason}`
        : s.state._tag === "Disabled"
        ? "disabled (enabled: false)"
        : "starting"
      const tools = s.state._tag === "Ready"
        ? s.state.tools.map((t) => `    ${t.name}${t.readOnly ? "  (read-only)" : ""}`)
        : []
      return [`${s.name}  ${s.where}  — ${state}`, ...tools].join("\n")
    })
    .join("\n")
}

/** The configured MCP servers, started beside the start-up and closed with the scope. */
export const makeMcpServers = (options: {
  readonly projectDir: string
  readonly timeoutMs?: number
  /** Told each failure as it happens (ACP logs it on stderr). */
  readonly onProblem?: (line: string) => void
}) =>
  Effect.gen(function*() {
    const { config } = yield* AppConfig
    const secrets = yield* Secrets
    const entries = Object.entries(config.mcpServers).map(([name, server]) =>
      entryFromConfig(name, server, options.projectDir, secrets)
    )
    const configured = entries.length === 0
      ? undefined
      : startGroup(entries, { secrets, timeoutMs: options.timeoutMs, onProblem: options.onProblem })
    const attachedGroups = new WeakMap<Conversation, McpGroup>()
    const live = new Set<McpGroup>(configured === undefined ? [] : [configured])
    yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([...live].map((g) => g.close()))))
    const groupsOf = (conversation: Conversation) => {
      const own = attachedGroups.get(conversation)
      return [configured, own].filter((g): g is McpGroup => g !== undefined)
    }
    return McpServers.of({
      configured,
      attach: Effect.fn("McpServers.attach")(function*(conversation, group) {
        attachedGroups.set(conversation, group)
        live.add(group)
      }),
      attached: (conversation) => attachedGroups.get(conversation),
      detach: Effect.fn("McpServers.detach")(function*(conversation) {
        const group = attachedGroups.get(conversation)
        if (group === undefined) return
        attachedGroups.delete(conversation)
        live.delete(group)
        yield* Effect.promise(() => group.close())
      }),
      forTurn: Effect.fn("McpServers.forTurn")(function*(conversation) {
        const groups = groupsOf(conversation)
        if (groups.length === 0) return noMcpTools
        yield* Effect.promise(() => Promise.all(groups.map((g) => g.ready)))
        return turnTools(groups, secrets)
      })
    })
  })
