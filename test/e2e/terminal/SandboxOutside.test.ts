import * as fs from "node:fs"
import * as path from "node:path"

import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, tempProject } from "../../support/MmProcess"
import { recordingPager } from "../../support/pager"
import { PtyMm } from "../../support/PtyMm"
import { outsideDir, requireSandbox } from "../../support/sandbox"

const QUESTION = "run it outside the sandbox? [y/n]"

describe("the question to run a blocked command outside the sandbox", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    requireSandbox()
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("shows all 42 lines of a 42-line command before it asks; n leaves the outside untouched", async () => {
    const project = tempProject(configFor(server.url, ["sandbox: on"]))
    const outside = outsideDir()
    // 41 lines that print nothing, so that whatever shows them is the preview, not the output
    const lines = [
      ...Array.from({ length: 41 }, (_, i) => `: step ${String(i + 1).padStart(2, "0")} of the plan`),
      `touch ${outside}/escaped`
    ]
    server.push({ toolCalls: [{ name: "bash", arguments: { command: lines.join("\n") } }] }, { text: "kept it in" })
    // 50 rows: room for all 42 lines (a shorter terminal would cut them, the rest in the pager)
    const mm = new PtyMm(project, {}, [], { columns: 80, rows: 50 })
    await mm.waitForText(/sandbox: on[\s\S]*> /)
    mm.type("run the plan\r")
    const seen = (await mm.waitForText(/run it outside the sandbox\? \[y\/n\]/)).replace(/\r/g, "")
    const before = seen.slice(0, seen.lastIndexOf(QUESTION))
    // every line, in order, one screen line each, as the ordinary approval draws a command
    expect(before).toContain(lines.map((line) => `  ${line}\n`).join(""))
    // and below them the reason, whatever its words
    expect(before.slice(before.lastIndexOf(lines[41])).split("\n").slice(1).join("\n")).toMatch(/sandbox/)
    mm.type("n")
    await mm.waitForText(/kept it in/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.existsSync(path.join(outside, "escaped"))).toBe(false)
    const result = server.completions().at(-1)!.body.messages.filter((m: { role: string }) => m.role === "tool").at(-1)
    expect(result.content).toContain("not run outside the sandbox: the user said no")
  })

  it("shows the part of a command after a C1 control, which bash runs, before it asks", async () => {
    const project = tempProject(configFor(server.url, ["sandbox: on"]))
    const outside = outsideDir()
    // U+009D starts an OSC sequence on a terminal, which would swallow the rest of the line;
    // to bash it is a character of a word, and `; echo …` runs
    const command = `touch ${outside}/motd \u009d; echo pwned > ${outside}/escaped`
    const shown = `touch ${outside}/motd \\x9d; echo pwned > ${outside}/escaped`
    server.push({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "kept it in" })
    const mm = new PtyMm(project, {}, [], { columns: 160, rows: 40 })
    await mm.waitForText(/sandbox: on[\s\S]*> /)
    mm.type("touch the motd\r")
    const seen = (await mm.waitForText(/run it outside the sandbox\? \[y\/n\]/)).replace(/\r/g, "")
    const before = seen.slice(0, seen.lastIndexOf(QUESTION))
    // on the tool's line and in the preview above the question, whole, the control as its escape
    expect(before).toContain(`⚙ bash  ${shown}`)
    expect(before).toContain(`  ${shown}\n`)
    expect(seen).not.toContain("\u009d")
    mm.type("n")
    await mm.waitForText(/kept it in/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.existsSync(path.join(outside, "escaped"))).toBe(false)
  })

  it("cuts a 300-line command to the screen and offers v, which gives the pager every line", async () => {
    const project = tempProject(configFor(server.url, ["sandbox: on"]))
    const outside = outsideDir()
    const lines = [
      ...Array.from({ length: 299 }, (_, i) => `: step ${String(i + 1).padStart(3, "0")} of the plan`),
      `touch ${outside}/escaped`
    ]
    const command = lines.join("\n")
    server.push({ toolCalls: [{ name: "bash", arguments: { command } }] }, { text: "kept it in" })
    const recorder = recordingPager()
    // 30 rows: 24 for the command, 23 of its lines and the line that says what is left out
    const mm = new PtyMm(project, { PAGER: recorder.pager }, [], { columns: 100, rows: 30 })
    await mm.waitForText(/sandbox: on[\s\S]*> /)
    mm.type("run the plan\r")
    const seen = (await mm.waitForText(/run it outside the sandbox\? \[y\/n\] {2}\[v\]iew/)).replace(/\r/g, "")
    const before = seen.slice(0, seen.lastIndexOf(QUESTION))
    expect(before).toContain(
      `${
        lines.slice(0, 23).map((line) => `  ${line}\n`).join("")
      }  … 277 more lines not shown — [v]iew the whole command in ${recorder.pager}\n`
    )
    expect(before).not.toContain(lines[299])
    let mark = mm.out.length
    mm.type("v")
    // the question comes back once the pager has closed, and the pager had every line
    await mm.waitForText(/run it outside the sandbox\? \[y\/n\]/, mark)
    expect(recorder.seen()).toBe(`${command}\n`)
    mark = mm.out.length
    mm.type("n")
    await mm.waitForText(/kept it in/, mark)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
    expect(fs.existsSync(path.join(outside, "escaped"))).toBe(false)
  })
})
