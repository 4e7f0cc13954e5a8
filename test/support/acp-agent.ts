import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as acp from "@agentclientprotocol/sdk"
import { afterEach, beforeEach } from "vitest"

import { validateAgentMessage } from "./acp-schema"
import { type FakeModelServer, startFakeModelServer } from "./FakeModelServer"

export const MM = path.resolve("dist/mm.js")

const projects: Array<string> = []

/** Removes the projects made so far. */
export const removeProjects = (): void => {
  for (const dir of projects.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

/** A temporary project with an agent.yaml; `dir` is realpath'd so paths compare equal. */
export const makeProject = (yaml: string): { readonly dir: string; readonly config: string } => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-acp-")))
  projects.push(dir)
  const config = path.join(dir, "agent.yaml")
  fs.writeFileSync(config, yaml)
  return { dir, config }
}

export interface ConfigOptions {
  readonly url: string
  readonly permissions?: "ask" | "auto" | "allow"
  readonly sessionsDir?: string
  readonly system?: string
  readonly enabled?: boolean
  readonly keepTurns?: number
  readonly extra?: string
}

export const configYaml = (o: ConfigOptions): string =>
  [
    "model:",
    `  url: ${o.url}`,
    "  name: fake-model",
    `system: ${JSON.stringify(o.system ?? "You are a test agent.")}`,
    "watchdogTimeout: 5",
    `permissions: ${o.permissions ?? "allow"}`,
    "compaction:",
    "  auto: false",
    ...(o.keepTurns === undefined ? [] : [`  keepTurns: ${o.keepTurns}`]),
    "sessions:",
    `  enabled: ${o.enabled ?? true}`,
    ...(o.sessionsDir === undefined ? [] : [`  dir: ${JSON.stringify(o.sessionsDir)}`]),
    "skills:",
    "  dirs: []",
    o.extra ?? ""
  ].join("\n")

export interface Traffic {
  readonly direction: "in" | "out"
  readonly line: string
  readonly message: any
}

export interface AgentProcess {
  readonly child: ChildProcessWithoutNullStreams
  /** The client side, connected to the agent's stdio. */
  readonly agent: acp.ClientContext
  /** Every `session/update` notification received, in order. */
  readonly updates: Array<acp.SessionNotification>
  /** Every `session/request_permission` received, in order. */
  readonly permissionRequests: Array<acp.RequestPermissionRequest>
  /** Every line on the wire, both ways, in order ("out" = written by the agent). */
  readonly traffic: Array<Traffic>
  readonly stderr: () => string
  /** Writes a raw line to the agent's stdin, bypassing the client. */
  readonly writeRaw: (line: string) => void
  /** Problems found in the agent's messages: not JSON, or not matching the ACP schema. */
  readonly invalid: () => Array<string>
  /** Initializes as an editor offering nothing, or offering `capabilities`. */
  readonly initialize: (capabilities?: acp.ClientCapabilities) => Promise<acp.InitializeResponse>
  /** Waits until `predicate` holds for the updates received so far. */
  readonly waitFor: (
    predicate: (updates: ReadonlyArray<acp.SessionNotification>) => boolean,
    timeoutMs?: number
  ) => Promise<void>
  readonly kill: () => Promise<void>
  /** Closes stdin and waits for the agent to exit on its own. */
  readonly close: () => Promise<number | null>
}

export type PermissionAnswer = (
  request: acp.RequestPermissionRequest
) => acp.RequestPermissionResponse | Promise<acp.RequestPermissionResponse>

/** What a test editor does when the agent uses its files or terminals (each throws to fail the request). */
export interface EditorSide {
  readonly readTextFile?: (
    params: acp.ReadTextFileRequest
  ) => acp.ReadTextFileResponse | Promise<acp.ReadTextFileResponse>
  readonly writeTextFile?: (
    params: acp.WriteTextFileRequest
  ) => acp.WriteTextFileResponse | Promise<acp.WriteTextFileResponse>
  readonly createTerminal?: (
    params: acp.CreateTerminalRequest
  ) => acp.CreateTerminalResponse | Promise<acp.CreateTerminalResponse>
  readonly terminalOutput?: (
    params: acp.TerminalOutputRequest
  ) => acp.TerminalOutputResponse | Promise<acp.TerminalOutputResponse>
  readonly waitForTerminalExit?: (
    params: acp.WaitForTerminalExitRequest
  ) => acp.WaitForTerminalExitResponse | Promise<acp.WaitForTerminalExitResponse>
  readonly killTerminal?: (
    params: acp.KillTerminalRequest
  ) => acp.KillTerminalResponse | Promise<acp.KillTerminalResponse>
  readonly releaseTerminal?: (
    params: acp.ReleaseTerminalRequest
  ) => acp.ReleaseTerminalResponse | Promise<acp.ReleaseTerminalResponse>
}

const missing = (method: string) => () => {
  throw acp.RequestError.methodNotFound(method)
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Starts `node dist/mm.js acp` in `cwd` with `AGENT_CONFIG`, and connects the SDK's own client to it. */
export const startAgent = (options: {
  readonly cwd: string
  readonly config: string
  readonly onPermission?: PermissionAnswer
  readonly editor?: EditorSide
  /** Set in (or, undefined, taken out of) the agent's environment. */
  readonly env?: Record<string, string | undefined>
}): AgentProcess => {
  const editor = options.editor ?? {}
  const child = spawn(process.execPath, [MM, "acp"], {
    cwd: options.cwd,
    env: { ...process.env, AGENT_CONFIG: options.config, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const traffic: Array<Traffic> = []
  const problems: Array<string> = []
  const methods = new Map<unknown, string>()
  let stderr = ""
  child.stderr.setEncoding("utf8")
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk
  })

  const record = (direction: "in" | "out", line: string) => {
    if (line.trim() === "") return
    let message: any
    try {
      message = JSON.parse(line)
    } catch {
      if (direction === "out") problems.push(`not JSON on stdout: ${line.slice(0, 200)}`)
      traffic.push({ direction, line, message: undefined })
      return
    }
    traffic.push({ direction, line, message })
    if (direction === "in") {
      if (message !== null && typeof message === "object" && "method" in message && "id" in message) {
        methods.set(message.id, message.method)
      }
      return
    }
    for (const problem of validateAgentMessage(message, (id) => methods.get(id))) {
      problems.push(`${line.slice(0, 300)}\n  → ${problem}`)
    }
  }

  let pendingOut = ""
  const readable = new ReadableStream<Uint8Array>({
    start(controller) {
      child.stdout.on("data", (chunk: Buffer) => {
        pendingOut += chunk.toString("utf8")
        let newline = pendingOut.indexOf("\n")
        while (newline >= 0) {
          record("out", pendingOut.slice(0, newline))
          pendingOut = pendingOut.slice(newline + 1)
          newline = pendingOut.indexOf("\n")
        }
        controller.enqueue(new Uint8Array(chunk))
      })
      child.stdout.on("end", () => {
        if (pendingOut !== "") record("out", pendingOut)
        try {
          controller.close()
        } catch {
          // already closed
        }
      })
    }
  })
  const decoder = new TextDecoder()
  let pendingIn = ""
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      pendingIn += decoder.decode(chunk, { stream: true })
      let newline = pendingIn.indexOf("\n")
      while (newline >= 0) {
        record("in", pendingIn.slice(0, newline))
        pendingIn = pendingIn.slice(newline + 1)
        newline = pendingIn.indexOf("\n")
      }
      return new Promise<void>((resolve, reject) => {
        if (child.stdin.destroyed) return resolve()
        child.stdin.write(chunk, (error) => (error ? reject(error) : resolve()))
      })
    }
  })
  child.stdin.on("error", () => undefined)

  const updates: Array<acp.SessionNotification> = []
  const permissionRequests: Array<acp.RequestPermissionRequest> = []
  const connection = acp
    .client({ name: "mm-test" })
    .onNotification(acp.methods.client.session.update, ({ params }) => {
      updates.push(params)
    })
    .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
      permissionRequests.push(params)
      return options.onPermission === undefined ? { outcome: { outcome: "cancelled" } } : options.onPermission(params)
    })
    .onRequest(
      acp.methods.client.fs.readTextFile,
      ({ params }) => (editor.readTextFile ?? missing("fs/read_text_file"))(params)
    )
    .onRequest(
      acp.methods.client.fs.writeTextFile,
      ({ params }) => (editor.writeTextFile ?? missing("fs/write_text_file"))(params)
    )
    .onRequest(
      acp.methods.client.terminal.create,
      ({ params }) => (editor.createTerminal ?? missing("terminal/create"))(params)
    )
    .onRequest(
      acp.methods.client.terminal.output,
      ({ params }) => (editor.terminalOutput ?? missing("terminal/output"))(params)
    )
    .onRequest(
      acp.methods.client.terminal.waitForExit,
      ({ params }) => (editor.waitForTerminalExit ?? missing("terminal/wait_for_exit"))(params)
    )
    .onRequest(
      acp.methods.client.terminal.kill,
      ({ params }) => (editor.killTerminal ?? missing("terminal/kill"))(params)
    )
    .onRequest(
      acp.methods.client.terminal.release,
      ({ params }) => (editor.releaseTerminal ?? missing("terminal/release"))(params)
    )
    .connect(acp.ndJsonStream(writable, readable))

  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))

  return {
    child,
    agent: connection.agent,
    updates,
    permissionRequests,
    traffic,
    stderr: () => stderr,
    writeRaw: (line) => {
      record("in", line)
      child.stdin.write(`${line}\n`)
    },
    invalid: () => [...problems],
    initialize: (capabilities) =>
      connection.agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: capabilities ?? { fs: { readTextFile: false, writeTextFile: false }, terminal: false }
      }),
    waitFor: async (predicate, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      while (!predicate(updates)) {
        if (Date.now() > deadline) {
          throw new Error(`timed out waiting for updates; got ${JSON.stringify(updates).slice(0, 2000)}`)
        }
        await sleep(10)
      }
    },
    kill: async () => {
      connection.close()
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      await exited
    },
    close: async () => {
      child.stdin.end()
      const code = await exited
      connection.close()
      return code
    }
  }
}

