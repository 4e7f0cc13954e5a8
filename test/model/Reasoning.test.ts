import { describe, expect, it } from "vitest"

import { replayUpdates } from "../../src/acp/Replay"
import { Completion } from "../../src/model/chat/Completion"
import { modelIds } from "../../src/model/chat/ServerProbe"
import { makePrinter } from "../../src/terminal/TerminalIO"
import { makeThoughtDisplay, rowsOf } from "../../src/terminal/Thought"
import { colored, plain } from "../../src/text/Style"
import { splitAll } from "../support/thinkSplit"

const chunk = (delta: object, finish?: string) =>
  JSON.stringify({ choices: [{ index: 0, delta, ...(finish ? { finish_reason: finish } : {}) }] })

describe("reasoning in the model's answer", () => {
  it("takes a <think> block at the start of the content apart, wherever the deltas cut its tags", () => {
    expect(splitAll(["<think>plan it</think>\n\nThe answer."])).toEqual({ text: "The answer.", reasoning: "plan it" })
    expect(splitAll(["  <thi", "nk>pl", "an it</th", "ink>", "\n\n", "The ", "answer."])).toEqual({
      text: "The answer.",
      reasoning: "plan it"
    })
    expect(splitAll(["<think>never closed"])).toEqual({ text: "", reasoning: "never closed" })
  })

  it("leaves a <think> that is not at the start, and short answers, as answer text", () => {
    expect(splitAll(["Use <think> tags like this"])).toEqual({ text: "Use <think> tags like this", reasoning: "" })
    expect(splitAll(["<"])).toEqual({ text: "<", reasoning: "" })
    expect(splitAll(["Hi"])).toEqual({ text: "Hi", reasoning: "" })
  })

  it("reads reasoning_content and reasoning deltas beside the text", () => {
    const completion = new Completion()
    expect(completion.absorb(chunk({ reasoning_content: "first " }), "message")).toBeUndefined()
    expect(completion.takeReasoning()).toBe("first ")
    completion.absorb(chunk({ reasoning: "second" }), "message")
    expect(completion.absorb(chunk({ content: "Answer" }, "stop"), "message")).toBe("Answer")
    expect(completion.takeReasoning()).toBe("second")
    expect(completion.takeReasoning()).toBe("")
    completion.endContent()
    expect(completion.complete()).toMatchObject({ _tag: "Completed", content: "Answer", reasoning: "first second" })
  })

  it("lists the models of OpenAI-style and Ollama-style /models answers", () => {
    expect(modelIds({ object: "list", data: [{ id: "a" }, { id: "b" }, { id: "a" }] })).toEqual(["a", "b"])
    expect(modelIds({ models: [{ name: "llama3:8b" }] })).toEqual(["llama3:8b"])
    expect(modelIds("nope")).toEqual([])
  })

  it("replays a saved reasoning as a thought before its answer", () => {
    const updates = replayUpdates(
      [
        { role: "user", content: "hi" },
        { role: "assistant", content: "Hello!", reasoning: "greet back" }
      ],
      "/p"
    )
    expect(updates).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "hi" } },
      { sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "greet back" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Hello!" } }
    ])
  })
})

describe("thoughts in the terminal", () => {
  const capture = () => {
    let out = ""
    const printer = makePrinter({ write: (text: string) => ((out += text), true) } as unknown as NodeJS.WritableStream)
    return { printer, out: () => out }
  }

  it("on a terminal, streams dim under a 'thinking · N s' label and collapses to one line when the answer starts", () => {
    const { printer, out } = capture()
    let clock = 1000
    const thoughts = makeThoughtDisplay({
      print: printer,
      style: colored,
      live: true,
      columns: () => 10,
      now: () => clock
    })
    thoughts.push("first line\n")
    clock = 2200
    thoughts.push("0123456789abc")
    clock = 3500
    thoughts.close()
    // "first line" fills one row of 10 columns, "0123456789abc" takes two: the label is three rows up
    expect(rowsOf("first line\n0123456789abc", 10)).toBe(3)
    expect(out()).toBe(
      "\u001b[2mthinking · 0 s\u001b[22m\n" +
        "\u001b[2mfirst line\n\u001b[22m\u001b[2m0123456789abc\u001b[22m" +
        // a second later the label says so, rewritten in place
        "\u001b7\u001b[3A\r\u001b[2mthinking · 1 s\u001b[22m\u001b[K\u001b8" +
        "\r\u001b[3A\u001b[J\u001b[2mthought for 3 s\u001b[22m\n"
    )
    printer.write("The answer")
    expect(out().endsWith("thought for 3 s\u001b[22m\nThe answer")).toBe(true)
  })

  it("elsewhere, prints only the closing line", () => {
    const { printer, out } = capture()
    const thoughts = makeThoughtDisplay({ print: printer, style: plain, live: false, columns: () => 80, now: () => 0 })
    thoughts.push("secret plan")
    thoughts.close()
    thoughts.close()
    expect(out()).toBe("thought for 1 s\n")
  })
})
