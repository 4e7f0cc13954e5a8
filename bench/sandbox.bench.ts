// A bash call in the sandbox vs. the same call unconfined (the performance budget: ≤ 15 ms added).
// Standalone: bundle with esbuild and run; prints medians, the ratio and the difference, then one JSON line.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import { defaultSandbox } from "../src/config/SandboxConfig"
import { probeBwrap } from "../src/lib/Bubblewrap"
import { bashTool } from "../src/tools/Bash"
import { FileAccessDisk } from "../src/tools/FileAccess"
import { makeSandbox } from "../src/tools/Sandbox"
import type { ToolContext } from "../src/tools/Tool"

const RUNS = Number(process.env.BENCH_RUNS ?? 30)
const WARMUP = 3
const BUDGET_MS = 15

const probe = await probeBwrap()
if (!probe.ok) {
  console.log(`the sandbox cannot start here: ${probe.reason}`)
  console.log("  a bash call in the sandbox: FAIL (not measured)")
  process.exit(0)
}

const project = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-sandbox-")))
const sandbox = makeSandbox({ ...defaultSandbox, mode: "on" }, () => process.env)
const state = await Effect.runPromise(sandbox.state)
if (state._tag === "Off") throw new Error("the sandbox is off")

const base: ToolContext = { cwd: project, maxOutput: 16000 }

/**
 * Milliseconds for one whole `bash` call of `true`, as the tool runs it (spawn, exit, result);
 * confined, that includes what the sandbox works out per call and frees after it.
 */
const call = async (confined: boolean): Promise<number> => {
  const started = performance.now()
  const prepared = bashTool.prepare(JSON.stringify({ command: "true" }))
  if (prepared._tag === "Left") throw new Error(prepared.left)
  const inside = confined ? sandbox.confine(state, project) : undefined
  const ctx = inside === undefined ? base : { ...base, confine: inside.confine }
  const result = await Effect.runPromise(prepared.right.run(ctx).pipe(Effect.provide(FileAccessDisk)))
  inside?.release()
  const elapsed = performance.now() - started
  if (result.failed) throw new Error(`the call failed: ${result.output}`)
  return elapsed
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

for (let i = 0; i < WARMUP; i++) {
  await call(false)
  await call(true)
}
const plain: Array<number> = []
const confined: Array<number> = []
for (let i = 0; i < RUNS; i++) {
  // alternate the order so neither side always runs second
  if (i % 2 === 0) {
    plain.push(await call(false))
    confined.push(await call(true))
  } else {
    confined.push(await call(true))
    plain.push(await call(false))
  }
}
fs.rmSync(project, { recursive: true, force: true })

const result = {
  bench: "sandbox",
  runs: RUNS,
  plainMedianMs: +median(plain).toFixed(3),
  confinedMedianMs: +median(confined).toFixed(3),
  ratio: +(median(confined) / median(plain)).toFixed(3),
  addedMs: +(median(confined) - median(plain)).toFixed(3),
  budgetMs: BUDGET_MS
}
console.log(`bash call of \`true\`, median of ${RUNS} runs each, alternated (budget ≤ +${BUDGET_MS} ms)`)
console.log(`  unconfined       ${result.plainMedianMs.toFixed(3).padStart(8)} ms  (baseline)`)
console.log(`  in the sandbox   ${result.confinedMedianMs.toFixed(3).padStart(8)} ms  ${result.ratio}x`)
console.log(
  `  added by the sandbox: ${result.addedMs} ms  ${result.addedMs <= BUDGET_MS ? "PASS" : "FAIL"}`
)
console.log(JSON.stringify(result))
