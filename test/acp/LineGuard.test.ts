import { describe, expect, it } from "@effect/vitest"

import { answerIdOfHead, type DroppedLine, guardLines, idOfHead } from "../../src/acp/LineGuard"

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

describe("an answer to mm's own request over the limit", () => {
  it("becomes an error answer with its id, so that the request fails at once", async () => {
    const big = `{"jsonrpc":"2.0","id":12,"result":{"content":"${"z".repeat(60)}"}}`
    const { out, dropped } = await through(["{\"id\":1}\n", big.slice(0, 20), `${big.slice(20)}\n`, "{\"id\":2}\n"], 40)
    expect(dropped).toEqual([{ id: undefined, answerTo: 12, bytes: big.length }])
    expect(out.split("\n")).toEqual([
      "{\"id\":1}",
      JSON.stringify({
        jsonrpc: "2.0",
        id: 12,
        error: { code: -32603, message: `the answer was ${big.length} bytes, over mm's limit of 40` }
      }),
      "{\"id\":2}",
      ""
    ])
  })

  it("is replaced too when it is the last line, without a newline", async () => {
    const { out } = await through([`{"id":"r","error":{"message":"${"e".repeat(50)}"}}`], 30)
    expect(JSON.parse(out)).toMatchObject({ id: "r", error: { code: -32603 } })
  })
})

describe("answerIdOfHead", () => {
  it("reads the id of a response, whichever key comes first, and nothing of a request", () => {
    expect(answerIdOfHead("{\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":\"abc")).toBe(4)
    expect(answerIdOfHead("{\"result\":{\"id\":9},\"id\":\"x\"}")).toBe("x")
    expect(answerIdOfHead("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\"")).toBeUndefined()
    expect(answerIdOfHead("{\"jsonrpc\":\"2.0\",\"id\":7,\"params\":{\"result\":1}")).toBeUndefined()
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
