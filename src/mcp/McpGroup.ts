import { messageOf } from "../lib/OneLine"
import type { SecretRegistry } from "../lib/Secrets"
import { VERSION } from "../lib/Version"
import { mcpToolName } from "../tools/ToolNames"
import type { Connection, ServerTarget } from "./McpSdk"

/** How long a server may take to start and list its tools. */
const STARTUP_TIMEOUT_MS = 10_000

/**
 * Past this many bytes of tool definitions (names, descriptions, input schemas) a server is
 * warned about: they go with every request to the model (5,000 tools made each one 3.5 MB).
 */
const TOOL_SCHEMAS_WARN_BYTES = 256 * 1024

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

type ServerState =
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

const describeStart = (group: GroupState, name: string, reason: string) =>
  `mcp server "${name}" did not start: ${group.secrets.redact(reason)}`
const describeLost = (group: GroupState, name: string, reason: string) =>
  `mcp server "${name}" stopped: ${group.secrets.redact(reason)}`

/** What a group of servers keeps while they run. */
interface GroupState {
  readonly entries: ReadonlyArray<ServerEntry>
  readonly timeoutMs: number
  readonly states: Map<string, ServerState>
  readonly connections: Map<string, Connection>
  readonly problems: Array<string>
  readonly lostTold: Set<string>
  readonly stopping: AbortController
  readonly onProblem: ((line: string) => void) | undefined
  /** The program's secrets: what a server says is redacted of them. */
  readonly secrets: SecretRegistry
  closed: boolean
  settled: boolean
}

const problem = (group: GroupState, line: string) => {
  group.problems.push(line)
  group.onProblem?.(line)
}

/** A server's tools under the names the model calls (`mcp__<server>__<tool>`, made unique). */
const toolsOf = (entry: ServerEntry, connection: Connection): Array<McpTool> => {
  const taken = new Set<string>()
  return connection.tools.map((tool) => {
    let name = mcpToolName(entry.name, tool.name)
    if (taken.has(name)) name = mcpToolName(entry.name, `${tool.name}\u0000${taken.size}`)
    taken.add(name)
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

/** The bytes a server's tools add to every request, about as the model client sends them. */
const schemaBytes = (tools: ReadonlyArray<McpTool>): number =>
  tools.reduce(
    (sum, t) =>
      sum + Buffer.byteLength(JSON.stringify({ name: t.name, description: t.description, parameters: t.inputSchema })),
    0
  )

const mebibytes = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** The line for a server whose tools weigh more than TOOL_SCHEMAS_WARN_BYTES, or undefined. */
const heavyToolsLine = (server: string, tools: ReadonlyArray<McpTool>): string | undefined => {
  const bytes = schemaBytes(tools)
  if (bytes <= TOOL_SCHEMAS_WARN_BYTES) return undefined
  return `mcp server "${server}" declares ${tools.length} tools (${mebibytes(bytes)} of definitions), sent with ` +
    `every request — disable it (enabled: false) or use a server with fewer tools`
}

/** Starts one server; its failure, now or later, becomes its state and one problem line. */
const startServer = async (group: GroupState, entry: ServerEntry): Promise<void> => {
  const target = entry.target
  if (target.kind === "invalid") {
    group.states.set(entry.name, { _tag: "Failed", reason: target.reason })
    return problem(group, describeStart(group, entry.name, target.reason))
  }
  try {
    const { connect } = await loadSdk()
    const connection = await connect(target, {
      timeoutMs: group.timeoutMs,
      version: VERSION,
      signal: group.stopping.signal
    })
    if (group.closed) return void (await connection.close())
    group.connections.set(entry.name, connection)
    const tools = toolsOf(entry, connection)
    group.states.set(entry.name, { _tag: "Ready", tools })
    const heavy = heavyToolsLine(entry.name, tools)
    if (heavy !== undefined) problem(group, heavy)
    connection.onLost = (reason) => {
      group.connections.delete(entry.name)
      group.states.set(entry.name, { _tag: "Failed", reason: `stopped: ${group.secrets.redact(reason)}` })
      if (!group.lostTold.has(entry.name)) problem(group, describeLost(group, entry.name, reason))
    }
  } catch (cause) {
    if (group.closed) return
    const reason = messageOf(cause)
    group.states.set(entry.name, { _tag: "Failed", reason: `did not start: ${group.secrets.redact(reason)}` })
    problem(group, describeStart(group, entry.name, reason))
  }
}

/** The server's end was told as a failed call: its pending "stopped" line is dropped. */
const toldLost = (group: GroupState, server: string) => {
  group.lostTold.add(server)
  const line = describeLost(group, server, "")
  for (let i = group.problems.length - 1; i >= 0; i--) {
    if (group.problems[i].startsWith(line.slice(0, line.indexOf(":")))) group.problems.splice(i, 1)
  }
}

const closeGroup = async (group: GroupState, ready: Promise<void>) => {
  group.closed = true
  group.stopping.abort()
  const open = [...group.connections.values()]
  group.connections.clear()
  await Promise.all([...open.map((c) => c.close()), ready])
}

/** Starts every enabled server of `entries` in the background. */
export const startGroup = (
  entries: ReadonlyArray<ServerEntry>,
  options: {
    readonly secrets: SecretRegistry
    readonly timeoutMs?: number
    readonly onProblem?: (line: string) => void
  }
): McpGroup => {
  const group: GroupState = {
    entries,
    timeoutMs: options.timeoutMs ?? STARTUP_TIMEOUT_MS,
    states: new Map(entries.map((e) => [e.name, e.enabled ? { _tag: "Starting" } : { _tag: "Disabled" }])),
    connections: new Map(),
    problems: [],
    lostTold: new Set(),
    stopping: new AbortController(),
    onProblem: options.onProblem,
    secrets: options.secrets,
    closed: false,
    settled: false
  }
  const ready = Promise.all(entries.filter((e) => e.enabled).map((e) => startServer(group, e))).then(() => {
    group.settled = true
  })
  return {
    servers: () =>
      entries.map((e) => ({
        name: e.name,
        where: group.secrets.redact(whereOf(e.target)),
        state: group.states.get(e.name) ?? { _tag: "Starting" }
      })),
    ready,
    settled: () => group.settled,
    takeProblems: () => group.problems.splice(0),
    connection: (server) => group.connections.get(server),
    toldLost: (server) => toldLost(group, server),
    close: () => closeGroup(group, ready)
  }
}
