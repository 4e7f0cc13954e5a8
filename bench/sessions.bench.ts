// Session store budgets (the performance budget):
//   /sessions over 10,000 files of 10 KB–5 MB, over start-up (in the process): cold (no index)
//   ≤ 150 ms, warm (the index file of an earlier run, or the process's own cache) ≤ 60 ms;
//   saving a 10 MB session ≤ 1.5× a bare JSON.stringify + write + fsync of the same object;
//   a turn with 10 tool calls on it (22 saves: question sent, before and after each call, end) ≤ 1.5× the same bare writes.
// BENCH_SESSIONS=1000 for a quick run, BENCH_RUNS for the number of timed runs (median kept).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { Message, Session } from "../src/domain/Session"
import { makeSessionId } from "../src/domain/SessionId"
import * as FileSessionStore from "../src/sessions/FileSessionStore"
import { encodeSession } from "../src/sessions/SessionCodec"

const COUNT = Number(process.env.BENCH_SESSIONS ?? 10_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 7)
const LIST_BUDGET_MS = 150
const WARM_LIST_BUDGET_MS = 60
const SAVE_BUDGET = 1.5
const KB = 1024
const MB = 1024 * KB

/** A seeded generator, so every run lists the same directory. */
const random = (() => {
  let state = 0x2f6b1c3d
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()
const logUniform = (low: number, high: number) => Math.round(low * Math.pow(high / low, random()))

/** Mostly small sessions, one in twenty long: 10–200 KB, else 200 KB–5 MB (both log-uniform). */
const sizeOf = () => (random() < 0.95 ? logUniform(10 * KB, 200 * KB) : logUniform(200 * KB, 5 * MB))

const outputLine = (i: number) => `src/module${i % 37}/file${i % 11}.ts:${i}: const value${i} = compute(${i}) // ok`
const pool: ReadonlyArray<Message> = Array.from({ length: 64 }, (_, i): Message => {
  switch (i % 4) {
    case 0:
      return { role: "user", content: `question ${i}: why does the test ${i} fail when the cache is warm?` }
    case 1:
      return {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: `call_${i}`,
            type: "function",
            function: { name: "bash", arguments: JSON.stringify({ command: `grep -rn value${i} src` }) }
          }
        ]
      }
    case 2:
      return {
        role: "tool",
        content: `exit code 0\n${Array.from({ length: 20 + (i % 30) }, (_, k) => outputLine(i * 100 + k)).join("\n")}`,
        tool_call_id: `call_${i - 1}`
      }
    default:
      return {
        role: "assistant",
        content: `The value ${i} is computed twice; ${"the fix is to keep one. ".repeat(8 + (i % 20))}`
      }
  }
})
const poolBytes = pool.reduce((sum, message) => sum + JSON.stringify(message, null, 2).length, 0) / pool.length

const sessionOf = (id: string, index: number, bytes: number): Session => {
  const created = new Date(Date.UTC(2026, 0, 1) + index * 60_000)
  return {
    version: 1,
    id,
    cwd: "/home/someone/projects/example",
    createdAt: created.toISOString(),
    updatedAt: new Date(created.getTime() + 30 * 60_000).toISOString(),
    title: `question ${index}: why does the test fail when the cache is warm?`,
    turns: 1 + (index % 25),
    messages: [
      { role: "system", content: "You are mm, a small coding agent." },
      ...Array.from({ length: Math.max(1, Math.round(bytes / poolBytes)) }, (_, k) => pool[(index + k) % pool.length])
    ],
    errors: Array.from({ length: index % 9 === 0 ? 1 + (index % 4) : 0 }, (_, k) => ({
      kind: "generation" as const,
      at: created.toISOString(),
      turns: k,
      question: "why does the test fail when the cache is warm?",
      line: "no token for 120 s: the model server stopped answering",
      raw: "watchdog: 120000 ms without a byte"
    }))
  }
}

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
const time = (run: () => void): number => {
  const started = performance.now()
  run()
  return performance.now() - started
}
const ms = (x: number) => `${x.toFixed(1)} ms`
const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")

