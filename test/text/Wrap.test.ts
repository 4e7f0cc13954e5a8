import stringWidth from "string-width"
import { describe, expect, it } from "vitest"

import { helpText } from "../../src/terminal/Commands"
import { cutWord, wrapText } from "../../src/text/Wrap"

const words = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "").split(/\s+/).filter((w) => w !== "")

describe("wrapping at word boundaries", () => {
  it("/help at 60 columns: no row wider, no word cut, descriptions continue under their column", () => {
    const wrapped = wrapText(helpText(), 60)
    for (const row of wrapped.split("\n")) expect(stringWidth(row)).toBeLessThanOrEqual(60)
    expect(words(wrapped)).toEqual(words(helpText()))
    const exit = wrapped.split("\n").findIndex((row) => row.startsWith("  /exit"))
    const column = wrapped.split("\n")[exit].indexOf("leave")
    expect(wrapped.split("\n")[exit + 1].search(/\S/)).toBe(column)
  })

  it("a long path breaks after a /, a colour code takes no room, a short line is left alone", () => {
    const path = "/tmp/some/very/long/path/that/goes/on/and/on/forever/and/ever/project-dir"
    const wrapped = wrapText(`project: ${path} · config: agent.yaml`, 40).split("\n")
    for (const row of wrapped) expect(stringWidth(row)).toBeLessThanOrEqual(40)
    expect(wrapped[0]).toMatch(/^project: \/tmp\/.*\/$/)
    expect(wrapped[1]).toMatch(/\/$/)
    expect(wrapped.join("").replace(/ +/g, " ")).toContain("project-dir · config: agent.yaml")
    const red = "\u001b[31mthe server did not answer (e.g. it is loading a model) — raise watchdogTimeout\u001b[39m"
    const rows = wrapText(red, 40).split("\n")
    expect(rows.map((row) => stringWidth(row)).every((w) => w <= 40)).toBe(true)
    expect(words(rows.join(" "))).toEqual(words(red))
    expect(wrapText("short line", 40)).toBe("short line")
  })

  it("a coloured path is cut after a /, its colour codes whole and taking no room", () => {
    const path = "\u001b[33msrc/components/dashboard/widgets/charts/renderers/LineChart.tsx\u001b[39m"
    const pieces = cutWord(path, 40)
    expect(pieces).toEqual(["\u001b[33msrc/components/dashboard/widgets/charts/", "renderers/LineChart.tsx\u001b[39m"])
  })

  it("a model's 100,000-character word or path is cut row by row in one walk, as before", () => {
    // each row used to split and measure the rest of the word again: 'x' * 10,000 took 1.7 s
    const word = "x".repeat(100_000)
    const rows = wrapText(word, 80).split("\n")
    expect(rows.length).toBe(1250)
    expect(rows.every((row) => row === "x".repeat(80))).toBe(true)
    const path = "a/".repeat(100_000)
    const cut = wrapText(path, 81).split("\n")
    expect(cut.join("")).toBe(path)
    expect(cut.slice(0, -1).every((row) => row === "a/".repeat(40))).toBe(true)
    const wide = cutWord(`${"日".repeat(50_010)}😀`, 41)
    expect(wide.join("")).toBe(`${"日".repeat(50_010)}😀`)
    expect(wide.slice(0, -1).every((piece) => stringWidth(piece) === 40)).toBe(true)
    expect(wide.at(-1)).toBe("日日日日日日日日日日😀")
  })
})
