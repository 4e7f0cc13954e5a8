// Rendering a 100 KB markdown answer streamed in 7-character pieces, against printing it raw
// (the performance budget: ≤ 1.1×). mm runs on a pseudo-terminal (util-linux `script`) against
// the fake model server; raw is the same run with TERM=dumb (NO_COLOR keeps the layout). Wall time from Enter to the
// answer's last line on screen; launches alternate between the two, medians are compared.
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { startFakeModelServer } from "../test/support/FakeModelServer"

const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const BUDGET = 1.1
const PIECE = 7
const bin = path.resolve("dist/mm.js")
if (!fs.existsSync(bin)) throw new Error("dist/mm.js is missing: run `npm run build` first")

/** About 100 KB of what answers hold: headings, prose with emphasis and code, lists, tables, fenced code. */
const markdownAnswer = (): string => {
  const parts: Array<string> = []
  for (let n = 1; parts.join("\n").length < 100_000; n++) {
    parts.push(
      `## Step ${n}: reading the **configuration** again`,
      "",
      `The loader reads \`agent.yaml\` from the project, then *merges* the defaults. Section ${n} keeps the ` +
        "words long enough to wrap on a normal terminal, so that wrapping at word boundaries is part of what is measured here.",
      "",
      `- first point of step ${n}, with \`inline code\``,
      `- second point, **bold** and _italic_`,
      `- third point with a [link](https://example.com/${n})`,
      "",
      "| key | default | meaning |",
      "| --- | --- | --- |",
      `| model.url | http://127.0.0.1:${n} | where the server listens |`,
      "| watchdogTimeout | 120 | seconds without a token |",
      "",
      "```ts",
      `export const step${n} = (config: Config): number => {`,
      `  const limit = config.maxSteps * ${n}`,
      "  return limit > 100 ? 100 : limit",
      "}",
      "```",
      "",
      `> note ${n}: a quoted line`,
      ""
    )
  }
  parts.push("END-OF-ANSWER")
  return parts.join("\n")
}

const answer = markdownAnswer()
const pieces: Array<string> = []
for (let i = 0; i < answer.length; i += PIECE) pieces.push(answer.slice(i, i + PIECE))

const server = await startFakeModelServer()
const project = fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-markdown-"))
fs.writeFileSync(
  path.join(project, "agent.yaml"),
  `model: { url: "${server.url}", name: bench }\nwatchdogTimeout: 60\n`
)

const waitFor = (child: ChildProcess, screen: { text: string }, pattern: RegExp, from: number): Promise<void> =>
  new Promise((resolve, reject) => {
    const check = () => {
      if (pattern.test(screen.text.slice(from))) {
        child.stdout!.off("data", check)
        clearTimeout(timer)
        resolve()
      }
    }
    const timer = setTimeout(() => reject(new Error(`no ${pattern} on screen`)), 120_000)
    child.stdout!.on("data", check)
    check()
  })

/** One launch: a short warm-up answer (the renderer loads there), then the timed 100 KB answer. */
const timeOne = async (raw: boolean): Promise<number> => {
  const child = spawn("script", ["-qfec", `${process.execPath} ${bin}`, "/dev/null"], {
    cwd: project,
    stdio: ["pipe", "pipe", "ignore"],
    env: { ...process.env, TERM: raw ? "dumb" : "xterm", NO_COLOR: undefined, AGENT_CONFIG: undefined }
  })
  const screen = { text: "" }
  child.stdout!.setEncoding("utf8").on("data", (data: string) => (screen.text += data))
  await waitFor(child, screen, /> /, 0)
  server.push({ text: "# warm\n\nsome **bold** text\n\n```js\nlet x = 1\n```\nWARM-DONE\n" })
  let mark = screen.text.length
  child.stdin!.write("warm up\r")
  await waitFor(child, screen, /WARM-DONE[^]*> /, mark)
  server.push({ text: pieces })
  mark = screen.text.length
  const started = process.hrtime.bigint()
  child.stdin!.write("the long answer\r")
  await waitFor(child, screen, /END-OF-ANSWER/, mark)
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  child.stdin!.write("\u0004")
  await new Promise((resolve) => child.on("exit", resolve))
  // rendered, only the odd line caught mid-way by the live block (drawn raw, then replaced) shows `**`
  const rawBold = screen.text.slice(mark).split("**bold**").length - 1
  if (!raw && rawBold > answer.split("**bold**").length / 10) {
    throw new Error(`the rendered run shows raw markdown (${rawBold} times)`)
  }
  return ms
}

const samples = { raw: [] as Array<number>, rendered: [] as Array<number> }
for (let i = 0; i < RUNS; i++) {
  samples.raw.push(await timeOne(true))
  samples.rendered.push(await timeOne(false))
}
await server.close()
fs.rmSync(project, { recursive: true, force: true })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const raw = median(samples.raw)
const rendered = median(samples.rendered)
const ratio = rendered / raw
console.log(
  `markdown: ${
    (answer.length / 1024).toFixed(0)
  } KB in ${pieces.length} pieces of ${PIECE} characters (${RUNS} alternated launches, medians)`
)
console.log(`  printed raw (TERM=dumb)   ${raw.toFixed(0)} ms`)
console.log(
  `  rendered                   ${rendered.toFixed(0)} ms  ${ratio.toFixed(2)}× raw  ${
    ratio <= BUDGET ? "PASS" : "FAIL"
  } (budget ${BUDGET}×)`
)
console.log(
  JSON.stringify({
    bench: "markdown",
    bytes: answer.length,
    pieces: pieces.length,
    rawMs: raw,
    renderedMs: rendered,
    ratio,
    budget: BUDGET
  })
)
