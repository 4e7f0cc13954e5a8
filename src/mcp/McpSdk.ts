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

import { firstLine } from "../lib/OneLine"
import { forgetProcess, killProcessOnExit } from "../lib/ProcessGroups"
import { cappedFetch, type ReplyTooLarge } from "./McpReplyCap"
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

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
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

/**
 * Streamable HTTP; a server that answers it with 404 or 405 is an old one, spoken to over SSE.
 * Either way each reply is held to the stdio limit (McpReplyCap.ts); `session.overflowed` hears of
 * a reply cut off.
 */
const httpConnect = async (session: Session, target: Extract<ServerTarget, { kind: "http" }>): Promise<Transport> => {
  const client = session.client
  const url = new URL(target.url)
  const requestInit = { headers: { ...target.headers } }
  const fetch = cappedFetch((error) => {
    for (const listener of [...session.overflowed]) listener(error)
  })
  const streamable = new StreamableHTTPClientTransport(url, { requestInit, fetch })
  try {
    await client.connect(streamable)
    return streamable
  } catch (cause) {
    if (!(cause instanceof StreamableHTTPError && (cause.code === 404 || cause.code === 405))) throw cause
    await streamable.close().catch(() => undefined)
    const sse = new SSEClientTransport(url, { requestInit, fetch })
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

/** One connection while it lives: the SDK's client, the stdio transport of a local server, its pid. */
interface Session {
  readonly client: Client
  readonly stdio: ReturnType<typeof stdioTransport> | undefined
  pid: number | undefined
  /** Set once `stop` began: the connection ending then is no loss. */
  closing: boolean
  /** Told when a remote server's reply is cut off for its size: the requests waiting fail. */
  readonly overflowed: Set<(error: ReplyTooLarge) => void>
}

/**
 * `work` given a signal of its own, which aborts with `signal` or when a reply is cut off for its
 * size (the SDK then forgets the request); in that case `work` fails at once with that error.
 */
const watchingOverflow = async <A>(
  session: Session,
  signal: AbortSignal | undefined,
  work: (signal: AbortSignal) => Promise<A>
): Promise<A> => {
  const local = new AbortController()
  const follow = () => local.abort(signal?.reason)
  signal?.addEventListener("abort", follow, { once: true })
  if (signal?.aborted === true) follow()
  let listener: ((error: ReplyTooLarge) => void) | undefined
  const overflow = new Promise<never>((_, reject) => {
    listener = (error) => {
      reject(error)
      local.abort(error)
    }
    session.overflowed.add(listener)
  })
  try {
    return await Promise.race([work(local.signal), overflow])
  } finally {
    session.overflowed.delete(listener!)
    signal?.removeEventListener("abort", follow)
  }
}

/** Sends `which` to a local server still alive; false when there is none. */
const signalServer = (session: Session, which: NodeJS.Signals): boolean => {
  const pid = session.pid
  if (pid === undefined || !isAlive(pid)) return false
  try {
    process.kill(pid, which)
  } catch {
    // gone meanwhile
  }
  return true
}

/** Ends stdin (the polite way), then SIGTERM, then SIGKILL, and waits until the process is gone. */
const stop = async (session: Session): Promise<void> => {
  session.closing = true
  const closed = session.client.close().catch(() => undefined)
  await Promise.race([closed, sleep(500)])
  if (signalServer(session, "SIGTERM")) await Promise.race([closed, sleep(1500)])
  if (signalServer(session, "SIGKILL")) await Promise.race([closed, sleep(1000)])
  if (session.pid !== undefined) forgetProcess(session.pid)
}

/** `reason`, followed by the last line the server wrote on stderr, if any. */
const withStderr = (session: Session, reason: string): string => {
  const said = session.stdio?.lastStderr() ?? ""
  return said === "" ? reason : `${reason} (${said})`
}

/** Starts a local server (its process killed if mm exits) or reaches a remote one. */
const openTransport = async (session: Session, target: ServerTarget): Promise<void> => {
  const stdio = session.stdio
  if (stdio !== undefined) {
    const started = session.client.connect(stdio.transport)
    session.pid = stdio.transport.pid ?? undefined
    if (session.pid !== undefined) killProcessOnExit(session.pid)
    await started
    session.pid = stdio.transport.pid ?? session.pid
    if (session.pid !== undefined) killProcessOnExit(session.pid)
  } else {
    await httpConnect(session, target as Extract<ServerTarget, { kind: "http" }>)
  }
}

/** Opens the connection and lists the tools, within `timeoutMs`; on failure stops what was started. */
const openAndList = async (
  session: Session,
  target: ServerTarget,
  options: { readonly timeoutMs: number; readonly signal?: AbortSignal }
): Promise<Array<ListedTool>> => {
  try {
    return await timeoutAfter(
      options.timeoutMs,
      () => `no answer within ${seconds(options.timeoutMs)}`,
      abortable(options.signal, async () => {
        await openTransport(session, target)
        return watchingOverflow(session, undefined, () => listAll(session.client, options.timeoutMs))
      })
    )
  } catch (cause) {
    session.pid ??= session.stdio?.transport.pid ?? undefined
    await stop(session)
    if (cause instanceof CallFailure) throw cause
    throw new CallFailure(withStderr(session, errorText(cause)), false)
  }
}

/** Calls one tool; any failure is a CallFailure saying what went wrong. */
const callTool = (session: Session): Connection["call"] => async (tool, args, { timeoutMs, signal }) => {
  try {
    const result = await watchingOverflow(
      session,
      signal,
      (watched) =>
        session.client.callTool({ name: tool, arguments: args }, undefined, { timeout: timeoutMs, signal: watched })
    )
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
      throw new CallFailure(withStderr(session, "stopped during the call"), false, true)
    }
    throw new CallFailure(`failed the call: ${errorText(cause)}`, false)
  }
}

/**
 * Starts (stdio) or reaches (http) one server and lists its tools, within `timeoutMs`.
 * On any failure nothing is left running.
 */
export const connect = async (
  target: ServerTarget,
  options: { readonly timeoutMs: number; readonly version: string; readonly signal?: AbortSignal }
): Promise<Connection> => {
  const session: Session = {
    client: new Client({ name: "mm", version: options.version }, { capabilities: {} }),
    stdio: target.kind === "stdio" ? stdioTransport(target) : undefined,
    pid: undefined,
    closing: false,
    overflowed: new Set()
  }
  const tools = await openAndList(session, target, options)
  const connection: Connection = {
    tools,
    pid: session.pid,
    onLost: undefined,
    call: callTool(session),
    close: () => stop(session)
  }
  session.client.onclose = () => {
    if (session.pid !== undefined) forgetProcess(session.pid)
    if (!session.closing) {
      connection.onLost?.(
        withStderr(session, session.stdio !== undefined ? "the server exited" : "the connection closed")
      )
    }
  }
  return connection
}
