import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

import { type FakeModelServer, startFakeModelServer } from "../../support/FakeModelServer"
import { configFor, runMm, stripAnsi, tempProject } from "../../support/MmProcess"
import { PtyMm } from "../../support/PtyMm"

const inPieces = (text: string, size = 7) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, i * size + size))

const answerText = [
  "Here is **x** and `code`.",
  "",
  "| name | value |",
  "| --- | --- |",
  "| alpha | 1 |",
  "| a much longer name | 22 |",
  "",
  "```js",
  "const answer = 42",
  "```",
  "END"
].join("\n")

describe("rendered answers on a terminal, raw through a pipe", () => {
  let server: FakeModelServer
  beforeAll(async () => {
    server = await startFakeModelServer()
  })
  afterAll(() => server.close())

  it("on a terminal: no ** left, the table's columns aligned, the fence highlighted and its markers gone; a blank line before the next prompt", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    server.push({ text: inPieces(answerText) })
    const mark = mm.out.length
    mm.type("show me\r")
    await mm.waitFor(/END[^]*> /, mark)
    const screen = mm.out.slice(mark)
    const plain = stripAnsi(screen).replace(/\r/g, "")
    expect(plain).toContain("Here is x and code.")
    expect(plain).not.toContain("**")
    expect(plain).not.toContain("```")
    const tableRows = plain.split("\n").filter((line) => /^[│┌├└]/.test(line))
    expect(tableRows.length).toBeGreaterThanOrEqual(5)
    const bars = (line: string) => [...line].flatMap((char, i) => (/[│┼┬┴┤├┐┘┌└]/.test(char) ? [i] : [])).join(",")
    expect(new Set(tableRows.map(bars)).size).toBe(1)
    expect(tableRows.some((row) => /│ a much longer name │ 22 +│/.test(row))).toBe(true)
    // the code line, coloured
    expect(screen).toMatch(/\u001b\[\d+mconst\u001b\[\d+m answer = \u001b\[\d+m42/)
    expect(plain).toMatch(/END\n(.*\n)?\n> /)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("on a terminal with NO_COLOR=1 the answer keeps its layout, without colours", async () => {
    const mm = new PtyMm(tempProject(configFor(server.url)), { NO_COLOR: "1" })
    await mm.waitFor(/> /)
    server.push({ text: inPieces(answerText) })
    const mark = mm.out.length
    mm.type("show me\r")
    await mm.waitFor(/END/, mark)
    const plain = mm.out.slice(mark).replace(/\r/g, "")
    expect(stripAnsi(plain)).toContain("Here is x and code.")
    expect(plain).not.toContain("| a much longer name | 22 |")
    expect(plain).toContain("│ a much longer name │")
    expect(plain).not.toContain("```js")
    expect(plain).not.toMatch(/\u001b\[[0-9;]*m/)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("on a terminal: a line of thousands of nested markers is drawn as it came, and mm answers on", async () => {
    // marked's inline lexer overflowed the stack on this line and mm exited with 1
    const stars = `${"*".repeat(2550)}a${"*".repeat(2550)}`
    const mm = new PtyMm(tempProject(configFor(server.url)))
    await mm.waitFor(/> /)
    server.push({ text: inPieces(`${stars}\nEND`, 500) })
    const mark = mm.out.length
    mm.type("show me\r")
    await mm.waitFor(/END[^]*> /, mark)
    const plain = stripAnsi(mm.out.slice(mark)).replace(/\r/g, "")
    expect(plain).toContain(`a${"*".repeat(40)}`)
    server.push({ text: ["still here"] })
    const again = mm.out.length
    mm.type("and now?\r")
    await mm.waitFor(/still here[^]*> /, again)
    mm.type("\x04")
    expect(await mm.exit()).toBe(0)
  })

  it("through a pipe stdout holds exactly what the model wrote", async () => {
    server.push({ text: inPieces(answerText) })
    const run = await runMm(tempProject(configFor(server.url)), ["show me"])
    expect(run.stdout).toBe(`${answerText}\n`)
  })
})
