// session/load of a 5,000-message session through `mm acp`, request to response (the performance budget: ≤ 300 ms).
// Standalone: needs dist/mm.js (npm run build); prints medians against the budget, then one JSON line.
// MM_BENCH_BASELINE=DIR (a dist/ built from another commit) loads the same sessions with that build too,
// interleaved with this one, and prints the ratio of the first loads (now ÷ baseline).
// Every edit_file call has its change record and blobs, so the replay's whole-file diffs are read too.
//
// Two clients drive fresh agents. The budget is checked on the wire: a lean reader writes the
// request and timestamps the response line as it leaves the agent. The SDK's own client
// (acp.client()) is run too and its time printed: it also checks that the load completes as an
// editor sees it, but it validates every message with zod in this same process, and that
// parsing, not the agent, is most of what it measures.
import { spawn } from "node:child_process"
import * as NodeCrypto from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Readable, Writable } from "node:stream"

import * as acp from "@agentclientprotocol/sdk"

const MESSAGES = 5000
const PROCESSES = Number(process.env.MM_BENCH_PROCESSES ?? 5)
const LOADS_PER_PROCESS = Number(process.env.MM_BENCH_LOADS ?? 5)
const BUDGET_MS = 300
const mm = path.resolve("dist/mm.js")
if (!fs.existsSync(mm)) throw new Error(`${mm} is missing: run npm run build first`)
const baselineDir = process.env.MM_BENCH_BASELINE
const baseline = baselineDir === undefined ? undefined : path.resolve(baselineDir, "mm.js")
if (baseline !== undefined && !fs.existsSync(baseline)) throw new Error(`${baseline} is missing`)

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-acp-")))
const sessionsDir = path.join(project, ".mm", "sessions")
fs.mkdirSync(sessionsDir, { recursive: true, mode: 0o700 })
const config = path.join(project, "agent.yaml")
fs.writeFileSync(config, "model:\n  url: http://127.0.0.1:9/v1\nsessions:\n  enabled: true\nskills:\n  dirs: []\n")

const output = (i: number) =>
  `exit code 0\n${
    Array.from({ length: 12 }, (_, line) => `src/module${i}/file${line}.ts: ${"x".repeat(60)}`).join("\n")
  }`

/** A long working session: questions, tool calls of every kind with their results, answers. */
const conversation = () => {
  const messages: Array<Record<string, unknown>> = [{ role: "system", content: "You are mm." }]
  for (let i = 0; messages.length < MESSAGES; i++) {
    const id = `call_${i}`
    const call = i % 3 === 0
      ? { name: "bash", arguments: JSON.stringify({ command: `grep -rn "thing${i}" src` }) }
      : i % 3 === 1
      ? { name: "read_file", arguments: JSON.stringify({ path: `src/module${i}/index.ts` }) }
      : {
        name: "edit_file",
        arguments: JSON.stringify({ path: `src/module${i}/index.ts`, old: `const a${i} = 1`, new: `const a${i} = 2` })
      }
    messages.push({ role: "user", content: `Question ${i}: please look at module ${i} and fix what is wrong with it.` })
    messages.push({
      role: "assistant",
      content: `Let me look at module ${i}.`,
      tool_calls: [{ id, type: "function", function: call }]
    })
    messages.push({ role: "tool", tool_call_id: id, content: output(i), ...(i % 17 === 0 ? { failed: true } : {}) })
    messages.push({
      role: "assistant",
      content: `Module ${i} is fixed: the constant was wrong. ${"Explanation. ".repeat(10)}`
    })
  }
  return messages.slice(0, MESSAGES)
}

const messages = conversation()
/** The change records of the edit_file calls, with their blobs under .mm/checkpoints. */
const changes = (() => {
  const blobs = path.join(project, ".mm", "checkpoints")
  fs.mkdirSync(blobs, { recursive: true, mode: 0o700 })
  const put = (text: string) => {
    const hash = NodeCrypto.createHash("sha256").update(text).digest("hex")
    fs.writeFileSync(path.join(blobs, hash), text, { mode: 0o600 })
    return hash
  }
  const records: Array<Record<string, unknown>> = []
  for (const [i, message] of messages.entries()) {
    const call = (message.tool_calls as Array<any> | undefined)?.[0]
    if (call?.function.name !== "edit_file") continue
    const { new: after, old: before, path: file } = JSON.parse(call.function.arguments)
    const body = `// module ${i}\n${"export const filler = 0\n".repeat(80)}`
    records.push({
      turn: Math.floor(i / 4) + 1,
      at: new Date().toISOString(),
      tool_call_id: call.id,
      path: file,
      before: put(`${before}\n${body}`),
      after: put(`${after}\n${body}`)
    })
  }
  return records
})()
const ids: Array<string> = []
for (let i = 0; i < LOADS_PER_PROCESS; i++) {
  const id = `20260101-000000-${(0xbe0000 + i).toString(16).padStart(8, "0")}`
  const now = new Date().toISOString()
  const session = {
    version: 1,
    id,
    cwd: project,
    createdAt: now,
    updatedAt: now,
    title: "bench",
    turns: MESSAGES / 4,
    messages,
    errors: [],
    ...(process.env.MM_BENCH_NO_CHANGES === undefined ? { changes } : {})
  }
  fs.writeFileSync(path.join(sessionsDir, `${id}.json`), JSON.stringify(session, null, 2), { mode: 0o600 })
  ids.push(id)
}
const fileBytes = fs.statSync(path.join(sessionsDir, `${ids[0]}.json`)).size

