// Search budget: the grep tool over a project of 50,000 files answers in under 2 s. The tree
// is generated (source-like files of about 1 KB in nested folders, a .gitignore, an ignored
// build folder); the baseline is the floor of any search in Node: a bare walk that reads every
// file and tests the expression, without ignore rules. `grep -rn` is timed for reference.
// BENCH_FILES (50000) for the tree's size, BENCH_RUNS (5) for the timed runs (median kept).
// grep and glob search in a worker thread (src/tools/SearchWorker.ts): the bench builds it from
// the source, as it bundles the rest, into bench/.data/ and names it in MM_SEARCH_WORKER; the
// first grep, which starts the worker, is shown apart.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"

import { SecretRegistry, Secrets } from "../src/lib/Secrets"
import { FileAccessDisk } from "../src/tools/FileAccess"
import { builtinRegistry } from "../src/tools/Registry"
import { runTool } from "../src/tools/Tools"

const FILES = Number(process.env.BENCH_FILES ?? 50_000)
const RUNS = Number(process.env.BENCH_RUNS ?? 5)
const BUDGET_MS = 2000
/** The part of the budget that holds on a loaded machine: grep against the bare walk of the same run. */
const BUDGET_RATIO = 1.5
const PER_FOLDER = 100

const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const ms = (n: number) => `${n.toFixed(1)} ms`.padStart(10)
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/** The search worker, built from the source beside the bench's bundle. */
const buildWorker = () => {
  const file = path.resolve("bench/.data/mm-search-worker.cjs")
  execFileSync(process.execPath, ["scripts/search-worker.mjs", file], { stdio: "inherit" })
  process.env.MM_SEARCH_WORKER = file
}

const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "mm-bench-search-")))
const cleanup = () => fs.rmSync(root, { recursive: true, force: true })
process.on("SIGINT", () => {
  cleanup()
  process.exit(130)
})

const fileText = (i: number): string => {
  const lines = [`// module ${i}`, `import { helper } from "../shared/helper${i % 97}"`, ""]
  for (let n = 0; n < 10; n++) lines.push(`export const value${n} = helper(${i * 10 + n}, "text of line ${n}")`)
  if (i % 5000 === 0) lines.push("export function needleFinder() { return 42 }")
  return lines.join("\n") + "\n"
}

/** FILES files in folders of PER_FOLDER, two levels deep, plus an ignored build folder. */
const generate = () => {
  fs.writeFileSync(path.join(root, ".gitignore"), "build/\n*.tmp\n")
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, "src", `pkg${Math.floor(i / (PER_FOLDER * 10))}`, `mod${Math.floor(i / PER_FOLDER)}`)
    if (i % PER_FOLDER === 0) fs.mkdirSync(dir, { recursive: true })
    fs.writeFileSync(path.join(dir, `file${i}.ts`), fileText(i))
  }
  fs.mkdirSync(path.join(root, "build"))
  for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(root, "build", `out${i}.js`), "needleFinder()\n")
}

/** The floor: every file read and tested, no ignore rules, no output. */
const bareWalk = (pattern: RegExp): number => {
  let found = 0
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) walk(file)
      else if (pattern.test(fs.readFileSync(file, "utf8"))) found++
    }
  }
  walk(root)
  return found
}

const services = Layer.mergeAll(FileAccessDisk, Layer.sync(Secrets, () => new SecretRegistry()))

const tool = (name: string, args: object) =>
  Effect.runPromise(
    runTool(builtinRegistry.find(name)!, JSON.stringify(args), { cwd: root, maxOutput: 16000 }).pipe(
      Effect.provide(services)
    )
  )

const time = async (run: () => unknown): Promise<number> => {
  const started = performance.now()
  await run()
  return performance.now() - started
}

const main = async () => {
  buildWorker()
  const made = performance.now()
  generate()
  console.log(`${FILES} files generated in ${((performance.now() - made) / 1000).toFixed(1)} s (and 1000 ignored)`)
  const hasGrep = (() => {
    try {
      execFileSync("grep", ["--version"], { stdio: "ignore" })
      return true
    } catch {
      return false
    }
  })()
  const runs = {
    bare: [] as Array<number>,
    grep: [] as Array<number>,
    regex: [] as Array<number>,
    glob: [] as Array<number>,
    system: [] as Array<number>
  }
  let output = ""
  for (let run = 0; run < RUNS; run++) {
    runs.bare.push(await time(() => bareWalk(/needleFinder/m)))
    runs.grep.push(await time(async () => (output = (await tool("grep", { pattern: "needleFinder" })).output)))
    runs.regex.push(await time(() => tool("grep", { pattern: "needle\\w+\\(\\)", glob: "*.ts" })))
    runs.glob.push(await time(() => tool("glob", { pattern: "file4999*.ts" })))
    if (hasGrep) {
      runs.system.push(
        await time(() => execFileSync("grep", ["-rn", "--exclude-dir=build", "needleFinder", "."], { cwd: root }))
      )
    }
  }
  const matches = output.split("\n").length
  const bare = median(runs.bare)
  const grep = median(runs.grep)
  const regex = median(runs.regex)
  const glob = median(runs.glob)
  console.log(
    `\nsearching ${FILES} files, median of ${RUNS} runs (budget: grep under ${BUDGET_MS} ms, and ≤ ${BUDGET_RATIO}× the bare walk)`
  )
  console.log(`  bare walk, read and test   ${ms(bare)}  (baseline)`)
  console.log(
    `  grep tool                  ${ms(grep)}  ${(grep / bare).toFixed(2)}× baseline  ${
      verdict(grep < BUDGET_MS)
    } (${matches} lines found)`
  )
  console.log(
    `  grep tool, an expression   ${ms(regex)}  ${(regex / bare).toFixed(2)}× baseline  ${
      verdict(regex / bare <= BUDGET_RATIO)
    } (every file decoded)`
  )
  console.log(`  the slower grep under ${BUDGET_MS} ms: ${verdict(Math.max(grep, regex) < BUDGET_MS)}`)
  console.log(`  glob tool                  ${ms(glob)}  ${(glob / bare).toFixed(2)}× baseline`)
  console.log(`  first grep (starts worker) ${ms(runs.grep[0])}`)
  if (hasGrep) console.log(`  (grep -rn, for reference)  ${ms(median(runs.system))}`)
  console.log(
    JSON.stringify({
      bench: "search",
      files: FILES,
      bareMs: bare,
      grepMs: grep,
      regexMs: regex,
      globMs: glob,
      firstGrepMs: runs.grep[0],
      systemGrepMs: hasGrep ? median(runs.system) : null,
      pass: Math.max(grep, regex) < BUDGET_MS && Math.max(grep, regex) / bare <= BUDGET_RATIO
    })
  )
}

main().finally(cleanup)
