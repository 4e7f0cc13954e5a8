// Start-up time of mm against `node -e 0`, measured in the same run. Budgets: `mm --version`
// ≤ 1.5×, start to banner ≤ 1.8×, `mm -p QUESTION` until its request reaches the model server
// ≤ 1.8× (a user who ran mm in the last 10 minutes: V8's code cache and what the server said of
// itself are kept); the same with nothing kept of the server is shown beside, without a budget.
// Runs are interleaved so that a noisy machine slows every contender alike; medians are compared.
// MM_BENCH_BASELINE=DIR (a dist/ built from another commit) times that build too, in the same
// interleaved runs, and prints this build's ratios to it: the before-and-after of a change.
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { startFakeModelServer } from "../test/support/FakeModelServer"

const RUNS = Number(process.env.BENCH_RUNS ?? 15)
const BUDGETS: Record<string, number> = { "mm --version": 1.5, "mm start to banner": 1.8, "mm -p to request": 1.8 }
const bin = path.resolve("dist/mm.js")
if (!fs.existsSync(bin)) throw new Error("dist/mm.js is missing: run `npm run build` first")
const baselineDir = process.env.MM_BENCH_BASELINE
const baselineBin = baselineDir === undefined ? undefined : path.resolve(baselineDir, "mm.js")
if (baselineBin !== undefined && !fs.existsSync(baselineBin)) throw new Error(`no mm.js in ${baselineDir}`)

// BENCH_SERVER_DELAY_MS: the server answers its model list this much later (a remote server's
// round trip, or a local one busy loading), which the banner waits for unless it was kept
const delayMs = Number(process.env.BENCH_SERVER_DELAY_MS ?? 0)
const server = await startFakeModelServer(
  delayMs > 0
    ? { routes: { "GET /v1/models": { body: { object: "list", data: [{ id: "bench", object: "model" }] }, delayMs } } }
    : {}
)
const project = fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-startup-"))
// mm's cache directory (V8's code cache, what the server said) of this run alone
const cacheHome = fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-cache-"))
const env = { ...process.env, XDG_CACHE_HOME: cacheHome, MM_NO_SERVER_CACHE: undefined, MM_NO_CODE_CACHE: undefined }
fs.writeFileSync(
  path.join(project, "agent.yaml"),
  [`model: { url: "${server.url}", name: bench }`, "sessions: { enabled: true }"].join("\n")
)

/** Milliseconds from spawn until `until` shows on stdout (or until exit when undefined). */
const timeRun = (args: ReadonlyArray<string>, until?: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    // stdin is a pipe here, so mm writes its banner on stderr: both streams are watched
    const child = spawn(process.execPath, args, { cwd: project, env, stdio: ["pipe", "pipe", "pipe"] })
    let out = ""
    let done = false
    const finish = () => {
      if (done) return
      done = true
      resolve(Number(process.hrtime.bigint() - started) / 1e6)
    }
    const onData = (data: Buffer) => {
      out += data.toString()
      if (until !== undefined && out.includes(until)) {
        finish()
        child.kill("SIGKILL")
      }
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    child.on("error", reject)
    child.on("exit", () => (until === undefined ? finish() : done || reject(new Error(`no "${until}" in: ${out}`))))
    if (until === undefined) child.stdin.end()
  })

/** Milliseconds from spawn of `mm -p QUESTION` until the model server receives its request. */
// Told when the fake server records a chat request: no polling, which would take CPU from mm
let onChatRequest: (() => void) | undefined
const record = server.requests.push.bind(server.requests)
server.requests.push = (...items) => {
  const length = record(...items)
  if (items.some((request) => request.path.endsWith("/chat/completions"))) onChatRequest?.()
  return length
}

const timeToRequest = (mm: string = bin, extraEnv: Record<string, string> = {}): Promise<number> =>
  new Promise((resolve, reject) => {
    server.push({ text: "ok" })
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [mm, "-p", "hello"], {
      cwd: project,
      env: { ...env, ...extraEnv },
      stdio: ["ignore", "ignore", "ignore"]
    })
    let done = false
    onChatRequest = () => {
      if (done) return
      done = true
      onChatRequest = undefined
      resolve(Number(process.hrtime.bigint() - started) / 1e6)
      child.kill("SIGKILL")
    }
    child.on("error", reject)
    child.on("exit", () => {
      if (done) return
      onChatRequest = undefined
      reject(new Error("mm -p ended without sending a request"))
    })
  })

