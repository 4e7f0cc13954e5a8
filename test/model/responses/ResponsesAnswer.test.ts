import { describe, expect, it } from "@effect/vitest"

import { ResponsesAnswer } from "../../../src/model/responses/ResponsesAnswer"

const reader = () =>
  new ResponsesAnswer("m", (text) => text.replace("sk-secret", "[redacted]"), (tool) => `cut ${tool}`)

const event = (type: string, fields: object) => JSON.stringify({ type, ...fields })

describe("ResponsesAnswer", () => {
  it("text that came only in the closing response is shown when the answer ends", () => {
    const answer = reader()
    expect(answer.absorb(event("response.created", { response: { status: "in_progress" } }), "response.created"))
      .toBeUndefined()
    const output = [{ type: "message", role: "assistant", content: [{ type: "output_text", text: "late text" }] }]
    answer.absorb(event("response.completed", { response: { status: "completed", output } }), "response.completed")
    expect(answer.finished).toBe(true)
    expect(answer.endContent()).toBe("late text")
    expect(answer.endContent()).toBe("")
    expect(answer.complete()).toMatchObject({ _tag: "Completed", content: "late text", finishReason: "stop" })
  })

  it("a reasoning item without encrypted content is not kept; its summary is redacted when it is", () => {
    const answer = reader()
    answer.absorb(
      event("response.output_item.done", { output_index: 0, item: { type: "reasoning", id: "rs_0", summary: [] } }),
      ""
    )
    const item = {
      type: "reasoning",
      id: "rs_1",
      summary: [{ type: "summary_text", text: "key sk-secret" }],
      encrypted_content: "E"
    }
    answer.absorb(event("response.output_item.done", { output_index: 1, item }), "")
    answer.absorb(event("response.completed", { response: { status: "completed" } }), "")
    expect(answer.complete()).toMatchObject({
      opaque: {
        api: "responses",
        model: "m",
        items: [{ ...item, summary: [{ type: "summary_text", text: "key [redacted]" }] }]
      }
    })
  })

  it("an event that is not JSON is a one-line malformed failure", () => {
    const failure = reader().absorb("{nope", "")
    expect(failure).toMatchObject({ reason: "malformed" })
  })
})
