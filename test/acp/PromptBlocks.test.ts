import { describe, expect, it } from "vitest"

import { promptText } from "../../src/acp/Prompt"
import { selectionLabel, selectionOf } from "../../src/acp/PromptBlocks"
import { droppedBlocksText } from "../../src/acp/PromptTurn"

describe("selection mentions", () => {
  it("reads the line ranges editors write after a file uri", () => {
    expect(selectionOf("file:///p/a.ts#L2:3")).toEqual({ file: "/p/a.ts", start: 2, end: 3 })
    expect(selectionOf("file:///p/a.ts#L2-3")).toEqual({ file: "/p/a.ts", start: 2, end: 3 })
    expect(selectionOf("file:///p/a.ts#L2-L9")).toEqual({ file: "/p/a.ts", start: 2, end: 9 })
    expect(selectionOf("file:///p/a.ts#L7")).toEqual({ file: "/p/a.ts", start: 7, end: 7 })
    expect(selectionOf("file:///p/my%20file.ts#L1:2")).toEqual({ file: "/p/my file.ts", start: 1, end: 2 })
  })

  it("ignores what is not a range of lines", () => {
    for (
      const uri of [
        "file:///p/a.ts",
        "file:///p/a.ts#top",
        "file:///p/a.ts#L0",
        "file:///p/a.ts#L5:2",
        "https://x/y#L2"
      ]
    ) {
      expect(selectionOf(uri)).toBeUndefined()
    }
  })

  it("names a selection path:start-end, relative to the project when inside", () => {
    expect(selectionLabel({ file: "/p/src/a.ts", start: 2, end: 3 }, "/p")).toBe("src/a.ts:2-3")
    expect(selectionLabel({ file: "/p/src/a.ts", start: 4, end: 4 }, "/p")).toBe("src/a.ts:4")
    expect(selectionLabel({ file: "/elsewhere/b.ts", start: 1, end: 2 }, "/p")).toBe("/elsewhere/b.ts:1-2")
  })

  it("gives the model the selected lines under the selection's name", () => {
    const uri = "file:///p/src/a.ts#L2:3"
    const text = promptText(
      [{ type: "text", text: "why is" }, { type: "resource_link", uri, name: "a.ts" }, { type: "text", text: "slow?" }],
      new Map([[uri, "  for (;;)\n  {}"]]),
      "/p"
    )
    expect(text).toBe("why is @src/a.ts:2-3 slow?\n\n<context ref=\"src/a.ts:2-3\">\n  for (;;)\n  {}\n</context>")
  })

  it("says in the thread which blocks the model did not get", () => {
    expect(droppedBlocksText([{ type: "text", text: "hi" }])).toBeUndefined()
    // a PNG is sent (or said not to be, by the turn, when the model cannot see)
    expect(droppedBlocksText([{ type: "image", data: "", mimeType: "image/png" }])).toBeUndefined()
    expect(droppedBlocksText([{ type: "image", data: "", mimeType: "image/tiff" }])).toMatch(
      /^\(image \(image\/tiff\) not sent/
    )
    expect(
      droppedBlocksText([{ type: "audio", data: "", mimeType: "audio/wav" }, {
        type: "image",
        data: "",
        mimeType: "image/bmp"
      }])
    ).toMatch(/^\(audio and image \(image\/bmp\) not sent/)
  })
})
