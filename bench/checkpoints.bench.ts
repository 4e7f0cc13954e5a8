// Undo checkpoints budget (the performance budget): recording a change of a 100 KB file costs
// ≤ 2 ms plus the write of its blobs. The baseline writes the same two blobs (before and after)
// the way the store does — temporary file, write, fsync, rename, directory fsync — with bare
// `fs` calls; the difference is what recording adds: reading the file, hashing both contents,
// the existence checks, and the entry kept in the session (an in-memory store here, so that
// the session's own save, a cost of every turn, is not counted).
// BENCH_RUNS for the number of timed runs (median kept).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import { Changes } from "../src/changes/Changes"
import { putBlob } from "../src/changes/Checkpoints"
import { defaultConfig } from "../src/config/ConfigSchema"
import { Keeper } from "../src/sessions/Keeper"
import { keeperAndChanges } from "../test/support/layers"

const RUNS = Number(process.env.BENCH_RUNS ?? 101)
const BUDGET_MS = 2
const SIZE = 100 * 1024

const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const ms = (n: number) => `${n.toFixed(3)} ms`
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** 100 KB of source-like text, different for each `seed` so that every blob is new. */
const contentOf = (seed: string): string => {
  const lines: Array<string> = []
  let size = 0
  for (let i = 0; size < SIZE; i++) {
    const line = `export const value${i} = compute(${i}, "${seed}") // line ${i} of a generated module\n`
    lines.push(line)
    size += line.length
  }
  return lines.join("").slice(0, SIZE)
}

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-checkpoints-")))
const cleanup = () => fs.rmSync(root, { recursive: true, force: true })
process.on("SIGINT", () => {
  cleanup()
  process.exit(130)
})

/** The baseline: the two blobs written as the store writes them, with bare fs calls. */
const bareBlobWrites = (dir: string, blobs: ReadonlyArray<[string, Buffer]>) => {
  for (const [name, bytes] of blobs) {
    const temp = path.join(dir, `.${name}.tmp`)
    const fd = fs.openSync(temp, "wx", 0o600)
    fs.writeFileSync(fd, bytes)
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fs.renameSync(temp, path.join(dir, name))
    const dirFd = fs.openSync(dir, "r")
    fs.fsyncSync(dirFd)
    fs.closeSync(dirFd)
  }
}

