// What a model server said of itself, kept between runs (src/model/chat/ServerCache.ts), and how the
// model client uses it: nothing asked before the first request, the window known at once.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { AppConfig, type LoadedConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { nameHash } from "../../src/lib/QuickIds"
import {
  diskServerCache,
  publicPartOf,
  readMemo,
  SERVER_CACHE_LIFETIME_MS,
  ServerCache,
  serverCacheFile,
  type ServerCacheShape,
  type ServerMemo,
  writeMemo
} from "../../src/model/chat/ServerCache"
import { type ChatRequest, ModelClient } from "../../src/model/ModelClient"
import { type FakeModelServer, type Route, startFakeModelServer, type Step } from "../support/FakeModelServer"
import { memoryServerCache, modelClientLayer, quickRetries, secretsLayer } from "../support/layers"

const tempDir = () => fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-server-cache-")))

const llamaMemo: ServerMemo = {
  list: { ids: ["fake-model"], ownedBy: ["llamacpp"], maxModelLen: undefined },
  served: { kind: "llama.cpp", tokens: 8192, askAgainAfterAnswer: false, noToolTemplate: true, vision: false }
}

describe("the cache file", () => {
  it("is written 0600 in a 0700 directory, and read back the same", async () => {
    const dir = path.join(tempDir(), "cache", "mm")
    const file = serverCacheFile(dir, "http://127.0.0.1:8080/v1", "fake-model")
    await writeMemo(file, "fake-model", llamaMemo, 1_000)
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700)
    expect(fs.statSync(file).mode & 0o777).toBe(0o600)
    // nothing but the file itself is left in the directory (no temporary)
    expect(fs.readdirSync(dir)).toEqual([path.basename(file)])
    expect(readMemo(file, "fake-model", 2_000)).toEqual(llamaMemo)
  })

  it("never holds the URL, which may carry a key", async () => {
    const dir = tempDir()
    const url = "http://user:sk-secret-123@127.0.0.1:8080/v1"
    const file = serverCacheFile(dir, url, "fake-model")
    await writeMemo(file, "fake-model", llamaMemo, 1_000)
    expect(path.basename(file)).toMatch(/^server-[0-9a-f]{32}\.json$/)
    expect(fs.readFileSync(file, "utf8")).not.toContain("sk-secret-123")
    expect(fs.readFileSync(file, "utf8")).not.toContain("127.0.0.1")
  })

  it("names the file by a hash of the URL without its user part and query, which may carry a key", () => {
    expect(publicPartOf("http://user:sk-secret-123@127.0.0.1:8080/v1")).toBe("http://127.0.0.1:8080/v1")
    expect(publicPartOf("https://TOKEN@host/v1?api-key=sk-1#x")).toBe("https://host/v1")
    expect(publicPartOf(" http://127.0.0.1:8080/v1 ")).toBe("http://127.0.0.1:8080/v1")
    const dir = tempDir()
    const bare = serverCacheFile(dir, "http://127.0.0.1:8080/v1", "m")
    expect(serverCacheFile(dir, "http://user:sk-secret-123@127.0.0.1:8080/v1", "m")).toBe(bare)
    expect(serverCacheFile(dir, "http://127.0.0.1:8080/v1?key=sk-secret-123", "m")).toBe(bare)
    expect(path.basename(bare)).toBe(`server-${nameHash("http://127.0.0.1:8080/v1\nm")}.json`)
  })

  it("is one file per URL and model", () => {
    const dir = tempDir()
    const names = new Set([
      serverCacheFile(dir, "http://127.0.0.1:8080/v1", "a"),
      serverCacheFile(dir, "http://127.0.0.1:8080/v1", "b"),
      serverCacheFile(dir, "http://127.0.0.1:8081/v1", "a")
    ])
    expect(names.size).toBe(3)
  })

  it("is no answer once older than its lifetime, for another model, or not of its shape", async () => {
    const dir = tempDir()
    const file = serverCacheFile(dir, "http://127.0.0.1:8080/v1", "fake-model")
    await writeMemo(file, "fake-model", llamaMemo, 1_000)
    expect(readMemo(file, "fake-model", 1_000 + SERVER_CACHE_LIFETIME_MS)).toEqual(llamaMemo)
    expect(readMemo(file, "fake-model", 1_001 + SERVER_CACHE_LIFETIME_MS)).toBeUndefined()
    // a clock set back does not make it young forever
    expect(readMemo(file, "fake-model", 500)).toBeUndefined()
    expect(readMemo(file, "other-model", 2_000)).toBeUndefined()
    fs.writeFileSync(file, "{\"version\": 1, \"savedAt\": ")
    expect(readMemo(file, "fake-model", 2_000)).toBeUndefined()
    // each field checked: a file of another shape is no answer
    const written = JSON.parse(JSON.stringify({
      version: 1,
      savedAt: 1_000,
      model: "fake-model",
      list: { ids: ["fake-model"], ownedBy: ["llamacpp"], maxModelLen: null },
      served: { kind: "llama.cpp", tokens: 8192, askAgainAfterAnswer: false, noToolTemplate: true, vision: false }
    }))
    const reshaped = [
      { ...written, version: 2 },
      { ...written, savedAt: "1000" },
      { ...written, list: { ...written.list, ids: [7] } },
      { ...written, list: { ...written.list, maxModelLen: "4096" } },
      { ...written, served: { ...written.served, kind: "mainframe" } },
      { ...written, served: { ...written.served, tokens: "8192" } },
      { ...written, served: { ...written.served, askAgainAfterAnswer: undefined } },
      { ...written, served: { ...written.served, vision: "no" } },
      [written]
    ]
    for (const shape of reshaped) {
      fs.writeFileSync(file, JSON.stringify(shape))
      expect(readMemo(file, "fake-model", 2_000), JSON.stringify(shape)).toBeUndefined()
    }
    // fields it does not know are left out of what it gives
    fs.writeFileSync(file, JSON.stringify({ ...written, extra: 1, served: { ...written.served, extra: 2 } }))
    expect(readMemo(file, "fake-model", 2_000)).toEqual(llamaMemo)
    expect(readMemo(path.join(dir, "missing.json"), "fake-model", 2_000)).toBeUndefined()
  })

  it.effect("a directory that cannot be written only costs the next run its questions", () =>
    Effect.gen(function*() {
      const blocked = path.join(tempDir(), "a-file")
      fs.writeFileSync(blocked, "")
      const cache = diskServerCache(path.join(blocked, "mm"))
      yield* cache.write("http://127.0.0.1:8080/v1", "fake-model", llamaMemo)
      expect(yield* cache.read("http://127.0.0.1:8080/v1", "fake-model")).toBeUndefined()
    }))
})