interface Loads {
  /** Milliseconds from request to response, one per session, the first one in a fresh agent. */
  readonly times: Array<number>
  readonly notifications: number
}

const startMm = (program: string = mm) =>
  spawn(process.execPath, [program, "acp"], {
    cwd: project,
    env: { ...process.env, AGENT_CONFIG: config },
    stdio: ["pipe", "pipe", "inherit"]
  })

/** A lean JSON-RPC client: the response is timed as soon as its line is out of the agent. */
const loadOnTheWire = async (program: string = mm): Promise<Loads> => {
  const child = startMm(program)
  let pending = ""
  let notifications = 0
  let awaited: { readonly id: number; readonly done: (at: number) => void } | undefined
  child.stdout.setEncoding("utf8")
  child.stdout.on("data", (text: string) => {
    const at = performance.now()
    pending += text
    let newline = pending.indexOf("\n")
    while (newline >= 0) {
      const line = pending.slice(0, newline)
      pending = pending.slice(newline + 1)
      newline = pending.indexOf("\n")
      if (line.startsWith("{\"jsonrpc\":\"2.0\",\"method\":\"session/update\"")) notifications++
      else if (awaited !== undefined && line.startsWith(`{"jsonrpc":"2.0","id":${awaited.id},`)) {
        const { done } = awaited
        awaited = undefined
        done(at)
      }
    }
  })
  const request = (id: number, method: string, params: unknown) =>
    new Promise<number>((resolve) => {
      awaited = { id, done: resolve }
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
    })
  await request(0, "initialize", { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} })
  const times: Array<number> = []
  for (const [i, sessionId] of ids.entries()) {
    const started = performance.now()
    times.push((await request(i + 1, "session/load", { sessionId, cwd: project, mcpServers: [] })) - started)
  }
  child.kill("SIGKILL")
  return { times, notifications: notifications / ids.length }
}

/** The SDK's own client, as in the tests: the load resolves once every notification before it was handled. */
const loadThroughSdkClient = async (): Promise<Loads> => {
  const child = startMm()
  let notifications = 0
  const connection = acp
    .client({ name: "bench" })
    .onNotification(acp.methods.client.session.update, () => {
      notifications++
    })
    .connect(
      acp.ndJsonStream(
        Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout) as unknown as ReadableStream<Uint8Array>
      )
    )
  await connection.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {}
  })
  const times: Array<number> = []
  for (const sessionId of ids) {
    const started = performance.now()
    await connection.agent.request(acp.methods.agent.session.load, { sessionId, cwd: project, mcpServers: [] })
    times.push(performance.now() - started)
  }
  connection.close()
  child.kill("SIGKILL")
  return { times, notifications: notifications / ids.length }
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

await loadOnTheWire() // warm the file cache and the bundle
const cold: Array<number> = []
const warm: Array<number> = []
const sdkCold: Array<number> = []
const sdkWarm: Array<number> = []
let notifications = 0
const baselineCold: Array<number> = []
if (baseline !== undefined) await loadOnTheWire(baseline)
for (let i = 0; i < PROCESSES; i++) {
  if (baseline !== undefined) baselineCold.push((await loadOnTheWire(baseline)).times[0])
  const wire = await loadOnTheWire()
  cold.push(wire.times[0])
  warm.push(...wire.times.slice(1))
  notifications = wire.notifications
  const sdk = await loadThroughSdkClient()
  if (sdk.notifications !== wire.notifications) {
    throw new Error(`the SDK client got ${sdk.notifications} notifications, the wire ${wire.notifications}`)
  }
  sdkCold.push(sdk.times[0])
  sdkWarm.push(...sdk.times.slice(1))
}
fs.rmSync(project, { recursive: true, force: true })

const ms = (x: number) => +x.toFixed(1)
const result = {
  bench: "acp-load",
  messages: MESSAGES,
  fileBytes,
  notificationsPerLoad: notifications,
  processes: PROCESSES,
  coldMedianMs: ms(median(cold)),
  warmMedianMs: warm.length === 0 ? null : ms(median(warm)),
  sdkClientColdMedianMs: ms(median(sdkCold)),
  sdkClientWarmMedianMs: sdkWarm.length === 0 ? null : ms(median(sdkWarm)),
  budgetMs: BUDGET_MS,
  coldRatio: +(median(cold) / BUDGET_MS).toFixed(3),
  baselineColdMedianMs: baselineCold.length === 0 ? null : ms(median(baselineCold)),
  ratioToBaseline: baselineCold.length === 0 ? null : +(median(cold) / median(baselineCold)).toFixed(3)
}
console.log(
  `session/load of ${MESSAGES} messages (${
    (fileBytes / 1e6).toFixed(1)
  } MB, ${notifications} notifications), request to response, ` +
    `median of ${PROCESSES} fresh agents: first load ${result.coldMedianMs} ms, later loads ${result.warmMedianMs} ms ` +
    `— budget ≤ ${BUDGET_MS} ms (first load at ${(result.coldRatio * 100).toFixed(0)}% of it). ` +
    `Through acp.client() in this process: ${result.sdkClientColdMedianMs} ms / ${result.sdkClientWarmMedianMs} ms`
)
console.log(
  `  session/load, first load: ${result.coldMedianMs} ms  ${result.coldMedianMs <= BUDGET_MS ? "PASS" : "FAIL"}`
)
if (result.ratioToBaseline !== null) {
  console.log(
    `  against ${baselineDir} in the same runs: first load ${result.baselineColdMedianMs} ms, ` +
      `now ÷ baseline ${result.ratioToBaseline}×`
  )
}
console.log(JSON.stringify(result))
