import { PassThrough } from "node:stream"

import { beforeAll, describe, expect, it } from "@effect/vitest"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as TestClock from "effect/TestClock"
import stringWidth from "string-width"

import { type AnswerOutput, loadMarkdownEngine, makeAnswerRenderer, makeAnswers } from "../../src/terminal/Markdown"
import type { MarkdownEngine } from "../../src/terminal/MarkdownEngine"
import { fitColumns } from "../../src/terminal/TableFit"
import { makePrinter } from "../../src/terminal/TerminalIO"
import { stripAnsi } from "../support/MmProcess"
import { until } from "../support/until"

/** An engine that says what it was asked to draw. */
const tracing: MarkdownEngine = {
  line: (markdown) => `L(${markdown})`,
  code: (lines, language) => lines.map((line) => `C[${language}](${line})`).join("\n"),
  table: (rows) => `T(${rows.join("/")})`
}

const recorder = (columns = 80) => {
  const written: Array<string> = []
  const live: Array<ReadonlyArray<string> | undefined> = []
  const out: AnswerOutput = {
    write: (text) => written.push(text),
    live: (rows) => live.push(rows?.()),
    columns: () => columns,
    rows: () => 24
  }
  return { out, written, live, text: () => written.join("") }
}

const inPieces = (text: string, size = 7) =>
  Array.from({ length: Math.ceil(text.length / size) }, (_, i) => text.slice(i * size, i * size + size))

describe("an answer drawn as it streams", () => {
  it("draws a line once it is complete, code lines one by one, a table once it ends; fences are not drawn", () => {
    const { out, text } = recorder()
    const answer = makeAnswerRenderer(out, tracing)
    const markdown =
      "# Title\nsome **bold** words\n\n```ts\nconst x = 1\n  y()\n```\n| a | b |\n|---|---|\n| 1 | 2 |\nafter the table\nlast words"
    for (const piece of inPieces(markdown)) answer.write(piece)
    // the last line has no newline yet: held
    expect(text()).toBe(
      "L(# Title)\nL(some **bold** words)\nL()\nC[ts](const x = 1)\nC[ts](  y())\nT(| a | b |/|---|---|/| 1 | 2 |)\nL(after the table)\n"
    )
    answer.flush()
    expect(text()).toMatch(/L\(after the table\)\nL\(last words\)\n$/)
  })

  it("flushing draws what is held: a table cut short, the partial line; and a fence does not outlive its answer", () => {
    const { out, text } = recorder()
    const answer = makeAnswerRenderer(out, tracing)
    answer.write("| a | b |\n|---|---|\n| 1 |")
    expect(text()).toBe("")
    answer.flush()
    expect(text()).toBe("T(| a | b |/|---|---|/| 1 |)\n")
    const next = makeAnswerRenderer(out, tracing)
    next.write("```\nopen fence")
    next.flush()
    const again = makeAnswerRenderer(out, tracing)
    again.write("prose again\n")
    expect(text()).toMatch(/C\[\]\(open fence\)\nL\(prose again\)\n$/)
  })

  it("shows what is not complete yet raw in the live block, cut to the width, and erases it when flushed", async () => {
    const { out, live } = recorder(30)
    const answer = makeAnswerRenderer(out, tracing)
    answer.write("| a | b |\n")
    answer.write("a line that is longer than the twenty-nine columns")
    expect(live).toEqual([])
    await until(() => live.length > 0, "the live block's redraw")
    const rows = live.at(-1)!
    expect(rows[0]).toBe("| a | b |")
    expect(rows.slice(1).join("")).toBe("a line that is longer than the twenty-nine columns")
    expect(rows.every((row) => row.length <= 29)).toBe(true)
    answer.flush()
    expect(live.at(-1)).toBeUndefined()
  })

  it("draws a fenced block's lines come so far at the next redraw, without waiting for the fence to close", async () => {
    const { out, text, live } = recorder()
    const answer = makeAnswerRenderer(out, tracing)
    answer.write("```py\nfirst = 1\nsecond = 2\nthi")
    expect(text()).toBe("")
    await until(() => live.length > 0, "the next redraw")
    expect(text()).toBe("C[py](first = 1)\nC[py](second = 2)\n")
    expect(live.at(-1)).toEqual(["thi"])
    answer.write("rd = 3\n```\n")
    expect(text()).toMatch(/C\[py\]\(third = 3\)\n$/)
    answer.flush()
  })

  it("a line streamed in half a million pieces is drawn live from its last screenful, then whole", async () => {
    // each piece used to split the whole line again, and each redraw to spread it into characters
    const { out, live, text } = recorder(40)
    const answer = makeAnswerRenderer(out, tracing)
    const line = `a😀${"x".repeat(1_000_000)}`
    // two-character pieces: the emoji's halves come apart
    for (let i = 0; i < line.length; i += 2) answer.write(line.slice(i, i + 2))
    await until(() => live.length > 0, "the live block's redraw")
    const chars = [...line]
    const rows = Array.from(
      { length: Math.ceil(chars.length / 39) },
      (_, i) => chars.slice(i * 39, i * 39 + 39).join("")
    )
    expect(live.at(-1)).toEqual(rows.slice(-22))
    answer.write("\nnext\n")
    expect(text()).toBe(`L(${line})\nL(next)\n`)
    answer.flush()
  })
})

