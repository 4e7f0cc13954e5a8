// What saving a turn while it runs costs (agent/TurnProgress.ts), on sessions of 50 KB, 1 MB
// and 10 MB, through the file store (atomic rename, fsync):
//   a turn with 10 tool calls saved as before the running call was kept (12 saves: question
//   sent, after each call, end) and as now (22: question sent, before and after each call,
//   end), and one save of a running call's output (16,000 characters, the default maxOutput),
//   which happens at most once a second while a call prints.
// No budget: the numbers are reported. BENCH_RUNS for the number of timed runs (median kept).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { Message, Session } from "../src/domain/Session"
import * as FileSessionStore from "../src/sessions/FileSessionStore"
import { encodeSession } from "../src/sessions/SessionCodec"

const RUNS = Number(process.env.BENCH_RUNS ?? 7)
const KB = 1024
const MB = 1024 * KB
const MAX_OUTPUT = 16_000
const CALLS = 10

const outputLine = (i: number) => `src/module${i % 37}/file${i % 11}.ts:${i}: const value${i} = compute(${i}) // ok`
const callMessage = (id: string, i: number): Message => ({
  role: "assistant",
  content: null,
  tool_calls: [{
    id,
    type: "function",
    function: { name: "bash", arguments: JSON.stringify({ command: `grep -rn v${i} src` }) }
  }]
})
const resultMessage = (id: string, i: number): Message => ({
  role: "tool",
  tool_call_id: id,
  content: `exit code 0\n${Array.from({ length: 30 }, (_, k) => outputLine(i * 100 + k)).join("\n")}`
})
/** One earlier exchange: a question, a call, its result, an answer (about 3.5 KB). */
const exchange = (i: number): Array<Message> => [
  { role: "user", content: `question ${i}: why does the test ${i} fail when the cache is warm?` },
  callMessage(`old_${i}`, i),
  resultMessage(`old_${i}`, i),
  { role: "assistant", content: `The value ${i} is computed twice; ${"the fix is to keep one. ".repeat(20)}` }
]

const sessionWith = (exchanges: number): Session => {
  const at = new Date(Date.UTC(2026, 11, 7, 12)).toISOString()
  return {
    version: 1,
    id: "20261207-120000-0badf00d",
    cwd: "/home/someone/projects/example",
    createdAt: at,
    updatedAt: at,
    title: "why does the test fail when the cache is warm?",
    turns: 1,
    messages: [
      { role: "system", content: "You are mm, a small coding agent." },
      ...Array.from({ length: exchanges }, (_, i) => exchange(i)).flat()
    ],
    errors: []
  }
}

/** A session of about `bytes` as the store writes it. */
const sessionOf = (bytes: number): Session => {
  const perExchange = encodeSession(sessionWith(20)).length / 20
  return sessionWith(Math.max(1, Math.round(bytes / perExchange)))
}

/** The states a turn with `CALLS` tool calls writes: `before` without the marks of a running call. */
const turnStates = (base: Session, withRunning: boolean): Array<Session> => {
  const added: Array<Message> = [{ role: "user", content: "why does the test fail when the cache is warm?" }]
  const progress = {
    question: "why does the test fail when the cache is warm?",
    at: base.updatedAt,
    start: base.messages.length
  }
  const state = (running?: { id: string; output: string }): Session => ({
    ...base,
    messages: [...base.messages, ...added],
    inProgress: running === undefined ? progress : { ...progress, running }
  })
  const states = [state()]
  for (let call = 0; call < CALLS; call++) {
    const id = `call_${call}`
    added.push(callMessage(id, call))
    if (withRunning) states.push(state({ id, output: "" }))
    added.push(resultMessage(id, call))
    states.push(state())
  }
  added.push({ role: "assistant", content: "Fixed: the value is computed once." })
  const { inProgress: _done, ...ended } = state()
  states.push({ ...ended, turns: base.turns + 1 })
  return states
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const time = (run: () => void): number => {
  const started = performance.now()
  run()
  return performance.now() - started
}
const ms = (x: number) => `${x.toFixed(1)} ms`.padStart(10)

const root = fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-turn-saves-"))
try {
  const store = FileSessionStore.make()
  const results: Array<Record<string, number>> = []
  console.log(
    `a turn with ${CALLS} tool calls, saved through the file store; median of ${RUNS} interleaved runs\n` +
      `  ${"session".padEnd(9)} ${"before: 12".padStart(10)} ${"now: 22".padStart(10)} ${"now/before".padStart(10)} ` +
      `${"+ per call".padStart(10)} ${"output save".padStart(11)}`
  )
  for (const bytes of [50 * KB, 1 * MB, 10 * MB]) {
    const base = sessionOf(bytes)
    const dir = path.join(root, `s${bytes}`)
    const before = turnStates(base, false)
    const now = turnStates(base, true)
    const outputState: Session = {
      ...now[now.length - 2],
      inProgress: {
        question: "q",
        at: base.updatedAt,
        start: base.messages.length,
        running: { id: "call_9", output: `…${outputLine(7).repeat(Math.ceil(MAX_OUTPUT / 80)).slice(-MAX_OUTPUT)}` }
      }
    }
    const save = (states: ReadonlyArray<Session>) => () => {
      for (const state of states) Effect.runSync(store.save(dir, state))
    }
    save(now)()
    const a: Array<number> = []
    const b: Array<number> = []
    const o: Array<number> = []
    for (let run = 0; run < RUNS; run++) {
      if (run % 2 === 0) {
        a.push(time(save(before)))
        b.push(time(save(now)))
      } else {
        b.push(time(save(now)))
        a.push(time(save(before)))
      }
      o.push(time(save([outputState])))
    }
    // the session before the turn (its 10 calls and results add about 35 KB)
    const size = encodeSession(base).length
    const [beforeMs, nowMs, outputMs] = [median(a), median(b), median(o)]
    const label = size >= MB ? `${(size / MB).toFixed(1)} MB` : `${(size / KB).toFixed(0)} KB`
    console.log(
      `  ${label.padEnd(9)} ${ms(beforeMs)} ${ms(nowMs)} ${`${(nowMs / beforeMs).toFixed(2)}×`.padStart(10)} ` +
        `${ms((nowMs - beforeMs) / CALLS)} ${ms(outputMs).padStart(11)}`
    )
    results.push({
      bytes: size,
      beforeMs: +beforeMs.toFixed(2),
      nowMs: +nowMs.toFixed(2),
      outputSaveMs: +outputMs.toFixed(2)
    })
  }
  console.log(
    "  (+ per call: what the save before each call adds; output save: one save of a running call's\n" +
      "   16,000 characters, made at most once a second while it prints)"
  )
  console.log(JSON.stringify({ bench: "turn-saves", calls: CALLS, runs: RUNS, results }))
} finally {
  fs.rmSync(root, { recursive: true, force: true })
}
