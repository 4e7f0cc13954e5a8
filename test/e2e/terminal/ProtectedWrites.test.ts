// The terminal: a [p]roject answer covers the project's files, never its .git/ (nor .mm/ or
// agent.yaml): a later write_file .git/config is still asked, says why, offers no always, and so
// does the edits mode.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const ALLOW = /allow\? \[y\]es[^]*?\[t\]ell mm what to do instead: /
/** The question with nothing but once, no and tell: no [a]lways, no [p]roject. */
const BARE = "allow? [y]es  [n]o  [t]ell mm what to do instead: "

describe("the terminal: .git/config after [p]roject", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("[p] on one edit lets the project's files through, not .git/config; nor does the edits mode", async () => {
    const project = tempProject(
      configFor(server.url).map((l) =>
        l === "permissions: allow" ? "permissions: ask" : l.startsWith("watchdogTimeout") ? "watchdogTimeout: 60" : l
      )
    )
    execFileSync("git", ["init", "-q"], { cwd: project })
    const config = fs.readFileSync(path.join(project, ".git/config"), "utf8")
    const write = (file: string) => ({ name: "write_file", arguments: { path: file, content: "[core]\n" } })
    const mm = new PtyMm(project)
    await mm.waitFor(/> /)

    // 1. [p]roject on an ordinary edit
    server.push({ toolCalls: [write("src/a.txt")] }, { text: "first answer" })
    mm.type("write a\r")
    expect(await mm.waitForText(ALLOW)).toContain("[p]roject")
    mm.type("p")
    await mm.waitForText(/first answer/)
    await mm.waitForText(/first answer[\s\S]*> /)

    // 2. another file of the project goes ahead; .git/config is asked, with why, and refused
    let mark = mm.out.length
    server.push({ toolCalls: [write("src/b.txt"), write(".git/config")] }, { text: "second answer" })
    mm.type("write b and the config\r")
    const asked = await mm.waitForText(ALLOW, mark)
    expect(asked).toContain(`protected, asked as if outside the project: ${path.join(project, ".git/config")}`)
    expect(asked).toContain("(it is in .git/, where a line of config can make git run a program)")
    expect(asked).toContain(BARE)
    expect(fs.readFileSync(path.join(project, "src/b.txt"), "utf8")).toBe("[core]\n")
    mm.type("n")
    await mm.waitForText(/second answer[\s\S]*> /, mark)
    expect(fs.readFileSync(path.join(project, ".git/config"), "utf8")).toBe(config)

    // 3. the edits mode (Shift-Tab): still asked
    mark = mm.out.length
    mm.type("\u001b[Z")
    await mm.waitForText(/permission mode: edits/, mark)
    server.push({ toolCalls: [write(".git/config")] }, { text: "third answer" })
    mark = mm.out.length
    mm.type("write the config again\r")
    expect(await mm.waitForText(ALLOW, mark)).toContain(BARE)
    mm.type("n")
    await mm.waitForText(/third answer[\s\S]*> /, mark)
    expect(fs.readFileSync(path.join(project, ".git/config"), "utf8")).toBe(config)
    mm.type("\x04")
    await mm.exit()
  })
})