describe("the markdown engine", () => {
  let engine: MarkdownEngine
  let columns = 60
  beforeAll(async () => {
    engine = await loadMarkdownEngine(() => columns)
  })

  it("renders inline syntax: no ** or backticks left, bold and code coloured", () => {
    const line = engine.line("some **bold**, `code`, _italic_ and a [link](https://example.com)")
    expect(stripAnsi(line)).toBe("some bold, code, italic and a link (https://example.com)")
    expect(line).toContain("\u001b[1mbold")
    expect(line).toMatch(/\u001b\[33mcode/)
  })

  it("draws list items with a bullet, quotes with a bar, headings without their hashes, rules as a line", () => {
    expect(stripAnsi(engine.line("- a **point**"))).toBe("• a point")
    expect(stripAnsi(engine.line("  2. second"))).toBe("  2. second")
    expect(stripAnsi(engine.line("> quoted words"))).toBe("│ quoted words")
    expect(stripAnsi(engine.line("## A heading"))).toBe("A heading")
    expect(stripAnsi(engine.line("---"))).toMatch(/^─{20,}$/)
  })

  it("wraps at word boundaries within the terminal's width, list items under their text", () => {
    columns = 40
    const words = "the loader reads the configuration file from the project and then merges the defaults into it"
    const rows = stripAnsi(engine.line(`- ${words}`)).split("\n")
    expect(rows.length).toBeGreaterThan(2)
    for (const row of rows) expect(stringWidth(row)).toBeLessThanOrEqual(39)
    expect(rows.slice(1).every((row) => row.startsWith("  ") && !row.startsWith("   "))).toBe(true)
    expect(rows.map((row) => row.trim()).join(" ")).toBe(`• ${words}`)
    columns = 60
  })

  it("aligns a table's columns, fitted to the width, without cutting words", () => {
    const rows = [
      "| key | default | meaning |",
      "| --- | ---: | --- |",
      "| model.url | http://127.0.0.1:8080/v1 | where the model server listens for the requests mm sends |",
      "| watchdogTimeout | **120** | seconds |"
    ]
    for (const width of [60, 100]) {
      columns = width
      const lines = stripAnsi(engine.table(rows)).split("\n")
      const widths = new Set(lines.map((line) => stringWidth(line)))
      expect(widths.size).toBe(1)
      expect([...widths][0]).toBeLessThanOrEqual(width - 1)
      // every row's borders at the same columns
      const borders = (line: string) => [...line].flatMap((char, i) => (/[│┼┬┴├┤┌┐└┘]/.test(char) ? [i] : []))
      expect(new Set(lines.map((line) => borders(line).join(","))).size).toBe(1)
      const cells = lines.join(" ")
      for (const word of ["watchdogTimeout", "http://127.0.0.1:8080/v1", "requests", "120"]) {
        expect(cells).toContain(word)
      }
      expect(cells).not.toContain("**")
    }
    columns = 60
  })

  it("highlights a fenced line in a known language, and leaves others plain", () => {
    const known = engine.code(["const limit = `a", "b` // a comment"], "ts")
    expect(stripAnsi(known)).toBe("  const limit = `a\n  b` // a comment")
    expect(known).toMatch(/\u001b\[\d+mconst/)
    // a string over two lines is coloured on both, each line closing its colour
    const [first, second] = known.split("\n")
    expect(first).toMatch(/\u001b\[31m`a\u001b\[39m$/)
    expect(second).toMatch(/^ {2}\u001b\[31mb`\u001b\[39m/)
    expect(stripAnsi(engine.code(["whatever here"], "no-such-language"))).toBe("  whatever here")
  })

  it("draws a model's line of thousands of nested markers as it came, and the next lines as usual", () => {
    // marked's inline lexer overflowed the stack on this line, and mm exited
    const stars = `${"*".repeat(20_000)}a${"*".repeat(20_000)}`
    expect(stripAnsi(engine.line(stars)).split("\n").join("")).toBe(stars)
    const unders = `${"_".repeat(3000)}a${"_".repeat(3000)}`
    expect(stripAnsi(engine.line(`- ${unders}`)).replace(/\n +/g, "")).toBe(`• ${unders}`)
    // seconds in marked before
    const opened = "**a".repeat(100_000)
    expect(stripAnsi(engine.line(opened)).split("\n").join("")).toBe(opened)
    const table = engine.table(["| a | b |", "| --- | --- |", `| ${stars} | x |`])
    expect(stripAnsi(table).split("\n").join("")).toContain(stars)
    expect(engine.line("after **that**")).toContain("\u001b[1mthat")
  })

  it("cuts a model's word of 100,000 characters into rows as wide as the terminal", () => {
    // wrap-ansi measured the word whole for each row: 50 s on this line
    const word = `${"x".repeat(100_000)}😀`
    const rows = stripAnsi(engine.line(word)).split("\n")
    expect(rows.join("")).toBe(word)
    expect(rows.slice(0, -1).every((row) => row === "x".repeat(59))).toBe(true)
    const wide = stripAnsi(engine.line(`- ${"日本".repeat(20_000)}`)).split("\n")
    expect(wide.map((row) => row.replace(/^(• | {2})/, "")).join("")).toBe("日本".repeat(20_000))
    expect(wide.every((row) => stringWidth(row) <= 59)).toBe(true)
  })

  it("shows a fenced block plain when a line of it is too long to highlight, or the block too big", () => {
    // highlight.js took seconds, growing with the square of the line, in many languages
    const long = "a ".repeat(100_000)
    expect(engine.code(["int x = 1;", long], "c")).toBe(
      `  \u001b[33mint x = 1;\u001b[39m\n  \u001b[33m${long}\u001b[39m`
    )
    const many = Array.from({ length: 4000 }, (_, i) => `int x${i} = ${i}; // a short line`)
    const drawn = engine.code(many, "c").split("\n")
    expect(drawn).toEqual(many.map((line) => `  \u001b[33m${line}\u001b[39m`))
    expect(engine.code(["int x = 1;"], "c")).toMatch(/\u001b\[\d+mint\u001b/)
  })

  it("fits columns: narrow ones keep their width, wide ones share the rest, words are kept whole when they fit", () => {
    expect(fitColumns([10, 20], [5, 8], 40)).toEqual([10, 20])
    expect(fitColumns([10, 60], [5, 12], 40)).toEqual([10, 30])
    expect(fitColumns([30, 60, 20], [12, 14, 9], 50)).toEqual([17, 19, 14])
    // longest words that do not fit: an even share
    expect(fitColumns([30, 30], [28, 28], 40)).toEqual([20, 20])
  })
})

describe("where answers go", () => {
  it("through a pipe, or with TERM=dumb, an answer is printed exactly as it came", async () => {
    const stream = new PassThrough()
    let printed = ""
    stream.on("data", (chunk) => (printed += chunk))
    const piped = makeAnswers(
      makePrinter(stream),
      {},
      Object.assign(stream, { isTTY: false }) as unknown as NodeJS.WriteStream
    )
    expect(await Effect.runPromise(piped.engine)).toBeUndefined()
    piped.write("**raw** | a |\n")
    piped.flush()
    const noColour = makeAnswers(
      makePrinter(stream),
      { TERM: "dumb" },
      Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.WriteStream
    )
    expect(await Effect.runPromise(noColour.engine)).toBeUndefined()
    noColour.write("`kept`")
    expect(printed).toBe("**raw** | a |\n`kept`")
  })

  /** Answers for a terminal, and the fiber a question's preload forked, its asker still running. */
  const preloaded = Effect.gen(function*() {
    const answers = makeAnswers(
      makePrinter(new PassThrough()),
      { TERM: "xterm-256color" },
      Object.assign(new PassThrough(), { isTTY: true, columns: 80 }) as unknown as NodeJS.WriteStream
    )
    const asked = yield* Deferred.make<void>()
    const asker = yield* Effect.fork(
      Effect.zipRight(answers.preload, Deferred.succeed(asked, undefined)).pipe(
        Effect.zipRight(Effect.never)
      )
    )
    yield* Deferred.await(asked)
    const [load] = yield* Fiber.children(asker)
    return { answers, asker, load }
  })

  it.effect("a question sent on a terminal loads the engine in the background, a moment later", () =>
    Effect.gen(function*() {
      const { answers, asker, load } = yield* preloaded
      // not at once: the request goes out first
      expect(yield* TestClock.sleeps()).toHaveLength(1)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(load)
      expect(answers.settled()).toBe(true)
      // loaded: a second question has nothing to load
      const before = (yield* Fiber.children(asker)).length
      yield* answers.preload
      expect((yield* Fiber.children(asker)).length).toBe(before)
      yield* Fiber.interrupt(asker)
    }))

  it.effect("the background load ends with the fiber that asked: once mm ends, it never starts", () =>
    Effect.gen(function*() {
      const { asker, load } = yield* preloaded
      yield* Fiber.interrupt(asker)
      expect(Exit.isInterrupted(yield* Fiber.await(load))).toBe(true)
    }))
})
