import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { AppConfig } from "../config/Config"
import type { McpServerConfig } from "../config/McpConfig"
import { redact, registerSecret, resolveSecretRefs } from "../lib/Secrets"
import { VERSION } from "../lib/Version"
import type { ToolSpec } from "../model/ModelClient"
import type { Conversation } from "../sessions/Conversation"
import { type ToolResult, truncateOutput } from "../tools/Tools"
import type { CallOutcome, Connection, ServerTarget } from "./McpSdk"
import { isMcpToolName, markReadOnly, mcpCallTitle, mcpToolName, resultText } from "./McpTools"

/** How long a server may take to start and list its tools. */
export const STARTUP_TIMEOUT_MS = 10_000

/** A server to start: its name, where it is, and whether its tools wait for approval. */
export interface ServerEntry {
  readonly name: string
  readonly target: ServerTarget | { readonly kind: "invalid"; readonly reason: string }
  readonly approval: "ask" | "allow"
  readonly enabled: boolean
}

export interface McpTool {
  /** The name the model calls, `mcp__<server>__<tool>`. */
  readonly name: string
  readonly server: string
  /** The tool's own name on its server. */
  readonly tool: string
  readonly description: string
  readonly inputSchema: Record<string, unknown>
  readonly readOnly: boolean
  readonly approval: "ask" | "allow"
}

export type ServerState =
  | { readonly _tag: "Disabled" }
  | { readonly _tag: "Starting" }
  | { readonly _tag: "Ready"; readonly tools: ReadonlyArray<McpTool> }
  | { readonly _tag: "Failed"; readonly reason: string }

export interface ServerView {
  readonly name: string
  readonly where: string
  readonly state: ServerState
}

/** Servers started together: those of agent.yaml, or those an editor gave for one session. */
export interface McpGroup {
  readonly servers: () => ReadonlyArray<ServerView>
  /** Resolves once every server has started or failed (each within the start-up timeout). */
  readonly ready: Promise<void>
  readonly settled: () => boolean
  /** Lines about failures not told yet; each is returned once. */
  readonly takeProblems: () => ReadonlyArray<string>
  /** The server's end was already told (as a failed call): no other line about it. */
  readonly toldLost: (server: string) => void
  /** The live connection to a server, if it is running. */
  readonly connection: (server: string) => Connection | undefined
  readonly close: () => Promise<void>
}

type SdkModule = typeof import("./McpSdk")

let sdk: Promise<SdkModule> | undefined
/** The SDK's code, loaded on first use only (a separate file in the build). */
const loadSdk = (): Promise<SdkModule> => (sdk ??= import("./McpSdk"))

const whereOf = (target: ServerEntry["target"]): string =>
  target.kind === "stdio"
    ? [target.command, ...target.args].join(" ")
    : target.kind === "http"
    ? target.url
    : "(invalid)"

const describeStart = (name: string, reason: string) => `mcp server "${name}" did not start: ${redact(reason)}`
const describeLost = (name: string, reason: string) => `mcp server "${name}" stopped: ${redact(reason)}`

