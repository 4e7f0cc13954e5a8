import { describe, expect, it } from "vitest"

import { choicesOf, previewBlock } from "../../src/terminal/ApprovalPrompt"
import { plain } from "../../src/text/Style"

describe("the approval prompt", () => {
  it("the terminal's question to step out is yes or no, with the reason above it", () => {
    const request = {
      preview: { _tag: "Command", command: "touch /etc/x", timeout: undefined } as const,
      title: "touch /etc/x",
      always: [],
      outsideSandbox: "it tried to write outside the project, which the sandbox makes read-only"
    }
    expect(choicesOf(request)).toEqual({ line: "run it outside the sandbox? [y/n] ", keys: ["y", "n"] })
    expect(previewBlock(request, plain, 200)).toBe(
      "  the sandbox blocked it: it tried to write outside the project, which the sandbox makes read-only\n"
    )
  })
})
