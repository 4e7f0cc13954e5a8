// First token through mm's model client vs. straight from the server (the performance budget: ≤ 5 ms added).
// Standalone: bundle with esbuild and run; prints medians and the difference, then one JSON line.
import * as http from "node:http"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as ManagedRuntime from "effect/ManagedRuntime"
import * as Stream from "effect/Stream"

import { AppConfig } from "../src/config/Config"
import { defaultConfig } from "../src/config/ConfigSchema"
import { SecretRegistry, Secrets } from "../src/lib/Secrets"
import { type ChatRequest, ModelClient } from "../src/model/ModelClient"
import { startFakeModelServer } from "../test/support/FakeModelServer"
import { modelClientLayer, serverCacheOff } from "../test/support/layers"

const ITERATIONS = Number(process.env.MM_BENCH_ITERATIONS ?? 200)
const WARMUP = 20

const server = await startFakeModelServer()
server.setFallback({ text: ["Hello", " there", ", world"] })

const request: ChatRequest = {
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "say hello" }
  ],
  tools: []
}

const runtime = ManagedRuntime.make(
  modelClientLayer.pipe(
    Layer.provide(Layer.succeed(Secrets, new SecretRegistry())),
    Layer.provide(serverCacheOff),
    Layer.provide(
      Layer.succeed(AppConfig, {
        config: { ...defaultConfig(), model: { ...defaultConfig().model, url: server.url, name: "fake-model" } },
        file: undefined
      })
    )
  )
)
const client = await runtime.runPromise(ModelClient)

/** Milliseconds from the call to the first TextDelta in the consumer's hands; the request is then dropped. */
const throughMm = async (): Promise<number> => {
  let firstToken = Number.NaN
  const started = performance.now()
  await runtime.runPromise(
    client.stream(request).pipe(
      Stream.filter((event) => event._tag === "TextDelta"),
      Stream.take(1),
      Stream.runForEach(() => Effect.sync(() => (firstToken = performance.now())))
    )
  )
  return firstToken - started
}

const rawBody = JSON.stringify({
  model: "fake-model",
  messages: request.messages,
  stream: true,
  stream_options: { include_usage: true }
})
const firstContent = /"content":"[^"]/

/** Milliseconds from the call to the first bytes holding a non-empty content delta, on plain node:http. */
const straight = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = performance.now()
    const req = http.request(`${server.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" }
    })
    req.on("error", reject)
    req.on("response", (res) => {
      let seen = ""
      res.setEncoding("utf8")
      res.on("error", () => {})
      res.on("data", (text: string) => {
        seen += text
        if (firstContent.test(seen)) {
          const elapsed = performance.now() - started
          req.destroy()
          resolve(elapsed)
        }
      })
    })
    req.end(rawBody)
  })

const median = (xs: ReadonlyArray<number>) => {
  const sorted = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}
const percentile = (xs: ReadonlyArray<number>, p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]

for (let i = 0; i < WARMUP; i++) {
  await throughMm()
  await straight()
}
const mm: Array<number> = []
const raw: Array<number> = []
for (let i = 0; i < ITERATIONS; i++) {
  // alternate the order so neither side always runs on a warmer process
  if (i % 2 === 0) {
    mm.push(await throughMm())
    raw.push(await straight())
  } else {
    raw.push(await straight())
    mm.push(await throughMm())
  }
}

await runtime.dispose()
await server.close()

const result = {
  bench: "first-token",
  iterations: ITERATIONS,
  mmMedianMs: +median(mm).toFixed(3),
  rawMedianMs: +median(raw).toFixed(3),
  addedMedianMs: +(median(mm) - median(raw)).toFixed(3),
  mmP90Ms: +percentile(mm, 0.9).toFixed(3),
  rawP90Ms: +percentile(raw, 0.9).toFixed(3),
  budgetMs: 5
}
console.log(
  `first token over ${ITERATIONS} runs: mm ${result.mmMedianMs} ms (p90 ${result.mmP90Ms}), ` +
    `straight ${result.rawMedianMs} ms (p90 ${result.rawP90Ms}), added ${result.addedMedianMs} ms (budget ≤ ${result.budgetMs} ms)`
)
console.log(
  `  first token added by mm: ${result.addedMedianMs} ms  ${result.addedMedianMs <= result.budgetMs ? "PASS" : "FAIL"}`
)
console.log(JSON.stringify(result))