/** Starts every enabled server of `entries` in the background. */
export const startGroup = (
  entries: ReadonlyArray<ServerEntry>,
  options: { readonly timeoutMs?: number; readonly onProblem?: (line: string) => void } = {}
): McpGroup => {
  const timeoutMs = options.timeoutMs ?? STARTUP_TIMEOUT_MS
  const states = new Map<string, ServerState>()
  const connections = new Map<string, Connection>()
  const problems: Array<string> = []
  const lostTold = new Set<string>()
  const stopping = new AbortController()
  let closed = false
  let settled = false
  const problem = (line: string) => {
    problems.push(line)
    options.onProblem?.(line)
  }

  const toolsOf = (entry: ServerEntry, connection: Connection): Array<McpTool> => {
    const taken = new Set<string>()
    return connection.tools.map((tool) => {
      let name = mcpToolName(entry.name, tool.name)
      if (taken.has(name)) name = mcpToolName(entry.name, `${tool.name}\u0000${taken.size}`)
      taken.add(name)
      markReadOnly(name, tool.readOnly)
      return {
        name,
        server: entry.name,
        tool: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema,
        readOnly: tool.readOnly,
        approval: entry.approval
      }
    })
  }

  const start = async (entry: ServerEntry): Promise<void> => {
    const target = entry.target
    if (target.kind === "invalid") {
      states.set(entry.name, { _tag: "Failed", reason: target.reason })
      return problem(describeStart(entry.name, target.reason))
    }
    try {
      const { connect } = await loadSdk()
      const connection = await connect(target, { timeoutMs, version: VERSION, signal: stopping.signal })
      if (closed) return void (await connection.close())
      connections.set(entry.name, connection)
      states.set(entry.name, { _tag: "Ready", tools: toolsOf(entry, connection) })
      connection.onLost = (reason) => {
        connections.delete(entry.name)
        states.set(entry.name, { _tag: "Failed", reason: `stopped: ${redact(reason)}` })
        if (!lostTold.has(entry.name)) problem(describeLost(entry.name, reason))
      }
    } catch (cause) {
      if (closed) return
      const reason = cause instanceof Error ? cause.message : String(cause)
      states.set(entry.name, { _tag: "Failed", reason: `did not start: ${redact(reason)}` })
      problem(describeStart(entry.name, reason))
    }
  }

  for (const entry of entries) states.set(entry.name, entry.enabled ? { _tag: "Starting" } : { _tag: "Disabled" })
  const ready = Promise.all(entries.filter((e) => e.enabled).map(start)).then(() => {
    settled = true
  })

  return {
    servers: () =>
      entries.map((e) => ({
        name: e.name,
        where: redact(whereOf(e.target)),
        state: states.get(e.name) ?? { _tag: "Starting" }
      })),
    ready,
    settled: () => settled,
    takeProblems: () => problems.splice(0),
    connection: (server) => connections.get(server),
    toldLost: (server) => {
      lostTold.add(server)
      const line = describeLost(server, "")
      for (let i = problems.length - 1; i >= 0; i--) {
        if (problems[i].startsWith(line.slice(0, line.indexOf(":")))) problems.splice(i, 1)
      }
    },
    close: async () => {
      closed = true
      stopping.abort()
      const open = [...connections.values()]
      connections.clear()
      await Promise.all([...open.map((c) => c.close()), ready])
    }
  }
}

// ---------------------------------------------------------------------------
// From configuration

const resolveAll = (
  values: Readonly<Record<string, string>>
): { readonly values: Record<string, string>; readonly missing: ReadonlyArray<string> } => {
  const out: Record<string, string> = {}
  const missing: Array<string> = []
  for (const [key, value] of Object.entries(values)) {
    const resolved = resolveSecretRefs(value)
    out[key] = resolved.value
    missing.push(...resolved.missing)
  }
  return { values: out, missing }
}

/** An agent.yaml entry: `${NAME}` read from the environment (and kept secret), cwd resolved against the project. */
export const entryFromConfig = (name: string, config: McpServerConfig, projectDir: string): ServerEntry => {
  const common = { name, approval: config.approval, enabled: config.enabled }
  const resolved = "command" in config ? resolveAll(config.env) : resolveAll(config.headers)
  if (resolved.missing.length > 0) {
    const names = [...new Set(resolved.missing)]
    return { ...common, target: { kind: "invalid", reason: `environment variable ${names.join(", ")} is not set` } }
  }
  if ("command" in config) {
    return {
      ...common,
      target: {
        kind: "stdio",
        command: config.command,
        args: config.args,
        env: resolved.values,
        cwd: path.resolve(projectDir, config.cwd ?? ".")
      }
    }
  }
  return { ...common, target: { kind: "http", url: config.url, headers: resolved.values } }
}

/** The servers an editor gives in `session/new`, `session/load` or `session/resume`. */
export interface EditorServer {
  readonly name: string
  readonly command?: string
  readonly args?: ReadonlyArray<string>
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly url?: string
  readonly headers?: ReadonlyArray<{ readonly name: string; readonly value: string }>
}

const secretLooking = /token|key|secret|pass|auth|cred|cookie/i

/**
 * An editor's entry. Header values, and environment values whose name looks like a
 * credential, are kept secret: never shown, saved or sent back.
 */
export const entryFromEditor = (server: EditorServer, cwd: string): ServerEntry => {
  const pairs = (list: EditorServer["env"]) => Object.fromEntries((list ?? []).map((p) => [p.name, p.value]))
  const common = { name: server.name, approval: "ask" as const, enabled: true }
  if (server.url !== undefined) {
    for (const header of server.headers ?? []) registerSecret(header.value)
    return { ...common, target: { kind: "http", url: server.url, headers: pairs(server.headers) } }
  }
  for (const variable of server.env ?? []) if (secretLooking.test(variable.name)) registerSecret(variable.value)
  if (server.command === undefined || server.command.trim() === "") {
    return { ...common, target: { kind: "invalid", reason: "no command and no url" } }
  }
  return {
    ...common,
    target: { kind: "stdio", command: server.command, args: server.args ?? [], env: pairs(server.env), cwd }
  }
}

