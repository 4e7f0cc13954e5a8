import { describe, expect, it } from "@effect/vitest"

import { sessionMarkdown } from "../../src/text/SessionMarkdown"
import { sessionOf } from "../support/store-fixtures"

describe("a session as Markdown", () => {
  // a 400 KB command of 200,000 runs of backticks: spreading every run's length into
  // Math.max overflowed the stack (RangeError), and `mm sessions show` failed
  it("fences a command of 200,000 runs of backticks longer than its longest", () => {
    const command = "`a".repeat(200_000) + "```b"
    const markdown = sessionMarkdown(sessionOf([
      { role: "user", content: "q1" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "bash", arguments: JSON.stringify({ command }) } }]
      },
      { role: "tool", tool_call_id: "c1", content: "``ok" }
    ]))
    expect(markdown).toContain(`\`\`\`\`sh\n${command}\n\`\`\`\``)
    expect(markdown).toContain("Output:\n\n```text\n``ok\n```")
  })

  it("shows a turn another mm is answering as it stands: the running call with its output so far", () => {
    const session = sessionOf([
      { role: "user", content: "build it" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "c1", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "make" }) } },
          { id: "c2", type: "function", function: { name: "bash", arguments: JSON.stringify({ command: "ls" }) } }
        ]
      }
    ])
    const markdown = sessionMarkdown({
      ...session,
      inProgress: {
        question: "build it",
        at: session.createdAt,
        start: 0,
        by: { pid: 4242, host: "box" },
        running: { id: "c1", output: "cc -c main.c\n" }
      }
    })
    expect(markdown).toContain(
      "**Tool call `bash`** (running)\n\n```sh\nmake\n```\n\nOutput so far:\n\n```text\ncc -c main.c\n```"
    )
    expect(markdown).toContain("**Tool call `bash`** (no result)\n\n```sh\nls\n```")
    expect(markdown).toContain("*(this turn is still being answered by mm pid 4242)*")
    expect(sessionMarkdown(session)).not.toContain("still being answered")
  })
})
