import { describe, expect, it } from "@effect/vitest"
import { errorsSuffix, localMinute, resumedLine, sessionsLine, sessionsListing, toolResultLine } from "../src/Terminal/Render"
import { colored, plain, styleFor } from "../src/Terminal/Style"

const summary = (id: string, extra: Partial<{ title: string; turns: number; errors: number; updatedAt: string }> = {}) => ({
  _tag: "Readable" as const,
  summary: { id, cwd: "/p", createdAt: "", updatedAt: "2026-09-16T10:15:30.000Z", title: "a title", turns: 2, errors: 0, ...extra }
})

describe("terminal rendering", () => {
  it("the sessions line of the banner", () => {
    expect(sessionsLine({ _tag: "Saving", dir: "/p/.mm/sessions" }, 2)).toBe(
      "sessions: saved under /p/.mm/sessions · 2 earlier — /resume to continue the latest, /sessions to list"
    )
    expect(sessionsLine({ _tag: "NotSaved", dir: "/p", reason: "cannot write /p: permission denied" }, 0)).toBe(
      "sessions: not saved (cannot write /p: permission denied)"
    )
    expect(sessionsLine({ _tag: "Off" }, 0)).toMatch(/^sessions: off/)
  })

  it("the /sessions listing: header, current mark, errors, unreadable files", () => {
    const text = sessionsListing(
      {
        _tag: "Listed",
        dir: "/p/.mm/sessions",
        entries: [
          summary("20260916-101530-4f2a9c1e", { title: "add a /new command" }),
          summary("20260916-093012-77be01d3", { title: "fix the skills loader", turns: 5, errors: 2 }),
          { _tag: "Unreadable", id: "20260915-181200-0a1b2c3d", reason: "unexpected end of JSON input" }
        ]
      },
      "20260916-101530-4f2a9c1e"
    )
    const minute = localMinute("2026-09-16T10:15:30.000Z")
    expect(text.split("\n")).toEqual([
      "3 session(s) in /p/.mm/sessions — /resume <id> to continue one, /resume for the latest",
      `* 20260916-101530-4f2a9c1e  ${minute}  2 turn(s)  add a /new command`,
      `  20260916-093012-77be01d3  ${minute}  5 turn(s)  fix the skills loader · ⚠️ 2 error(s)`,
      "  20260915-181200-0a1b2c3d  unreadable: unexpected end of JSON input"
    ])
    expect(localMinute("not a date")).toBe("????-??-?? ??:??")
  })

  it("the /resume report", () => {
    expect(resumedLine({ id: "20260916-093012-77be01d3", messages: 14, title: "fix the skills loader", errors: 0 })).toBe(
      '↩️ resumed 20260916-093012-77be01d3 — 14 message(s), started with "fix the skills loader"'
    )
    expect(resumedLine({ id: "x", messages: 1, title: "t", errors: 3 })).toMatch(/ · ⚠️ 3 error\(s\)$/)
    expect(errorsSuffix(0)).toBe("")
  })

  it("a tool result line says how it went in a few words", () => {
    expect(toolResultLine("exit code 0\nfile-a\nfile-b", false, plain)).toBe("  ↳ exit code 0 · file-a  (3 lines)")
    expect(toolResultLine("no such file: x", true, plain)).toBe("  ✗ no such file: x")
    expect(toolResultLine("x".repeat(300), false, plain).length).toBeLessThan(110)
  })

  it("colours only on a terminal without NO_COLOR", () => {
    expect(styleFor({ isTTY: true }, {})).toBe(colored)
    expect(styleFor({ isTTY: true }, { NO_COLOR: "1" })).toBe(plain)
    expect(styleFor({ isTTY: false }, {})).toBe(plain)
    expect(colored.red("x")).toBe("\u001b[31mx\u001b[39m")
  })
})
