// The file tools' writes to the project's .git/, .mm/ and agent.yaml count as writes outside the
// project (issue 42): asked under permissions auto and ask whatever "always" was remembered, so
// `mm -p`, with nobody to ask, refuses them and leaves the files as they were; reading them, and
// writing the project's other files, is unchanged.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, rememberApprovals, runMm, tempProject, withSessions } from "../../support/MmProcess"
import { requireSandbox } from "../../support/sandbox"

const REFUSED = "not approved: no terminal to ask"

/** A git repository with mm's config (`permissions` set as given) and a .mm/permissions.json (which grants nothing). */
const repository = (lines: ReadonlyArray<string>, permissions: string, remembered: ReadonlyArray<unknown> = []) => {
  const project = tempProject(lines.map((l) => (l === "permissions: allow" ? `permissions: ${permissions}` : l)))
  execFileSync("git", ["init", "-q"], { cwd: project })
  fs.mkdirSync(path.join(project, ".mm"), { recursive: true })
  fs.writeFileSync(path.join(project, ".mm", "permissions.json"), JSON.stringify({ version: 1, approvals: remembered }))
  fs.symlinkSync(".git/config", path.join(project, "cfg"))
  return project
}

/** What each protected file holds now. */
const snapshot = (project: string) =>
  Object.fromEntries(
    [".git/config", ".mm/permissions.json", "agent.yaml"].map((
      f
    ) => [f, fs.readFileSync(path.join(project, f), "utf8")])
  )

/** What the model writes into .git/config (harmless here: the point is whether it lands). */
const written = "[core]\n\tbare = false\n# written by the model\n"

/** The model's calls: three protected writes, one through a link, and the controls. */
const calls = [
  { id: "git", name: "write_file", arguments: { path: ".git/config", content: written } },
  { id: "link", name: "write_file", arguments: { path: "cfg", content: written } },
  { id: "dots", name: "write_file", arguments: { path: "src/../.git/hooks/pre-commit", content: "#!/bin/sh\n" } },
  {
    id: "mm",
    name: "edit_file",
    arguments: { path: ".mm/permissions.json", old: `{"version":1`, new: `{"version":1,"x":1` }
  },
  {
    id: "yaml",
    name: "edit_file",
    arguments: { path: "agent.yaml", old: "permissions:", new: "permissions: allow #" }
  },
  { id: "src", name: "write_file", arguments: { path: "src/a.txt", content: "mine\n" } },
  { id: "read", name: "read_file", arguments: { path: ".git/config" } }
]

describe("mm -p: writes to .git/, .mm/ and agent.yaml are asked, so refused", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  /** Runs the calls in `project`, and checks what the model was told and what is on disk. */
  const runCalls = async (project: string) => {
    const before = snapshot(project)
    server.push({ toolCalls: calls }, { text: "done" })
    const run = await runMm(project, [], ["-p", "go"])
    expect(run.stdout).toBe("done\n")
    const results = lastToolResults(server)
    for (const id of ["git", "link", "dots", "mm", "yaml"]) expect(results[id], id).toContain(REFUSED)
    expect(snapshot(project)).toEqual(before)
    expect(fs.existsSync(path.join(project, ".git/hooks/pre-commit"))).toBe(false)
    // the control: the project's other files are written, and .git is read without a question
    expect(results.src).toMatch(/^created src\/a\.txt/)
    expect(fs.readFileSync(path.join(project, "src/a.txt"), "utf8")).toBe("mine\n")
    expect(results.read).toContain("[core]")
    expect(results.read).not.toContain(REFUSED)
    return run
  }

  it("permissions: auto (the sandbox on) — asked, where the same call elsewhere in the project is not", async () => {
    requireSandbox()
    const run = await runCalls(repository(configFor(server.url), "auto"))
    expect(run.stderr).not.toContain("the sandbox is off")
  })

  it("permissions: ask — a remembered [p]roject or file always does not cover them", async () => {
    const project = repository(withSessions(server.url), "ask")
    const remembered = [
      { _tag: "Project", dir: project },
      { _tag: "File", path: path.join(project, ".git", "config") },
      { _tag: "File", path: path.join(project, "agent.yaml") }
    ]
    rememberApprovals(project, remembered)
    const run = await runCalls(project)
    expect(run.stderr).not.toContain("remembered approvals not used")
  })

  it("permissions: allow — nothing is asked, as for a write outside the project", async () => {
    const project = repository(configFor(server.url), "allow")
    server.push({ toolCalls: [calls[0]] }, { text: "done" })
    const run = await runMm(project, [], ["-p", "go"])
    expect(run.stdout).toBe("done\n")
    expect(lastToolResults(server).git).toMatch(/^overwrote \.git\/config/)
    expect(fs.readFileSync(path.join(project, ".git/config"), "utf8")).toBe(written)
  })
})
