// The terminal and files that look secret (issue 43): read_file .env inside the project is asked,
// saying why; n keeps it from the model, y reads it. `@.env` in a question is asked before the
// file is read, and refused with one line when stdin is piped.
import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, lastToolResults, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const MARKER = "pty-dotenv-marker-55a1"
const ALLOW = /allow\? \[y\]es[^\n]*: /
const WHY = "`.env` looks like it holds secrets: its content would go to the model"

const project = (url: string) => {
  const dir = tempProject(
    configFor(url).map((l) =>
      l === "permissions: allow" ? "permissions: ask" : l.startsWith("watchdogTimeout") ? "watchdogTimeout: 60" : l
    )
  )
  fs.writeFileSync(path.join(dir, ".env"), `TOKEN=${MARKER}\n`)
  return dir
}

describe("the terminal: files that look secret", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  /** Everything mm sent the model server, as one text. */
  const sent = () => JSON.stringify(server.completions().map((request) => request.body))

  it("read_file .env is asked with why; n keeps it from the model, y reads it", async () => {
    const dir = project(server.url)
    const read = { name: "read_file", arguments: { path: ".env" } }
    const mm = new PtyMm(dir)
    await mm.waitFor(/> /)

    let mark = mm.out.length
    server.push({ toolCalls: [read] }, { text: "first answer" })
    mm.type("read the env\r")
    const asked = await mm.waitForText(ALLOW, mark)
    expect(asked).toContain(WHY)
    expect(asked).toContain("[a]lways .env")
    mm.type("n")
    await mm.waitForText(/first answer[\s\S]*> /, mark)
    expect(sent()).not.toContain(MARKER)

    mark = mm.out.length
    server.push({ toolCalls: [{ ...read, id: "again" }] }, { text: "second answer" })
    mm.type("read it again\r")
    expect(await mm.waitForText(ALLOW, mark)).toContain(WHY)
    mm.type("y")
    await mm.waitForText(/second answer[\s\S]*> /, mark)
    expect(lastToolResults(server).again).toBe(`TOKEN=${MARKER}`)
    mm.type("\x04")
    await mm.exit()
  })

  it("@.env is asked before it is read: n sends nothing, y attaches it", async () => {
    const dir = project(server.url)
    const mm = new PtyMm(dir)
    await mm.waitFor(/> /)
    const requests = server.completions().length

    let mark = mm.out.length
    mm.type("what is in @.env\r")
    const asked = await mm.waitForText(/attach it\? \[y\/n\] /, mark)
    expect(asked).toContain(WHY)
    mm.type("n")
    await mm.waitForText(/not attached \(nothing was sent\)[\s\S]*> /, mark)

    mark = mm.out.length
    server.push({ text: "attached answer" })
    mm.type("what is in @.env\r")
    await mm.waitForText(/attach it\? \[y\/n\] /, mark)
    mm.type("y")
    await mm.waitForText(/attached answer[\s\S]*> /, mark)
    // one request only: the question refused was never sent
    expect(server.completions().length).toBe(requests + 1)
    expect(JSON.stringify(server.completions().at(-1)?.body)).toContain(MARKER)
    mm.type("\x04")
    await mm.exit()
  })

  it("piped stdin: @.env is refused with one line, and nothing is sent", async () => {
    const dir = project(server.url)
    const requests = server.completions().length
    const run = await runMm(dir, ["what is in @.env"])
    expect(run.stderr).toContain(`${WHY.split(":")[0]}: not attached, no terminal to ask (nothing was sent)`)
    expect(server.completions().length).toBe(requests)
    expect(run.stdout + run.stderr).not.toContain(MARKER)
  })
})
