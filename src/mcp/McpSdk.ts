/**
 * Everything that touches `@modelcontextprotocol/sdk`. Built as its own file
 * (dist/mm-mcp.cjs) and loaded only when an MCP server is to be started, so that mm starts
 * as fast without one. See docs/how-to/mcp.md.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js"
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js"

import type { McpContent } from "./McpTools"

export type ServerTarget =
  | {
    readonly kind: "stdio"
    readonly command: string
    readonly args: ReadonlyArray<string>
    readonly env: Readonly<Record<string, string>>
    readonly cwd: string
  }
  | { readonly kind: "http"; readonly url: string; readonly headers: Readonly<Record<string, string>> }

export interface ListedTool {
  readonly name: string
  readonly description: string
  readonly inputSchema: Record<string, unknown>
  readonly readOnly: boolean
}

export interface CallOutcome {
  readonly content: ReadonlyArray<McpContent>
  readonly structuredContent?: unknown
  readonly isError: boolean
}

/** Why a request failed, in words: `timeout` when the server did not answer in time. */
export class CallFailure extends Error {
  constructor(
    message: string,
    readonly timeout: boolean,
    readonly lost = false
  ) {
    super(message)
  }
}

export interface Connection {
  readonly tools: ReadonlyArray<ListedTool>
  readonly pid: number | undefined
  readonly call: (
    tool: string,
    args: Record<string, unknown>,
    options: { readonly timeoutMs: number; readonly signal: AbortSignal }
  ) => Promise<CallOutcome>
  /** Ends the connection; a local server is stopped (and killed if it does not go). */
  readonly close: () => Promise<void>
  /** Called once if the connection ends without `close` (the server exited or the stream broke). */
  onLost: ((reason: string) => void) | undefined
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref())

const firstLine = (text: string): string => text.trim().split("\n")[0]?.trim() ?? ""

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Server processes still running; killed if mm exits before closing them. */
const livePids = new Set<number>()
let exitHookInstalled = false
const watchPid = (pid: number) => {
  livePids.add(pid)
  if (exitHookInstalled) return
  exitHookInstalled = true
  process.once("exit", () => {
    for (const live of livePids) {
      try {
        process.kill(live, "SIGKILL")
      } catch {
        // gone already
      }
    }
  })
}

const timeoutAfter = <A>(ms: number, what: () => string, work: Promise<A>): Promise<A> => {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CallFailure(what(), true)), ms)
  })
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer))
}

/** `work`, unless `signal` aborts first (mm is closing while the server starts). */
const abortable = <A>(signal: AbortSignal | undefined, work: () => Promise<A>): Promise<A> =>
  signal === undefined
    ? work()
    : signal.aborted
    ? Promise.reject(new CallFailure("stopped before it had started", false))
    : Promise.race([
      work(),
      new Promise<never>((_, reject) =>
        signal.addEventListener("abort", () => reject(new CallFailure("stopped before it had started", false)), {
          once: true
        })
      )
    ])

const seconds = (ms: number) => `${Number.isInteger(ms / 1000) ? ms / 1000 : (ms / 1000).toFixed(1)} s`

const errorText = (cause: unknown): string => {
  if (cause instanceof McpError && cause.code === ErrorCode.ConnectionClosed) return "the connection closed"
  const message = cause instanceof Error ? cause.message : String(cause)
  return firstLine(message.replace(/^MCP error -?\d+: /, "")) || "unknown error"
}

const stdioTransport = (target: Extract<ServerTarget, { kind: "stdio" }>) => {
  const transport = new StdioClientTransport({
    command: target.command,
    args: [...target.args],
    env: { ...target.env },
    cwd: target.cwd,
    stderr: "pipe"
  })
  let stderrTail = ""
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString("utf8")).slice(-2000)
  })
  return { transport, lastStderr: () => stderrTail.trim().split("\n").pop()?.trim() ?? "" }
}

