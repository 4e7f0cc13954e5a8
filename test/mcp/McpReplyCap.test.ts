import { describe, expect, it } from "@effect/vitest"

import { cappedFetch, ReplyTooLarge } from "../../src/mcp/McpReplyCap"

const dataUrl = (type: string, body: string) => `data:${type},${encodeURIComponent(body)}`

describe("cappedFetch", () => {
  it("holds an event stream to the limit per event: many small events pass, one large event fails", async () => {
    const overflows: Array<ReplyTooLarge> = []
    const fetch = cappedFetch((error) => overflows.push(error), 100)
    const small = Array.from({ length: 10 }, (_, i) => `event: message\r\ndata: ${"x".repeat(30)}${i}\r\n\r\n`).join("")
    expect(await (await fetch(dataUrl("text/event-stream", small))).text()).toBe(small)
    expect(overflows).toEqual([])
    const large = `event: message\ndata: ${"x".repeat(150)}\n\n`
    await expect((await fetch(dataUrl("text/event-stream", large))).text()).rejects.toBeInstanceOf(ReplyTooLarge)
    expect(overflows.map((e) => e.message)).toEqual([
      "reply over 100 bytes (the MCP message limit), dropped"
    ])
  })

  it("holds any other body to the limit as a whole", async () => {
    const overflows: Array<ReplyTooLarge> = []
    const fetch = cappedFetch((error) => overflows.push(error), 100)
    const body = JSON.stringify({ text: "y".repeat(90) })
    expect(await (await fetch(dataUrl("application/json", body.slice(0, 60)))).text()).toBe(body.slice(0, 60))
    await expect((await fetch(dataUrl("application/json", body))).json()).rejects.toBeInstanceOf(ReplyTooLarge)
    expect(overflows).toHaveLength(1)
  })
})
