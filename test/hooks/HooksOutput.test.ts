// A hook's answer read as Claude Code reads it: exit codes, JSON fields, several hooks at once.
import { describe, expect, it } from "@effect/vitest"

import { matcherTakes, toolNames } from "../../src/hooks/HookInput"
import { combined, outcomeOf } from "../../src/hooks/HookOutput"

const exited = (code: number, stdout = "", stderr = "") => ({ _tag: "Exited" as const, code, stdout, stderr })

describe("a hook's answer", () => {
  it("exit 2 blocks where the event can block, and is one line where it cannot", () => {
    expect(outcomeOf("Stop", "./s.sh", exited(2, "", "tests fail\n")).block).toBe("tests fail")
    expect(outcomeOf("SessionStart", "./s.sh", exited(2, "", "no\nmore")).lines).toEqual([
      "hook SessionStart \"./s.sh\": no"
    ])
  })

  it("reads Claude Code's older decision forms and its JSON fields", () => {
    expect(outcomeOf("PreToolUse", "h", exited(0, `{"decision":"approve"}`)).permission?.decision).toBe("allow")
    expect(outcomeOf("PreToolUse", "h", exited(0, `{"decision":"block","reason":"r"}`)).permission).toEqual({
      decision: "deny",
      reason: "r"
    })
    const said = outcomeOf(
      "PostToolUse",
      "h",
      exited(0, `{"systemMessage":"formatted","continue":false,"stopReason":"enough"}`)
    )
    expect([said.lines, said.halt]).toEqual([["hook PostToolUse \"h\": formatted"], "enough"])
    // plain stdout is context only where Claude Code makes it so
    expect(outcomeOf("UserPromptSubmit", "h", exited(0, "branch main\n")).context).toEqual(["branch main"])
    expect(outcomeOf("PreToolUse", "h", exited(0, "chatter")).context).toEqual([])
    expect(outcomeOf("Stop", "h", exited(0, "{not json")).lines[0]).toMatch(
      /^hook Stop "h": its output is not valid JSON/
    )
  })

  it("deny wins over ask, and ask over allow, whatever the order", () => {
    const answer = (decision: string) =>
      outcomeOf(
        "PreToolUse",
        decision,
        exited(0, JSON.stringify({ hookSpecificOutput: { permissionDecision: decision } }))
      )
    expect(combined([answer("allow"), answer("ask")]).permission?.decision).toBe("ask")
    expect(combined([answer("deny"), answer("ask"), answer("allow")]).permission?.decision).toBe("deny")
  })

  it("matchers take mm's and Claude Code's names, whole", () => {
    expect(matcherTakes("Bash", toolNames("bash"), undefined)).toBe(true)
    expect(matcherTakes("Edit|Write", toolNames("write_file"), undefined)).toBe(true)
    expect(matcherTakes("Bas", toolNames("bash"), undefined)).toBe(false)
    expect(matcherTakes("*", toolNames("grep"), undefined)).toBe(true)
  })
})