const configFor = (url: string): LoadedConfig => ({
  config: { ...defaultConfig(), watchdogTimeout: 5, model: { ...defaultConfig().model, url, name: "fake-model" } },
  file: undefined
})

const tools: ChatRequest["tools"] = [
  { name: "bash", description: "run a command", parameters: { type: "object", properties: {} } }
]
const question: ChatRequest = { messages: [{ role: "user", content: "hello" }], tools }

const withCachedClient = <A, E>(
  options: {
    readonly steps?: ReadonlyArray<Step>
    readonly routes?: Readonly<Record<string, Route | ReadonlyArray<Route>>>
  },
  cache: ServerCacheShape,
  use: (client: ModelClient["Type"], server: FakeModelServer) => Effect.Effect<A, E>
) =>
  Effect.acquireUseRelease(
    Effect.promise(() => startFakeModelServer(options)),
    (server) =>
      Effect.flatMap(ModelClient, (client) => use(client, server)).pipe(
        Effect.provide(
          modelClientLayer.pipe(
            Layer.provide(
              Layer.mergeAll(
                Layer.succeed(AppConfig, configFor(server.url)),
                Layer.succeed(ServerCache, cache),
                quickRetries,
                secretsLayer()
              )
            )
          )
        )
      ),
    (server) => Effect.promise(() => server.close())
  )

const collect = (client: ModelClient["Type"]) =>
  Effect.map(Stream.runCollect(client.stream(question)), Chunk.toReadonlyArray)

