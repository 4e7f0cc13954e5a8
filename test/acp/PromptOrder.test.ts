import { describe, expect, it } from "@effect/vitest"

import { makePromptOrder, PROMPTS_SEEN_KEY } from "../../src/acp/PromptOrder"

/** The lines `watch` lets through, given `input` in pieces of whole lines. */
const through = async (order: ReturnType<typeof makePromptOrder>, pieces: ReadonlyArray<string>) => {
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(new TextEncoder().encode(piece))
      controller.close()
    }
  })
  let text = ""
  const reader = order.watch(input).getReader()
  while (true) {
    const { value, done } = await reader.read()
    if (done) break
    text += new TextDecoder().decode(value)
  }
  return text.split("\n").filter((line) => line !== "")
}

const prompt = (id: number, sessionId = "s1") =>
  JSON.stringify({ jsonrpc: "2.0", id, method: "session/prompt", params: { sessionId, prompt: [] } })
const cancel = (sessionId = "s1", meta?: object) =>
  JSON.stringify({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId, ...(meta ? { _meta: meta } : {}) } })

describe("PromptOrder", () => {
  it("stamps each cancel with the last prompt of its session seen before it; other lines pass as they are", async () => {
    const order = makePromptOrder()
    const other = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "session/list", params: {} })
    const lines = await through(order, [
      `${cancel()}\n${other}\n`,
      `${prompt(1)}\n${cancel("s1", { editor: true })}\n${prompt(2, "s2")}\n${cancel("s2")}\n${cancel("s1")}\n`
    ])
    const stamps = lines.map((line) => JSON.parse(line)).map((m) => m.params?._meta)
    expect(lines[1]).toBe(other)
    expect(lines[2]).toBe(prompt(1))
    expect(stamps).toEqual([
      { [PROMPTS_SEEN_KEY]: 0 },
      undefined,
      undefined,
      { editor: true, [PROMPTS_SEEN_KEY]: 1 },
      undefined,
      { [PROMPTS_SEEN_KEY]: 2 },
      { [PROMPTS_SEEN_KEY]: 1 }
    ])
    // each prompt's number, once, by its request id
    expect([order.take(1), order.take(2), order.take(1), order.take(3)]).toEqual([1, 2, undefined, undefined])
  })
})
