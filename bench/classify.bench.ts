// Approval classifier budget: classifying a 2 KB bash command takes < 2 ms once the bash parser
// is loaded (src/approvals/CommandReader.ts: tree-sitter-bash, then the allowlist walk and the
// list of read-only programs, ReadOnlyCommands.ts). Four commands of 2 KB are timed: one simple
// command of literal words that is not read-only (every word read), one read-only command whose
// every word is a path resolved against the project (links followed, one `lstat` per component),
// a compound one, and one the parser stops early on. The
// parse alone (the tree-sitter call, no walk) is shown beside them, for reference; the one-time
// load of the parser is shown too (it happens the first time a bash call needs approval, never
// at start-up). BENCH_RUNS for the number of timed runs (median kept).
import { classifyCommand } from "../src/approvals/ApprovalScope"
import { loadBashSyntax } from "../src/approvals/BashSyntax"
import { loadCommandReader } from "../src/approvals/CommandReader"

const RUNS = Number(process.env.BENCH_RUNS ?? 501)
const BUDGET_MS = 2
const SIZE = 2048

const verdict = (ok: boolean) => (ok ? "PASS" : "FAIL")
const ms = (n: number) => `${n.toFixed(3)} ms`
const median = (values: ReadonlyArray<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

const fill = (head: string, piece: (i: number) => string): string => {
  let text = head
  // whole pieces only (a cut would leave a quote open): 2 KB and a few bytes
  for (let i = 0; text.length < SIZE; i++) text += piece(i)
  return text
}

const commands = {
  "simple, literal words": fill("npm test --", (i) => ` src/module${i}/file-${i}.test.ts 'quoted arg ${i}' "x${i}"`),
  "read-only, every path checked": fill("cat -n --", (i) => ` src/module${i}/deeper/file-${i}.test.ts`),
  "compound (&&, |, ;)": fill("npm ci", (i) => ` && npm test -- part${i} | tee log${i}.txt ; echo done${i}`),
  "not literal ($, quotes)": fill("echo", (i) => ` "$HOME/${i}" $'a\\'b' \${VAR_${i}} $(date)`)
}

const time = (work: () => void): number => {
  const start = process.hrtime.bigint()
  work()
  return Number(process.hrtime.bigint() - start) / 1e6
}

const main = async () => {
  const loadStart = process.hrtime.bigint()
  const reader = await loadCommandReader()
  const loadMs = Number(process.hrtime.bigint() - loadStart) / 1e6
  const syntax = await loadBashSyntax()
  const results: Record<string, number> = {}
  console.log(
    `classifying a 2 KB bash command, median of ${RUNS} runs (budget < ${BUDGET_MS} ms once the parser is loaded)`
  )
  let allOk = true
  for (const [name, command] of Object.entries(commands)) {
    // warm up: the first calls compile the code paths
    for (let i = 0; i < 20; i++) classifyCommand(reader.read, command, process.cwd())
    const classify: Array<number> = []
    const parse: Array<number> = []
    for (let i = 0; i < RUNS; i++) {
      // alternated, so that both see the same load of the machine
      classify.push(time(() => classifyCommand(reader.read, command, process.cwd())))
      parse.push(time(() => syntax.parse(command, (root) => root.childCount)))
    }
    const c = median(classify)
    const p = median(parse)
    const ok = c < BUDGET_MS
    allOk &&= ok
    results[name] = c
    const kind = classifyCommand(reader.read, command, process.cwd())._tag
    console.log(`  ${name.padEnd(30)} ${ms(c).padStart(10)}  ${verdict(ok)}  (${kind}; the parse alone ${ms(p)})`)
  }
  console.log(`  (loading the parser once      ${ms(loadMs).padStart(10)}  the first time a bash call needs approval)`)
  console.log(JSON.stringify({ bench: "classify", budgetMs: BUDGET_MS, loadMs, medianMs: results, pass: allOk }))
}

void main()