const main = Effect.gen(function*() {
  const keeper = yield* Keeper
  const changes = yield* Changes
  const project = path.join(root, "project")
  fs.mkdirSync(project)
  const conversation = yield* keeper.open(project, { createFile: "now" })
  const file = path.join(project, "module.ts")
  const bareDir = path.join(root, "bare")
  fs.mkdirSync(bareDir)
  const storeDir = path.join(root, "store", ".mm", "checkpoints")
  fs.mkdirSync(storeDir, { recursive: true })

  const recordTimes: Array<number> = []
  const bareTimes: Array<number> = []
  const storeTimes: Array<number> = []
  for (let run = -3; run < RUNS; run++) {
    const before = contentOf(`before ${run}`)
    const after = contentOf(`after ${run}`)
    const record = changes.recorder(
      conversation,
      { turn: 1, question: "bench", toolCallId: `call_${run}` },
      () => Effect.void
    )
    const recording = Effect.gen(function*() {
      fs.writeFileSync(file, before)
      const started = performance.now()
      yield* record({ file, content: after })
      return performance.now() - started
    })
    const blobs: Array<[string, Buffer]> = [
      [`b${run}`, Buffer.from(contentOf(`bare before ${run}`))],
      [`a${run}`, Buffer.from(contentOf(`bare after ${run}`))]
    ]
    const baseline = Effect.sync(() => {
      // the same setup write just before, as the file tool's is before recording (an fsync
      // may have to flush it with the journal)
      fs.writeFileSync(path.join(bareDir, "module.ts"), before)
      const started = performance.now()
      bareBlobWrites(bareDir, blobs)
      return performance.now() - started
    })
    const storeBlobs: Array<Buffer> = [
      Buffer.from(contentOf(`store before ${run}`)),
      Buffer.from(contentOf(`store after ${run}`))
    ]
    const storeWrite = Effect.sync(() => {
      fs.writeFileSync(path.join(root, "store", "module.ts"), before)
      const started = performance.now()
      for (const bytes of storeBlobs) putBlob(storeDir, bytes)
      return performance.now() - started
    })
    // rotated, so that no side always runs first
    const order = [recording, baseline, storeWrite]
    const shift = run % 3
    const timed = yield* Effect.all([...order.slice(shift), ...order.slice(0, shift)])
    const [recorded, bare, store] = [...timed.slice(3 - shift), ...timed.slice(0, 3 - shift)]
    if (run >= 0) {
      recordTimes.push(recorded)
      bareTimes.push(bare)
      storeTimes.push(store)
    }
  }
  // the same recording with sessions off: blobs kept in memory, so no I/O at all
  const opened = yield* keeper.open(project, { createFile: "later" })
  const offline = { ...opened, status: Effect.succeed({ _tag: "Off" as const }) }
  const offlineTimes: Array<number> = []
  for (let run = 0; run < RUNS; run++) {
    fs.writeFileSync(file, contentOf(`offline before ${run}`))
    const record = changes.recorder(
      offline,
      { turn: 1, question: "bench", toolCallId: `off_${run}` },
      () => Effect.void
    )
    const started = performance.now()
    yield* record({ file, content: contentOf(`offline after ${run}`) })
    offlineTimes.push(performance.now() - started)
  }
  const { changes: kept } = yield* conversation.snapshot
  const recordMs = median(recordTimes)
  const bareMs = median(bareTimes)
  // fsync times vary by milliseconds from one call to the next: the runs are paired, and
  // the median of the differences is what recording adds to the write of its blobs
  const storeMs = median(storeTimes)
  const added = median(recordTimes.map((t, i) => t - storeTimes[i]))
  const blobsOverBare = median(storeTimes.map((t, i) => t - bareTimes[i]))
  console.log(
    `recording a change of a ${
      SIZE / 1024
    } KB file, median of ${RUNS} runs (budget ≤ ${BUDGET_MS} ms + the write of its blobs)`
  )
  console.log(`  ${"write of its 2 blobs (putBlob)".padEnd(32)} ${ms(storeMs).padStart(10)}  (baseline)`)
  console.log(
    `  ${"recording the change".padEnd(32)} ${ms(recordMs).padStart(10)}  ${(recordMs / storeMs).toFixed(2)}x`
  )
  console.log(
    `  ${"added by recording".padEnd(32)} ${ms(added).padStart(10)}  ${
      verdict(added <= BUDGET_MS)
    } (median of the paired differences)`
  )
  console.log(
    `  ${"(the same, no blob written)".padEnd(32)} ${
      ms(median(offlineTimes)).padStart(10)
    }  reading, hashing, the entry: what recording costs besides I/O`
  )
  console.log(
    `  ${"(2 blobs with bare fs calls)".padEnd(32)} ${ms(bareMs).padStart(10)}  putBlob adds ${
      ms(blobsOverBare)
    } to them`
  )
  console.log(
    `  (${kept?.length ?? 0} changes kept in the session, ${
      fs.readdirSync(path.join(project, ".mm", "checkpoints")).length
    } blobs written)`
  )
  console.log(
    JSON.stringify({
      bench: "checkpoints",
      runs: RUNS,
      storeMs,
      bareMs,
      recordMs,
      addedMs: added,
      withoutIoMs: median(offlineTimes),
      ratio: recordMs / storeMs,
      budgetMs: BUDGET_MS
    })
  )
})

const config = { ...defaultConfig(), sessions: { ...defaultConfig().sessions, enabled: true } }
const layer = keeperAndChanges(config)

Effect.runPromise(main.pipe(Effect.provide(layer))).then(cleanup, (error) => {
  cleanup()
  console.error(error)
  process.exit(1)
})