/** Streamable HTTP; a server that answers it with 404 or 405 is an old one, spoken to over SSE. */
const httpConnect = async (client: Client, target: Extract<ServerTarget, { kind: "http" }>): Promise<Transport> => {
  const url = new URL(target.url)
  const requestInit = { headers: { ...target.headers } }
  const streamable = new StreamableHTTPClientTransport(url, { requestInit })
  try {
    await client.connect(streamable)
    return streamable
  } catch (cause) {
    if (!(cause instanceof StreamableHTTPError && (cause.code === 404 || cause.code === 405))) throw cause
    await streamable.close().catch(() => undefined)
    const sse = new SSEClientTransport(url, { requestInit })
    await client.connect(sse)
    return sse
  }
}

const listAll = async (client: Client, timeoutMs: number): Promise<Array<ListedTool>> => {
  const tools: Array<ListedTool> = []
  let cursor: string | undefined
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: timeoutMs })
    for (const tool of page.tools) {
      tools.push({
        name: tool.name,
        description: tool.description ?? tool.title ?? "",
        inputSchema: tool.inputSchema as Record<string, unknown>,
        readOnly: tool.annotations?.readOnlyHint === true
      })
    }
    cursor = page.nextCursor
  } while (cursor !== undefined)
  return tools
}

/**
 * Starts (stdio) or reaches (http) one server and lists its tools, within `timeoutMs`.
 * On any failure nothing is left running.
 */
export const connect = async (
  target: ServerTarget,
  options: { readonly timeoutMs: number; readonly version: string; readonly signal?: AbortSignal }
): Promise<Connection> => {
  const client = new Client({ name: "mm", version: options.version }, { capabilities: {} })
  const stdio = target.kind === "stdio" ? stdioTransport(target) : undefined
  let closing = false
  let pid: number | undefined
  const signal = (which: NodeJS.Signals) => {
    if (pid === undefined || !isAlive(pid)) return false
    try {
      process.kill(pid, which)
    } catch {
      // gone meanwhile
    }
    return true
  }
  /** Ends stdin (the polite way), then SIGTERM, then SIGKILL, and waits until the process is gone. */
  const stop = async () => {
    closing = true
    const closed = client.close().catch(() => undefined)
    await Promise.race([closed, sleep(500)])
    if (signal("SIGTERM")) await Promise.race([closed, sleep(1500)])
    if (signal("SIGKILL")) await Promise.race([closed, sleep(1000)])
    if (pid !== undefined) livePids.delete(pid)
  }
  const withStderr = (reason: string) => {
    const said = stdio?.lastStderr() ?? ""
    return said === "" ? reason : `${reason} (${said})`
  }
  let tools: Array<ListedTool>
  try {
    tools = await timeoutAfter(
      options.timeoutMs,
      () => `no answer within ${seconds(options.timeoutMs)}`,
      abortable(options.signal, async () => {
        if (stdio !== undefined) {
          const started = client.connect(stdio.transport)
          pid = stdio.transport.pid ?? undefined
          if (pid !== undefined) watchPid(pid)
          await started
          pid = stdio.transport.pid ?? pid
          if (pid !== undefined) watchPid(pid)
        } else {
          await httpConnect(client, target as Extract<ServerTarget, { kind: "http" }>)
        }
        return listAll(client, options.timeoutMs)
      })
    )
  } catch (cause) {
    pid ??= stdio?.transport.pid ?? undefined
    await stop()
    if (cause instanceof CallFailure) throw cause
    throw new CallFailure(withStderr(errorText(cause)), false)
  }

  const connection: Connection = {
    tools,
    pid,
    onLost: undefined,
    call: async (tool, args, { timeoutMs, signal }) => {
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs, signal })
        return {
          content: (result.content ?? []) as ReadonlyArray<McpContent>,
          structuredContent: result.structuredContent,
          isError: result.isError === true
        }
      } catch (cause) {
        if (cause instanceof McpError && cause.code === ErrorCode.RequestTimeout) {
          throw new CallFailure(`did not answer within ${seconds(timeoutMs)}`, true)
        }
        if (cause instanceof McpError && cause.code === ErrorCode.ConnectionClosed) {
          throw new CallFailure(withStderr("stopped during the call"), false, true)
        }
        throw new CallFailure(`failed the call: ${errorText(cause)}`, false)
      }
    },
    close: stop
  }
  client.onclose = () => {
    if (pid !== undefined) livePids.delete(pid)
    if (!closing) connection.onLost?.(withStderr(stdio !== undefined ? "the server exited" : "the connection closed"))
  }
  return connection
}
