// Sessions are on when nothing says otherwise: a project with no configuration of its own keeps
// its conversations under .mm/sessions, and the .mm/ that mm makes keeps itself out of git.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { RECORDS_GITIGNORE } from "../../../src/lib/ProjectDir"
import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, readSession, runMm, sessionFiles, tempProject } from "../../support/MmProcess"

/** A user's own agent.yaml naming the fake server (and nothing of sessions): the project holds none. */
const userConfigHome = (url: string): string => {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "mm-user-config-"))
  fs.mkdirSync(path.join(home, "mm"))
  fs.writeFileSync(path.join(home, "mm", "agent.yaml"), configFor(url).join("\n") + "\n")
  return home
}

const git = (cwd: string, ...args: ReadonlyArray<string>): string =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...args], { cwd, encoding: "utf8" })

describe("sessions with no setting", () => {
  let server: FakeModelServer
  let configHome: string
  beforeAll(async () => {
    server = await startFakeModelServer()
    configHome = userConfigHome(server.url)
  })
  afterAll(() => {
    server.close()
    fs.rmSync(configHome, { recursive: true, force: true })
  })
  const env = () => ({ XDG_CONFIG_HOME: configHome })

  it("a fresh project keeps its first -p question, and --continue goes on with it; git sees nothing of .mm/", async () => {
    const project = tempProject(undefined)
    git(project, "init", "-q")
    fs.writeFileSync(path.join(project, "README"), "hello\n")
    git(project, "add", "README")
    git(project, "commit", "-qm", "first")
    server.push(
      {
        toolCalls: [
          { id: "w", name: "write_file", arguments: { path: "notes.txt", content: "one\n" } },
          { id: "b", name: "bash", arguments: { command: "echo two >> notes.txt" } }
        ]
      },
      { text: "first answer" }
    )
    const first = await runMm(project, [], ["-p", "write the notes"], env())
    expect(first.stdout).toBe("first answer\n")
    expect(first.code).toBe(0)
    const [file] = sessionFiles(project)
    expect(file).toBeDefined()
    expect(fs.readFileSync(path.join(project, "notes.txt"), "utf8")).toBe("one\ntwo\n")
    expect(fs.readFileSync(path.join(project, ".mm", ".gitignore"), "utf8")).toBe(RECORDS_GITIGNORE)
    expect(RECORDS_GITIGNORE.split("\n")).toContain("*")
    // the tool's file is the only thing git sees: nothing under .mm/, and the project's .gitignore untouched
    expect(git(project, "status", "--porcelain", "--untracked-files=all")).toBe("?? notes.txt\n")
    expect(fs.existsSync(path.join(project, ".gitignore"))).toBe(false)

    server.push({ text: "second answer" })
    const second = await runMm(project, [], ["--continue", "-p", "and now?"], env())
    expect(second.stdout).toBe("second answer\n")
    expect(second.code).toBe(0)
    expect(sessionFiles(project)).toEqual([file])
    expect(readSession(project, file).turns).toBe(2)
    const sent = server.completions().at(-1)!.body.messages
    expect(sent.at(1)).toEqual({ role: "user", content: "write the notes" })
    expect(sent.at(-1)).toEqual({ role: "user", content: "and now?" })
    expect(git(project, "status", "--porcelain", "--untracked-files=all")).toBe("?? notes.txt\n")
  })

  it("a .mm/.gitignore of the user's is kept as it is; a .mm/ an older mm made gets one at the next write", async () => {
    const mine = tempProject(undefined)
    fs.mkdirSync(path.join(mine, ".mm"))
    fs.writeFileSync(path.join(mine, ".mm", ".gitignore"), "sessions/\n")
    server.push({ text: "kept" })
    expect((await runMm(mine, [], ["-p", "q"], env())).stdout).toBe("kept\n")
    expect(sessionFiles(mine)).toHaveLength(1)
    expect(fs.readFileSync(path.join(mine, ".mm", ".gitignore"), "utf8")).toBe("sessions/\n")

    const older = tempProject(undefined)
    fs.mkdirSync(path.join(older, ".mm", "sessions"), { recursive: true })
    server.push({ text: "given" })
    expect((await runMm(older, [], ["-p", "q"], env())).stdout).toBe("given\n")
    expect(sessionFiles(older)).toHaveLength(1)
    expect(fs.readFileSync(path.join(older, ".mm", ".gitignore"), "utf8")).toBe(RECORDS_GITIGNORE)
  })

  it("a launch that asks nothing writes nothing", async () => {
    const project = tempProject(undefined)
    const run = await runMm(project, [], [], env())
    expect(run.code).toBe(0)
    expect(run.stderr).toContain(`sessions: saved under ${path.join(project, ".mm", "sessions")}`)
    expect(fs.readdirSync(project)).toEqual([])
  })

  it("sessions.enabled: false writes nothing, and --continue says sessions are off in one line", async () => {
    const project = tempProject(["sessions:", "  enabled: false"])
    server.push({ text: "not kept" })
    const run = await runMm(project, [], ["-p", "q"], env())
    expect(run.stdout).toBe("not kept\n")
    expect(run.code).toBe(0)
    expect(fs.readdirSync(project)).toEqual(["agent.yaml"])
    const asked = server.completions().length
    const again = await runMm(project, [], ["--continue", "-p", "and?"], env())
    expect(again.stdout).toBe("")
    expect(again.stderr).toBe("mm: sessions are off (sessions.enabled: false): no conversation is kept\n")
    expect(again.code).toBe(2)
    expect(server.completions()).toHaveLength(asked)
    expect(fs.readdirSync(project)).toEqual(["agent.yaml"])
  })
})
