/**
 * What a model server sends is read in time linear in its size. Each input here is one that
 * took minutes before (work over all that was held, on every delta); each test asserts only
 * that the result is right: a quadratic reader would not finish within the test's timeout.
 */
import * as HttpClient from "@effect/platform/HttpClient"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"

import { PROBE_BODY_MAX } from "../../src/model/BodyRead"
import { Completion } from "../../src/model/chat/Completion"
import { probeContext } from "../../src/model/chat/ServerProbe"
import { httpError, serverMessage } from "../../src/model/Failures"
import { HeldText, textToolCalls } from "../../src/model/TextToolCalls"
import { startFakeModelServer } from "../support/FakeModelServer"
import { splitAll } from "../support/thinkSplit"

/** `text` cut in deltas of `size` characters. */
const deltas = (text: string, size: number): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size))
  return out
}

/** What HeldText shows while the answer streams, and what it shows at the end. */
const held = (pieces: ReadonlyArray<string>) => {
  const hold = new HeldText()
  let streamed = ""
  for (const piece of pieces) streamed += hold.push(piece)
  return { streamed, flushed: hold.flush() }
}

describe("what a model server sends is read in time linear in its size", () => {
  it("an answer opening with 300,000 blank lines, one character a delta, and the think block after them", () => {
    const blanks = "\n".repeat(300_000)
    expect(splitAll(deltas(`${blanks}The answer.`, 1))).toEqual({ text: `${blanks}The answer.`, reasoning: "" })
    expect(splitAll(deltas(`${blanks}<think>plan</think>\n\nThe answer.`, 1))).toEqual({
      text: "The answer.",
      reasoning: "plan"
    })
    expect(splitAll(deltas(blanks, 1))).toEqual({ text: blanks, reasoning: "" })
  })

  it("an answer of 1 MB opening like a JSON call, in 4-character deltas, is held then shown whole", () => {
    const call = `{"a": "${"x".repeat(1_000_000)}`
    expect(held(deltas(call, 4))).toEqual({ streamed: "", flushed: call })
    const list = `[${" ".repeat(1_000_000)}`
    expect(held(deltas(list, 4))).toEqual({ streamed: "", flushed: list })
    expect(held(deltas(`${list}x`, 4))).toEqual({ streamed: `${list}x`, flushed: "" })
    const tagged = `<tool_call>${"x".repeat(1_000_000)}`
    expect(held(deltas(tagged, 4))).toEqual({ streamed: "", flushed: tagged })
    // a marker late in an answer held as a JSON call: what comes before it is shown then
    expect(held(deltas(`${call}<tool_call>{}`, 4))).toEqual({ streamed: call, flushed: "<tool_call>{}" })
  })

  it("an answer of 50,000 tagged calls then 2 MB of blanks, or one tag listing 200,000 calls: every call", () => {
    const known = new Set(["bash"])
    const block = `<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>`
    const blocks = textToolCalls(`Running.\n${block.repeat(50_000)}${" ".repeat(2_000_000)}`, known)
    expect(blocks?.content).toBe("Running.")
    expect(blocks?.calls.length).toBe(50_000)
    expect(blocks?.calls[49_999].function).toEqual({ name: "bash", arguments: `{"command":"ls"}` })
    const list = `<tool_call>[${Array.from({ length: 200_000 }, () => `{"name": "bash"}`).join(",")}]</tool_call>`
    expect(textToolCalls(list, known)?.calls.length).toBe(200_000)
  })

  it("an error body of 512 KiB of '<', or of 'model ' words, is worded in one line", () => {
    expect(serverMessage("<".repeat(512 * 1024))).toBe(`${"<".repeat(199)}…`)
    expect(serverMessage("a <b>bold</b> refusal")).toBe("a bold refusal")
    const context = { baseUrl: "http://127.0.0.1:9", model: "m", apiKeyEnv: undefined }
    const words = "model ".repeat(200_000)
    const refusal = httpError(context, { status: 500, body: `${words}\nnot found`, serverHeader: undefined })
    expect(refusal.reason).toBe("http")
    expect(refusal.message).toMatch(/^model server answered HTTP 500: model model .*… — check the server's log$/)
    const missing = httpError(context, { status: 500, body: `${words}is not available`, serverHeader: undefined })
    expect(missing.reason).toBe("model-not-found")
  })

  it("100,000 tool calls, each with its own id, are each their own call, in order", () => {
    const completion = new Completion()
    const count = 100_000
    for (let i = 0; i < count; i++) {
      const call = { id: `c${i}`, function: { name: "bash", arguments: "{}" } }
      completion.absorb(JSON.stringify({ choices: [{ delta: { tool_calls: [call] } }] }), "message")
    }
    const done = completion.complete()
    expect(done._tag).toBe("Completed")
    const calls = done._tag === "Completed" ? done.toolCalls : []
    expect(calls.length).toBe(count)
    expect([calls[0].id, calls[4242].id, calls[count - 1].id]).toEqual(["c0", "c4242", `c${count - 1}`])
  })

  it.live("Ollama's model parameters after 500,000 blank lines: its num_ctx; a body over the cap: none", () =>
    Effect.gen(function*() {
      const show = (parameters: string, license = "") => ({
        parameters,
        license,
        model_info: { "general.architecture": "llama", "llama.context_length": 32768 }
      })
      const routes: Record<string, { body: unknown }> = {
        "GET /api/ps": { body: { models: [] } },
        "POST /api/show": { body: show(`${"\n".repeat(500_000)}num_ctx 8192\n`) }
      }
      const server = yield* Effect.acquireRelease(
        Effect.promise(() => startFakeModelServer({ routes })),
        (s) => Effect.promise(() => s.close())
      )
      const probe = Effect.flatMap(
        HttpClient.HttpClient,
        (client) =>
          probeContext(client, {
            baseUrl: server.url,
            model: "m",
            list: { ids: ["m"], ownedBy: ["library"], maxModelLen: undefined },
            headers: {}
          })
      ).pipe(Effect.provide(NodeHttpClient.layer))
      expect(yield* probe).toMatchObject({ kind: "ollama", tokens: 8192 })
      routes["POST /api/show"] = { body: show("num_ctx 8192", "x".repeat(PROBE_BODY_MAX)) }
      expect(yield* probe).toMatchObject({ kind: "ollama", tokens: undefined })
    }).pipe(Effect.scoped))
})
