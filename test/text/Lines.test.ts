import { describe, expect, it } from "@effect/vitest"

import { defaultConfig } from "../../src/config/ConfigSchema"
import { saysMore } from "../../src/sessions/ErrorLog"
import {
  banner,
  errorsSuffix,
  FIRST_RUN_HINT,
  localMinute,
  relativeTime,
  resumedLine,
  sessionsLine,
  sessionsListing,
  toolResultLine
} from "../../src/text/Lines"
import { colored, coloredLight, plain, styleFor, themeOf } from "../../src/text/Style"

const summary = (
  id: string,
  extra: Partial<{ title: string; turns: number; errors: number; updatedAt: string }> = {}
) => ({
  _tag: "Readable" as const,
  summary: {
    id,
    cwd: "/p",
    createdAt: "",
    updatedAt: "2026-09-16T10:15:30.000Z",
    title: "a title",
    turns: 2,
    errors: 0,
    ...extra
  }
})

describe("terminal rendering", () => {
  it("the sessions line of the banner", () => {
    expect(sessionsLine({ _tag: "Saving", dir: "/p/.mm/sessions" }, 2)).toBe(
      "sessions: saved under /p/.mm/sessions · 2 earlier — /resume to continue the latest, /sessions to list"
    )
    expect(sessionsLine({ _tag: "Saving", dir: "/p/.mm/sessions" }, 0)).toBe(
      "sessions: saved under /p/.mm/sessions · no earlier sessions"
    )
    expect(sessionsLine({ _tag: "NotSaved", dir: "/p", reason: "cannot write /p: permission denied" }, 0)).toBe(
      "sessions: not saved (cannot write /p: permission denied)"
    )
    expect(sessionsLine({ _tag: "Off" }, 0)).toMatch(/^sessions: off/)
  })

  it("the /sessions listing: numbered rows by last update, relative times, empty threads counted, unreadable files last", () => {
    const text = sessionsListing(
      {
        _tag: "Listed",
        dir: "/p/.mm/sessions",
        entries: [
          summary("20260916-093012-77be01d3", {
            title: "fix the skills loader",
            turns: 5,
            errors: 2,
            updatedAt: "2026-09-16T08:15:30.000Z"
          }),
          summary("20260916-101530-4f2a9c1e", { title: "add a /new command" }),
          summary("20260916-111111-00000000", { title: "", turns: 0 }),
          { _tag: "Unreadable", id: "20260915-181200-0a1b2c3d", reason: "unexpected end of JSON input" }
        ]
      },
      "20260916-101530-4f2a9c1e",
      { now: new Date("2026-09-16T12:20:00.000Z") }
    )
    expect(text.split("\n")).toEqual([
      "3 session(s) in /p/.mm/sessions — /resume <id> to continue one, /resume for the latest",
      `1 * 20260916-101530-4f2a9c1e  ${
        localMinute("2026-09-16T10:15:30.000Z")
      } (2 h ago)  2 turn(s)  add a /new command`,
      `2   20260916-093012-77be01d3  ${
        localMinute("2026-09-16T08:15:30.000Z")
      } (4 h ago)  5 turn(s)  fix the skills loader · ⚠️ 2 error(s)`,
      "    20260915-181200-0a1b2c3d  unreadable: unexpected end of JSON input",
      "1 empty not shown"
    ])
    expect(localMinute("not a date")).toBe("????-??-?? ??:??")
  })

  it("relative times, and a listing failure said once", () => {
    const now = new Date("2026-09-16T12:00:00.000Z")
    expect(relativeTime("2026-09-16T11:59:40.000Z", now)).toBe("just now")
    expect(relativeTime("2026-09-16T11:55:00.000Z", now)).toBe("5 min ago")
    expect(relativeTime("2026-09-13T11:00:00.000Z", now)).toBe("3 d ago")
    expect(sessionsListing({ _tag: "Failed", dir: "/p/s", reason: "cannot list /p/s: permission denied" }, "")).toBe(
      "cannot list the sessions in /p/s: permission denied"
    )
  })

  it("the /resume report", () => {
    expect(resumedLine({ id: "20260916-093012-77be01d3", messages: 14, title: "fix the skills loader", errors: 0 }))
      .toBe(
        "↩️ resumed 20260916-093012-77be01d3 — 14 message(s), started with \"fix the skills loader\""
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
    // no-color.org: set but empty does not count
    expect(styleFor({ isTTY: true }, { NO_COLOR: "" })).toBe(colored)
    expect(styleFor({ isTTY: false }, {})).toBe(plain)
    expect(colored.red("x")).toBe("\u001b[31mx\u001b[39m")
  })
})

describe("error records", () => {
  it("keep raw only when it says more than the line", () => {
    expect(saysMore("", "no session x")).toBe(false)
    expect(saysMore("no session x", "no session x")).toBe(false)
    expect(saysMore("StoreError: cannot list /p: EACCES", "cannot list /p: EACCES")).toBe(false)
    expect(saysMore("ECONNREFUSED 127.0.0.1:11434", "cannot reach http://127.0.0.1:11434/v1")).toBe(true)
  })
})

describe("the banner on a first run", () => {
  const input = (file: string | undefined, answering: boolean) => ({
    version: "0.1.0",
    loaded: { config: defaultConfig(), file },
    answering,
    cwd: "/p",
    status: { _tag: "Off" as const },
    earlier: 0,
    style: plain
  })

  it("with no configuration and no server answering, points to mm init; not otherwise", () => {
    expect(FIRST_RUN_HINT).toBe("no model server found — mm init sets one up")
    expect(banner(input(undefined, false)).split("\n")).toContain(FIRST_RUN_HINT)
    expect(banner(input(undefined, true))).not.toContain(FIRST_RUN_HINT)
    expect(banner(input("/p/agent.yaml", false))).not.toContain(FIRST_RUN_HINT)
  })
})

describe("the theme", () => {
  it("auto reads COLORFGBG's background: 7 or 9-15 is light, anything else (or nothing) dark", () => {
    expect(themeOf("auto", { COLORFGBG: "0;15" })).toBe("light")
    expect(themeOf("auto", { COLORFGBG: "0;default;7" })).toBe("light")
    expect(themeOf("auto", { COLORFGBG: "15;0" })).toBe("dark")
    expect(themeOf("auto", {})).toBe("dark")
    expect(themeOf("dark", { COLORFGBG: "0;15" })).toBe("dark")
    expect(themeOf("light", {})).toBe("light")
    expect(styleFor({ isTTY: true }, {}, "light")).toBe(coloredLight)
    expect(styleFor({ isTTY: true }, { NO_COLOR: "1" }, "light")).toBe(plain)
    expect(styleFor({ isTTY: true }, {}, "dark")).toBe(colored)
  })
})