const contenders: Record<string, () => Promise<number>> = {
  "node -e 0": () => timeRun(["-e", "0"]),
  "mm --version": () => timeRun([bin, "--version"]),
  // the banner ends with its sessions line: `N earlier — …` or `no earlier sessions`
  "mm start to banner": () => timeRun([bin], "earlier"),
  "mm -p to request": () => timeToRequest(),
  "mm -p to request, server not kept": () => timeToRequest(bin, { MM_NO_SERVER_CACHE: "1" }),
  ...(baselineBin === undefined ? {} : {
    "before: mm --version": () => timeRun([baselineBin, "--version"]),
    "before: mm start to banner": () => timeRun([baselineBin], "earlier"),
    "before: mm -p to request": () => timeToRequest(baselineBin)
  })
}
const samples: Record<string, Array<number>> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]))
// A user who has run mm before, on the terminal and with -p (each to its end: the timed runs
// are killed once they have shown what is timed): the file cache is warm, V8's code cache was
// written when those runs exited, and what the server said of itself is kept.
const warmUp = (mm: string, args: ReadonlyArray<string>, input: string) =>
  new Promise<void>((resolve, reject) => {
    if (args.length > 0) server.push({ text: "ok" })
    const first = spawn(process.execPath, [mm, ...args], { cwd: project, env, stdio: ["pipe", "ignore", "ignore"] })
    first.on("error", reject)
    first.on("exit", () => resolve())
    first.stdin.end(input)
  })
for (const mm of baselineBin === undefined ? [bin] : [bin, baselineBin]) {
  await warmUp(mm, [], "/exit\n")
  await warmUp(mm, ["-p", "hello"], "")
}
for (const run of Object.values(contenders)) await run()
// each round starts one contender further on: a run's place in the round (which one came just
// before it) is not the same contender's every time
const entries = Object.entries(contenders)
for (let i = 0; i < RUNS; i++) {
  for (let k = 0; k < entries.length; k++) {
    const [name, run] = entries[(i + k) % entries.length]
    samples[name].push(await run())
  }
}
await server.close()
fs.rmSync(project, { recursive: true, force: true })
fs.rmSync(cacheHome, { recursive: true, force: true })

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
const base = median(samples["node -e 0"])
const results: Record<string, { ms: number; ratio: number; budget?: number; before?: number; pairedRatio?: number }> =
  {}
console.log(`startup (${RUNS} interleaved runs, medians)`)
console.log(`  ${"node -e 0".padEnd(34)}  ${base.toFixed(1).padStart(6)} ms  (baseline)`)
for (const name of [...Object.keys(BUDGETS), "mm -p to request, server not kept"]) {
  const ms = median(samples[name])
  const ratio = ms / base
  const budget = BUDGETS[name]
  results[name] = { ms, ratio, ...(budget === undefined ? {} : { budget }) }
  const verdict = budget === undefined
    ? "(no budget: a first run)"
    : `${ratio <= budget ? "PASS" : "FAIL"} (budget ${budget}×)`
  console.log(`  ${name.padEnd(34)}  ${ms.toFixed(1).padStart(6)} ms  ${ratio.toFixed(2)}× baseline  ${verdict}`)
}
/** The value below which `share` of `xs` lie (nearest rank). */
const quantile = (xs: ReadonlyArray<number>, share: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(share * sorted.length))]
}
if (baselineBin !== undefined) {
  console.log(`  against the build in ${baselineDir}, same runs:`)
  for (const name of Object.keys(BUDGETS)) {
    const now = median(samples[name])
    const before = median(samples[`before: ${name}`])
    // each round's two runs are seconds apart: their ratio leaves out the machine's drift
    // between rounds, which the medians of the whole run keep
    const paired = samples[name].map((ms, round) => ms / samples[`before: ${name}`][round])
    results[name].before = before
    results[name].pairedRatio = median(paired)
    console.log(
      `  ${name.padEnd(34)}  ${now.toFixed(1)} ms now, ${before.toFixed(1)} ms before (${
        (before / base).toFixed(2)
      }× baseline): ${(now / before).toFixed(2)}× before; round by round ${median(paired).toFixed(2)}× ` +
        `(middle half ${quantile(paired, 0.25).toFixed(2)}–${quantile(paired, 0.75).toFixed(2)})`
    )
  }
}
console.log(JSON.stringify({ bench: "startup", runs: RUNS, nodeMs: +base.toFixed(1), results }))
