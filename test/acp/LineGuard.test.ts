import { describe, expect, it } from "@effect/vitest"

import { type DroppedLine, guardLines, idOfHead } from "../../src/acp/LineGuard"

const through = async (chunks: ReadonlyArray<string>, max: number) => {
  const dropped: Array<DroppedLine> = []
  const input = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(new TextEncoder().encode(chunk))
      controller.close()
    }
  })
  let out = ""
  const reader = guardLines(input, (line) => dropped.push(line), max).getReader()
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    out += new TextDecoder().decode(next.value)
  }
  return { out, dropped }
}

describe("guardLines", () => {
  it("passes lines within the limit as they are, split anywhere, and drops longer ones", async () => {
    const { out, dropped } = await through([
      "{\"id\":1}\n{\"id\"",
      ":2,\"x\":\"0123456789012345\"}\n{\"a\"",
      ":3}\n",
      "{\"jsonrpc\":\"2.0\",\"id\":\"s\"",
      ",\"x\":\"",
      "y".repeat(40),
      "\"}\n",
      "tail"
    ], 30)
    expect(out).toBe("{\"id\":1}\n{\"a\":3}\ntail")
    expect(dropped).toEqual([
      { id: 2, bytes: "{\"id\":2,\"x\":\"0123456789012345\"}".length },
      { id: "s", bytes: "{\"jsonrpc\":\"2.0\",\"id\":\"s\",\"x\":\"\"}".length + 40 }
    ])
  })

  it("drops a last line over the limit without a newline", async () => {
    const { out, dropped } = await through(["ok\n", "x".repeat(50)], 10)
    expect(out).toBe("ok\n")
    expect(dropped).toEqual([{ id: undefined, bytes: 50 }])
  })
})

describe("idOfHead", () => {
  it("reads the id of a request from the top-level object only", () => {
    expect(idOfHead("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\"")).toBe(7)
    expect(idOfHead("{ \"method\" : \"x\", \"params\": {\"id\": 9, \"a\": [1, {\"id\": 3}]}, \"id\" : \"r-1\", \"x"))
      .toBe("r-1")
    expect(idOfHead("{\"method\":\"x\",\"params\":{\"sessionId\":\"s\",\"id\":5},\"xx")).toBeUndefined()
    expect(idOfHead("{\"jsonrpc\":\"2.0\",\"result\":{},\"id\":4}")).toBeUndefined()
    expect(idOfHead("{\"text\":\"a \\\"id\\\": 3\",\"id\":null}")).toBeUndefined()
    expect(idOfHead("[\"id\", 3]")).toBeUndefined()
  })
})