// ---------------------------------------------------------------------------
// For one turn

/**
 * Whether a call of an MCP tool waits for the user: as `bash` does (`permissions`, and the
 * session's mode: `allow` never asks, `edits` still asks), unless its server says `allow`.
 */
export const mcpApprovalNeeded = (
  permissions: "ask" | "allow",
  mode: "ask" | "edits" | "allow",
  approval: "ask" | "allow"
): boolean => approval === "ask" && (mode === "edits" || (mode === "ask" && permissions === "ask"))

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
    return { error: `arguments are not valid JSON (${String((cause as Error).message ?? cause).split("\n")[0]})` }
  }
}

const outcomeResult = (outcome: CallOutcome, maxOutput: number): ToolResult => ({
  output: truncateOutput(redact(resultText(outcome)), maxOutput),
  failed: outcome.isError
})

export const turnTools = (groups: ReadonlyArray<McpGroup>): McpTurnTools => {
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
        Effect.map((outcome) => outcomeResult(outcome, maxOutput)),
        Effect.catchAll((error) =>
          Effect.sync(() => {
            if (error.timeout === true) timedOut.add(tool.server)
            if (error.lost === true) group?.toldLost(tool.server)
            const tail = error.timeout === true ? "; its tools are left out for the rest of this turn" : ""
            return { output: redact(`mcp server "${tool.server}" ${error.message}${tail}`), failed: true }
          })
        )
      )
    }
  }
}

// ---------------------------------------------------------------------------
// The service

export interface McpServersShape {
  /** The servers of agent.yaml, starting in the background; undefined when none is configured. */
  readonly configured: McpGroup | undefined
  /** Starts an editor's servers for one conversation; they stop with mm. */
  readonly attach: (conversation: Conversation, group: McpGroup) => Effect.Effect<void>
  readonly attached: (conversation: Conversation) => McpGroup | undefined
  /** The `approval` of the server of an MCP tool the conversation has; undefined for other names. */
  readonly approvalOf: (conversation: Conversation, tool: string) => "ask" | "allow" | undefined
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

export const McpServersLive = (options: {
  readonly projectDir: string
  readonly timeoutMs?: number
  /** Told each failure as it happens (ACP logs it on stderr). */
  readonly onProblem?: (line: string) => void
}) =>
  Layer.scoped(
    McpServers,
    Effect.gen(function*() {
      const { config } = yield* AppConfig
      const entries = Object.entries(config.mcpServers).map(([name, server]) =>
        entryFromConfig(name, server, options.projectDir)
      )
      const configured = entries.length === 0
        ? undefined
        : startGroup(entries, { timeoutMs: options.timeoutMs, onProblem: options.onProblem })
      const attachedGroups = new WeakMap<Conversation, McpGroup>()
      const live = new Set<McpGroup>(configured === undefined ? [] : [configured])
      yield* Effect.addFinalizer(() => Effect.promise(() => Promise.all([...live].map((g) => g.close()))))
      const groupsOf = (conversation: Conversation) => {
        const own = attachedGroups.get(conversation)
        return [configured, own].filter((g): g is McpGroup => g !== undefined)
      }
      return {
        configured,
        attach: (conversation, group) =>
          Effect.sync(() => {
            attachedGroups.set(conversation, group)
            live.add(group)
          }),
        attached: (conversation) => attachedGroups.get(conversation),
        approvalOf: (conversation, tool) => {
          if (!isMcpToolName(tool)) return undefined
          for (const group of groupsOf(conversation)) {
            for (const server of group.servers()) {
              const found = server.state._tag === "Ready" ? server.state.tools.find((t) => t.name === tool) : undefined
              if (found !== undefined) return found.approval
            }
          }
          return undefined
        },
        detach: (conversation) =>
          Effect.suspend(() => {
            const group = attachedGroups.get(conversation)
            if (group === undefined) return Effect.void
            attachedGroups.delete(conversation)
            live.delete(group)
            return Effect.promise(() => group.close())
          }),
        forTurn: (conversation) =>
          Effect.gen(function*() {
            const groups = groupsOf(conversation)
            if (groups.length === 0) return noMcpTools
            yield* Effect.promise(() => Promise.all(groups.map((g) => g.ready)))
            return turnTools(groups)
          })
      }
    })
  )
