import * as fs from "node:fs"
import * as path from "node:path"

import { describe, expect, it } from "@effect/vitest"

import type { Session } from "../../../src/domain/Session"
import { encodeSession } from "../../../src/sessions/SessionCodec"
import { runMm, sessionsDir, tempProject } from "../../support/MmProcess"

const ID = "20261110-090000-1a2b3c4d"
const SHELL = "I ran a shell command in the project (context for what follows, no answer needed):"

/** A session where the user ran `!git status`, asked, then undid a change (mm's note). */
const project = (recap?: number) => {
  const dir = tempProject([
    "model:",
    "  url: http://127.0.0.1:9/v1",
    "  name: m",
    "sessions:",
    "  enabled: true",
    ...(recap === undefined ? [] : [`  recap: ${recap}`])
  ])
  fs.mkdirSync(sessionsDir(dir), { recursive: true, mode: 0o700 })
  const messages: Session["messages"] = [
    { role: "system", content: "s" },
    { role: "user", content: `${SHELL}\n$ git status\nnothing to commit` },
    { role: "user", content: "why is the build red?" },
    { role: "assistant", content: "A missing import." },
    { role: "user", content: "[mm] the user reverted the last turn's changes: files app.ts", note: true },
    { role: "user", content: "try again" },
    { role: "assistant", content: "Fixed the import." }
  ]
  const at = "2026-11-10T09:30:00.000Z"
  const session: Session = {
    version: 1,
    id: ID,
    cwd: dir,
    createdAt: at,
    updatedAt: at,
    title: "why is the build red?",
    turns: 2,
    messages,
    errors: []
  }
  fs.writeFileSync(path.join(sessionsDir(dir), `${ID}.json`), encodeSession(session), { mode: 0o600 })
  return dir
}

describe("the recap and sessions show tell questions from shell commands and mm's notes", () => {
  it("the recap after a resume marks `! command` and `(mm) note`; only questions get `> `", async () => {
    const run = await runMm(project(4), [], ["--resume", ID])
    const recap = run.stderr.slice(run.stderr.indexOf("resumed"))
    expect(recap).toContain("\n! git status\n")
    expect(recap).toContain("\n(mm) the user reverted the last turn's changes: files app.ts\n")
    expect(recap).toContain("\n> why is the build red?\n")
    expect(recap).not.toMatch(/> (!|I ran a shell|\[mm\])/)
  })

  it("sessions.recap: 0 draws nothing after the resume line; the default draws the last 3", async () => {
    const none = await runMm(project(0), [], ["--resume", ID])
    expect(none.stderr).toContain(`resumed ${ID}`)
    expect(none.stderr).not.toContain("why is the build red?\n")
    expect(none.stderr).not.toContain("Fixed the import.")
    const three = await runMm(project(), [], ["--resume", ID])
    expect(three.stderr).toContain("… 1 earlier exchange(s) not shown")
    expect(three.stderr).toContain("Fixed the import.")
  })

  it("sessions show numbers only the questions, and shows the shell command and the note as such", async () => {
    const dir = project()
    const run = await runMm(dir, [], ["sessions", "show", ID])
    expect(run.stdout).toContain("**! git status** — a shell command the user ran")
    expect(run.stdout).toContain("nothing to commit")
    expect(run.stdout).toContain("*(mm) the user reverted the last turn's changes: files app.ts*")
    expect(run.stdout).toContain("## 1. Question\n\n> why is the build red?")
    expect(run.stdout).toContain("## 2. Question\n\n> try again")
    expect(run.stdout).not.toContain("## 3. Question")
  })
})