const paths = (server: FakeModelServer) => server.requests.map((r) => `${r.method} ${r.path}`)

const noToolsProps: Route = {
  body: { default_generation_settings: { n_ctx: 4096 }, chat_template_caps: { supports_tools: false } }
}

describe("the model client with a cache", () => {
  it.live("nothing cached: the request goes out first, then the server is asked, and what it said is kept", () => {
    const { shape, writes } = memoryServerCache(undefined)
    return withCachedClient(
      { steps: [{ text: "ok" }], routes: { "GET /props": noToolsProps } },
      shape,
      (client, server) =>
        Effect.gen(function*() {
          yield* collect(client)
          expect(paths(server)[0]).toBe("POST /v1/chat/completions")
          // tools went as they are: nothing was known of the template yet
          expect(server.completions()[0].body.tools).toHaveLength(1)
          while (writes.length === 0) yield* Effect.sleep("10 millis")
          expect(writes[0]).toEqual({
            list: { ids: ["fake-model"], ownedBy: [], maxModelLen: undefined },
            served: { kind: "llama.cpp", tokens: 4096, askAgainAfterAnswer: false, noToolTemplate: true }
          })
          expect(yield* client.contextWindow).toBe(4096)
        })
    )
  })

  it.live("cached: the window and the template's limits are known at once; the server is asked after the request all the same", () => {
    const { shape, writes } = memoryServerCache(llamaMemo)
    return withCachedClient(
      {
        steps: [{ text: "ok" }],
        routes: {
          "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
          "GET /props": {
            body: {
              default_generation_settings: { n_ctx: 8192 },
              chat_template_caps: { supports_tools: false },
              modalities: { vision: false }
            }
          }
        }
      },
      shape,
      (client, server) =>
        Effect.gen(function*() {
          expect(yield* client.contextWindow).toBe(8192)
          expect(yield* client.settledWindow).toBe(8192)
          expect(yield* client.toolsAsText).toBe(true)
          yield* collect(client)
          // the question first, then the questions about the server, beside it
          expect(paths(server)).toEqual(["POST /v1/chat/completions", "GET /v1/models", "GET /props"])
          // the tools went as text from the first request on, as the cache said
          expect(server.completions()[0].body.tools).toBeUndefined()
          // the same answer, kept afresh
          while (writes.length === 0) yield* Effect.sleep("10 millis")
          expect(writes).toEqual([llamaMemo])
        })
    )
  })

  it.live("cached, and the server restarted with a smaller window: the answer's end already knows the new one", () => {
    const { shape, writes } = memoryServerCache({
      ...llamaMemo,
      served: { kind: "llama.cpp", tokens: 32768, askAgainAfterAnswer: false }
    })
    return withCachedClient(
      {
        steps: [{ text: "ok", usage: { prompt_tokens: 3000, completion_tokens: 10 } }],
        routes: {
          "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
          "GET /props": { body: { default_generation_settings: { n_ctx: 4096 } } }
        }
      },
      shape,
      (client) =>
        Effect.gen(function*() {
          // the banner's first guess
          expect(yield* client.settledWindow).toBe(32768)
          const events = yield* collect(client)
          expect(events.at(-1)?._tag).toBe("Completed")
          // once the answer is complete, the window in force is the server's own
          expect(yield* client.contextWindow).toBe(4096)
          while (writes.length === 0) yield* Effect.sleep("10 millis")
          expect(writes[0].served).toMatchObject({ kind: "llama.cpp", tokens: 4096 })
        })
    )
  })

  it.live("cached as a template without tools, restarted with one that takes them: the next request sends them", () =>
    withCachedClient(
      {
        steps: [{ text: "one" }, { text: "two" }],
        routes: {
          "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
          "GET /props": {
            body: { default_generation_settings: { n_ctx: 8192 }, chat_template_caps: { supports_tools: true } }
          }
        }
      },
      memoryServerCache(llamaMemo).shape,
      (client, server) =>
        Effect.gen(function*() {
          yield* collect(client)
          expect(server.completions()[0].body.tools).toBeUndefined()
          expect(yield* client.toolsAsText).toBe(false)
          yield* collect(client)
          expect(server.completions()[1].body.tools).toHaveLength(1)
        })
    ))

  it.live("cached, and the banner asks: the listing, then the window, the same as kept", () =>
    withCachedClient(
      {
        routes: {
          "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
          "GET /props": noToolsProps
        }
      },
      memoryServerCache(llamaMemo).shape,
      (client, server) =>
        Effect.gen(function*() {
          const check = yield* client.check
          expect(check).toMatchObject({ answering: true, missing: false })
          expect(yield* client.freshWindow).toBe(4096)
          expect(paths(server)).toEqual(["GET /v1/models", "GET /props"])
        })
    ))

  it.live("cached, but the server lists something else now: its window is asked again and the cache rewritten", () => {
    const { shape, writes } = memoryServerCache(llamaMemo)
    return withCachedClient(
      {
        routes: {
          "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "vllm", max_model_len: 2048 }] } }
        }
      },
      shape,
      (client) =>
        Effect.gen(function*() {
          expect(yield* client.contextWindow).toBe(8192)
          yield* client.check
          while (writes.length === 0) yield* Effect.sleep("10 millis")
          expect(writes[0].served).toMatchObject({ kind: "vllm", tokens: 2048 })
          expect(yield* client.contextWindow).toBe(2048)
        })
    )
  })
})