// -- the directory ------------------------------------------------------------------------

const sizes = Array.from({ length: COUNT }, sizeOf)
const plannedBytes = sizes.reduce((a, b) => a + b, 0)
const free = (() => {
  const stat = fs.statfsSync(os.tmpdir())
  return stat.bavail * stat.bsize
})()
if (plannedBytes + 10 * MB > free - 2 * 1024 * MB) {
  throw new Error(
    `not enough room in ${os.tmpdir()}: ${(plannedBytes / MB).toFixed(0)} MB planned, ${(free / MB).toFixed(0)} MB free`
  )
}

const root = fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-sessions-"))
const cleanUp = () => fs.rmSync(root, { recursive: true, force: true })
process.on("SIGINT", () => {
  cleanUp()
  process.exit(130)
})

try {
  const dir = path.join(root, "sessions")
  fs.mkdirSync(dir, { mode: 0o700 })
  const generating = performance.now()
  let totalBytes = 0
  for (let i = 0; i < COUNT; i++) {
    const bytes = Uint8Array.from({ length: 4 }, () => Math.floor(random() * 256))
    const id = makeSessionId(new Date(2026, 0, 1, 0, i), bytes)
    const text = encodeSession(sessionOf(id, i, sizes[i]))
    fs.writeFileSync(path.join(dir, `${id}.json`), text, { mode: 0o600 })
    totalBytes += text.length
  }
  console.log(
    `${COUNT} sessions written in ${((performance.now() - generating) / 1000).toFixed(1)} s: ` +
      `${(totalBytes / MB).toFixed(0)} MB, 95% of 10–200 KB and 5% of 200 KB–5 MB (log-uniform)`
  )
  // Files written in the last two seconds are never trusted from the cache; real sessions are older.
  await new Promise((resolve) => setTimeout(resolve, 2100))

  const indexPath = path.join(dir, FileSessionStore.INDEX_FILE)
  const list = (store: ReturnType<typeof FileSessionStore.make>) => {
    const listing = Effect.runSync(store.list(dir))
    if (listing.length !== COUNT) throw new Error(`listed ${listing.length} of ${COUNT}`)
    if (listing.some((entry) => entry._tag !== "Readable")) throw new Error("a generated session was listed unreadable")
  }
  const bare = () => {
    for (const name of fs.readdirSync(dir)) {
      if (name.endsWith(".json") && !name.startsWith(".")) fs.statSync(path.join(dir, name))
    }
  }

  bare()
  const baseline: Array<number> = []
  const cold: Array<number> = []
  const indexWrite: Array<number> = []
  const fromIndex: Array<number> = []
  const warm: Array<number> = []
  const afterSave: Array<number> = []
  const inProcess = FileSessionStore.make()
  list(inProcess)
  for (let run = 0; run < RUNS; run++) {
    baseline.push(time(bare))
    fs.rmSync(indexPath, { force: true })
    cold.push(time(() => list(FileSessionStore.make())))
    // the store writes the index once the listing is returned, after this turn of the event loop
    const writing = performance.now()
    await new Promise((resolve) => setImmediate(resolve))
    indexWrite.push(performance.now() - writing)
    if (!fs.existsSync(indexPath)) throw new Error("no index written after the cold listing")
    fromIndex.push(time(() => list(FileSessionStore.make())))
    warm.push(time(() => list(inProcess)))
  }
  const ids = fs.readdirSync(dir).filter((name) => name.endsWith(".json") && !name.startsWith(".")).sort()
  for (let run = 0; run < RUNS; run++) {
    const id = ids[run * 7].slice(0, -5)
    const session = Effect.runSync(inProcess.load(dir, id))
    Effect.runSync(inProcess.save(dir, { ...session, turns: session.turns + 1 }))
    afterSave.push(time(() => list(inProcess)))
  }
  const indexBytes = fs.statSync(indexPath).size

  const base = median(baseline)
  const rows: ReadonlyArray<[string, number, number]> = [
    ["cold (no cache, no index)", median(cold), LIST_BUDGET_MS],
    ["warm: new process, index", median(fromIndex), WARM_LIST_BUDGET_MS],
    ["warm (in-process cache)", median(warm), WARM_LIST_BUDGET_MS],
    ["warm, one file just saved", median(afterSave), WARM_LIST_BUDGET_MS]
  ]
  console.log(
    `\nlisting ${COUNT} sessions, median of ${RUNS} runs, over start-up (budget: cold ≤ ${LIST_BUDGET_MS} ms, ` +
      `warm ≤ ${WARM_LIST_BUDGET_MS} ms; file cache of the OS warm)`
  )
  console.log(`  ${"bare readdir + stat".padEnd(28)} ${ms(base).padStart(9)}  (baseline)`)
  for (const [name, value, budget] of rows) {
    console.log(
      `  ${name.padEnd(28)} ${ms(value).padStart(9)}  ${(value / base).toFixed(2)}× baseline  ` +
        `${verdict(value <= budget)} (≤ ${budget} ms)`
    )
  }
  console.log(
    `  ${"then the index written".padEnd(28)} ${ms(median(indexWrite)).padStart(9)}  ` +
      `(after the cold listing is returned; ${ms(median(cold.map((c, i) => c + indexWrite[i])))} both)`
  )
  console.log(`  index file: ${(indexBytes / KB).toFixed(0)} KB`)

  // -- save of a 10 MB session --------------------------------------------------------------

  const bigCount = Math.round((10 * MB) / poolBytes)
  const big = sessionOf("20260101-120000-0badf00d", 1, bigCount * poolBytes)
  const saveDir = path.join(root, "save")
  const bareFile = path.join(root, "bare.json")
  const saver = FileSessionStore.make()
  Effect.runSync(saver.save(saveDir, big))
  const bigBytes = fs.statSync(path.join(saveDir, `${big.id}.json`)).size
  const bareSave = () => {
    const text = JSON.stringify(big, null, 2)
    const fd = fs.openSync(bareFile, "w", 0o600)
    fs.writeFileSync(fd, text)
    fs.fsyncSync(fd)
    fs.closeSync(fd)
  }
  const storeSave = () => Effect.runSync(saver.save(saveDir, big))
  bareSave()
  const bareTimes: Array<number> = []
  const storeTimes: Array<number> = []
  const saveRuns = Math.max(RUNS, 9)
  for (let run = 0; run < saveRuns; run++) {
    if (run % 2 === 0) {
      bareTimes.push(time(bareSave))
      storeTimes.push(time(storeSave))
    } else {
      storeTimes.push(time(storeSave))
      bareTimes.push(time(bareSave))
    }
  }
  const bareMs = median(bareTimes)
  const storeMs = median(storeTimes)
  const saveRatio = storeMs / bareMs
  console.log(
    `\nsaving a ${
      (bigBytes / MB).toFixed(1)
    } MB session (${big.messages.length} messages), median of ${saveRuns} interleaved runs`
  )
  console.log(
    `  ${"JSON.stringify + write + fsync".padEnd(32)} ${ms(bareMs).padStart(9)}  (baseline, same 2-space indent)`
  )
  console.log(
    `  ${"store.save (atomic rename)".padEnd(32)} ${ms(storeMs).padStart(9)}  ${saveRatio.toFixed(2)}× baseline  ` +
      `${verdict(saveRatio <= SAVE_BUDGET)} (budget ${SAVE_BUDGET}×)`
  )

  // -- a turn with 10 tool calls on that session: saved when the question is sent, before and after each call
  //    (the call running marked before it), at its end --

  const turnStates = (() => {
    const question: Message = { role: "user", content: "why does the test fail when the cache is warm?" }
    const states: Array<Session> = []
    const added: Array<Message> = [question]
    const inProgress = { question: question.content ?? "", at: big.updatedAt, start: big.messages.length }
    states.push({ ...big, messages: [...big.messages, ...added], inProgress })
    for (let call = 0; call < 10; call++) {
      added.push(pool[1 + 4 * call])
      const running = { id: `call_${1 + 4 * call}`, output: "" }
      states.push({ ...big, messages: [...big.messages, ...added], inProgress: { ...inProgress, running } })
      added.push({ ...pool[2 + 4 * call], tool_call_id: `call_${1 + 4 * call}` })
      states.push({ ...big, messages: [...big.messages, ...added], inProgress })
    }
    added.push(pool[3])
    states.push({ ...big, messages: [...big.messages, ...added], turns: big.turns + 1 })
    return states
  })()
  const bareTurn = () => {
    for (const state of turnStates) {
      const text = JSON.stringify(state, null, 2)
      const fd = fs.openSync(bareFile, "w", 0o600)
      fs.writeFileSync(fd, text)
      fs.fsyncSync(fd)
      fs.closeSync(fd)
    }
  }
  const storeTurn = () => {
    for (const state of turnStates) Effect.runSync(saver.save(saveDir, state))
  }
  const bareTurnTimes: Array<number> = []
  const storeTurnTimes: Array<number> = []
  const turnRuns = Math.max(3, Math.ceil(RUNS / 2))
  for (let run = 0; run < turnRuns; run++) {
    if (run % 2 === 0) {
      bareTurnTimes.push(time(bareTurn))
      storeTurnTimes.push(time(storeTurn))
    } else {
      storeTurnTimes.push(time(storeTurn))
      bareTurnTimes.push(time(bareTurn))
    }
  }
  const bareTurnMs = median(bareTurnTimes)
  const storeTurnMs = median(storeTurnTimes)
  const turnRatio = storeTurnMs / bareTurnMs
  console.log(
    `\na turn with 10 tool calls on that session: ${turnStates.length} saves (question sent, before and after each call, end), ` +
      `median of ${turnRuns} interleaved runs`
  )
  console.log(`  ${`the same ${turnStates.length} bare writes`.padEnd(32)} ${ms(bareTurnMs).padStart(9)}  (baseline)`)
  console.log(
    `  ${`store.save × ${turnStates.length}`.padEnd(32)} ${ms(storeTurnMs).padStart(9)}  ${
      turnRatio.toFixed(2)
    }× baseline  ` +
      `${verdict(turnRatio <= SAVE_BUDGET)} (budget ${SAVE_BUDGET}×)`
  )

  console.log(
    JSON.stringify({
      bench: "sessions",
      files: COUNT,
      totalBytes,
      baselineListMs: +base.toFixed(1),
      coldListMs: +median(cold).toFixed(1),
      coldIndexWriteMs: +median(indexWrite).toFixed(1),
      indexListMs: +median(fromIndex).toFixed(1),
      warmListMs: +median(warm).toFixed(1),
      warmAfterSaveListMs: +median(afterSave).toFixed(1),
      listBudgetMs: LIST_BUDGET_MS,
      warmListBudgetMs: WARM_LIST_BUDGET_MS,
      saveBytes: bigBytes,
      bareSaveMs: +bareMs.toFixed(1),
      storeSaveMs: +storeMs.toFixed(1),
      saveRatio: +saveRatio.toFixed(3),
      bareTurnMs: +bareTurnMs.toFixed(1),
      storeTurnMs: +storeTurnMs.toFixed(1),
      turnRatio: +turnRatio.toFixed(3),
      saveBudget: SAVE_BUDGET
    })
  )
} finally {
  cleanUp()
}