/** The text of every update of one kind, for one session, joined. */
export const textOf = (
  updates: ReadonlyArray<acp.SessionNotification>,
  kind: "agent_message_chunk" | "user_message_chunk"
): string =>
  updates
    .map((n) => n.update)
    .filter((u): u is Extract<acp.SessionUpdate, { sessionUpdate: typeof kind }> => u.sessionUpdate === kind)
    .map((u) => (u.content.type === "text" ? u.content.text : ""))
    .join("")

export const readSession = (file: string): any => JSON.parse(fs.readFileSync(file, "utf8"))

/** The JSON-RPC error a request answered with; throws when it answered without one. */
export const errorOf = async (promise: Promise<unknown>): Promise<{ code: number; message: string }> => {
  try {
    await promise
  } catch (error) {
    return error as { code: number; message: string }
  }
  throw new Error("expected a JSON-RPC error")
}

/** A new agent on the project that loads session `id`: the updates of its replay, and the agent. */
export const replayOf = async (agent: AgentProcess, id: string, cwd: string) => {
  await agent.initialize()
  await agent.agent.request(acp.methods.agent.session.load, { sessionId: id, cwd, mcpServers: [] })
  return agent.updates.filter((n) => n.sessionId === id).map((n) => n.update) as Array<any>
}

/**
 * Per test: a fresh fake model server, and every agent started through `start` killed after,
 * with the temporary projects removed.
 */
export const useAgents = (serverOptions: Parameters<typeof startFakeModelServer>[0] = {}) => {
  let fake: FakeModelServer | undefined
  const agents: Array<AgentProcess> = []
  beforeEach(async () => {
    fake = await startFakeModelServer(serverOptions)
  })
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.kill()
    await fake?.close()
    removeProjects()
  })
  return {
    fake: (): FakeModelServer => fake!,
    start: (options: Parameters<typeof startAgent>[0]): AgentProcess => {
      const agent = startAgent(options)
      agents.push(agent)
      return agent
    }
  }
}
