// What only one API understands about a message (signed thinking, encrypted reasoning) is kept
// in the session file but never sent to another API: a session written under Anthropic or
// Responses goes on under chat completions with its text and tool calls alone.
import { describe, expect, it } from "@effect/vitest"
import * as Chunk from "effect/Chunk"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"

import { AppConfig, type LoadedConfig } from "../../src/config/Config"
import { defaultConfig } from "../../src/config/ConfigSchema"
import { type Message, toWire } from "../../src/domain/Session"
import { ModelClient } from "../../src/model/ModelClient"
import { startFakeModelServer } from "../support/FakeModelServer"
import { modelClientLayer, quickRetries, secretsLayer, serverCacheOff } from "../support/layers"

const configFor = (url: string): LoadedConfig => ({
  config: { ...defaultConfig(), model: { ...defaultConfig().model, url, name: "fake-model" } },
  file: undefined
})

const written: ReadonlyArray<Message> = [
  { role: "system", content: "be brief" },
  { role: "user", content: "look at a.txt" },
  {
    role: "assistant",
    content: null,
    reasoning: "I should read it",
    tool_calls: [{
      id: "toolu_1",
      type: "function",
      function: { name: "read_file", arguments: "{\"path\":\"a.txt\"}" }
    }],
    opaque: {
      api: "anthropic",
      model: "claude-sonnet-4-5",
      items: [{ type: "thinking", thinking: "I should read it", signature: "sig-abc" }]
    }
  },
  { role: "tool", tool_call_id: "toolu_1", content: "hello" },
  { role: "user", content: "and now?" }
]

describe("what only one API understands", () => {
  it("toWire keeps it for the adapter that wrote it", () => {
    expect(toWire(written[2]).opaque?.items).toEqual([
      { type: "thinking", thinking: "I should read it", signature: "sig-abc" }
    ])
  })

  it.scopedLive("is left out of a chat-completions request, the rest of the message sent as it was", () =>
    Effect.gen(function*() {
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startFakeModelServer({ steps: [{ text: ["fine"] }] })),
        (s) => Effect.promise(() => s.close())
      )
      const layer = modelClientLayer.pipe(
        Layer.provide(
          Layer.mergeAll(Layer.succeed(AppConfig, configFor(server.url)), quickRetries, secretsLayer(), serverCacheOff)
        )
      )
      yield* Effect.gen(function*() {
        const client = yield* ModelClient
        expect(client.api).toBe("chat")
        yield* Stream.runCollect(client.stream({ messages: written.map(toWire), tools: [] })).pipe(
          Effect.map(Chunk.toReadonlyArray)
        )
      }).pipe(Effect.provide(layer))
      const [request] = server.completions()
      const body = request.body as { messages: ReadonlyArray<Record<string, unknown>> }
      expect(JSON.stringify(body)).not.toContain("sig-abc")
      expect(body.messages[2]).toEqual({
        role: "assistant",
        content: null,
        tool_calls: [{
          id: "toolu_1",
          type: "function",
          function: { name: "read_file", arguments: "{\"path\":\"a.txt\"}" }
        }]
      })
      expect(body.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "user"])
    }))
})