/** A server whose answers about itself are failures: the listing's, or the window's. */
const failing: ReadonlyArray<{ readonly what: string; readonly routes: Record<string, Route> }> = [
  {
    what: "a 401 to the listing (a key not set yet)",
    routes: { "GET /v1/models": { status: 401, body: { error: { message: "Invalid API Key" } } } }
  },
  {
    what: "a 503 to /props (loading the model)",
    routes: {
      "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
      "GET /props": { status: 503, body: { error: { code: 503, message: "Loading model" } } }
    }
  },
  {
    what: "a proxy's 502 to /props",
    routes: {
      "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
      "GET /props": {
        status: 502,
        body: "<html><body>502 Bad Gateway</body></html>",
        headers: { "content-type": "text/html" }
      }
    }
  }
]

describe("a question about the server that got no answer", () => {
  for (const { routes, what } of failing) {
    it.live(`${what} is not kept as no window, and leaves what the cache said in force`, () => {
      const { shape, writes } = memoryServerCache(llamaMemo)
      return withCachedClient({ steps: [{ text: "ok" }], routes }, shape, (client) =>
        Effect.gen(function*() {
          yield* collect(client)
          // the probe is over (the answer's end waited for it)
          expect(yield* client.freshWindow).toBe(8192)
          expect(yield* client.toolsAsText).toBe(true)
          expect(writes).toEqual([])
        }))
    })

    it.live(`${what}, with nothing cached: nothing kept, the default window in force`, () => {
      const { shape, writes } = memoryServerCache(undefined)
      return withCachedClient({ steps: [{ text: "ok" }], routes }, shape, (client) =>
        Effect.gen(function*() {
          yield* collect(client)
          expect(yield* client.freshWindow).toBe(32768)
          expect(writes).toEqual([])
        }))
    })
  }

  it.live("is asked again once the server has answered a request, and its answer then kept", () => {
    const { shape, writes } = memoryServerCache(undefined)
    return withCachedClient(
      {
        steps: [{ text: "one" }, { text: "two" }],
        routes: {
          "GET /v1/models": { body: { data: [{ id: "fake-model", owned_by: "llamacpp" }] } },
          "GET /props": [
            { status: 503, body: { error: { code: 503, message: "Loading model" } } },
            { body: { default_generation_settings: { n_ctx: 4096 } } }
          ]
        }
      },
      shape,
      (client, server) =>
        Effect.gen(function*() {
          yield* collect(client)
          expect(yield* client.freshWindow).toBe(32768)
          expect(writes).toEqual([])
          yield* collect(client)
          while (writes.length === 0) yield* Effect.sleep("10 millis")
          expect(writes[0].served).toMatchObject({ kind: "llama.cpp", tokens: 4096 })
          expect(yield* client.contextWindow).toBe(4096)
          expect(server.answered.filter((route) => route === "GET /props")).toHaveLength(2)
        })
    )
  })
})
