// The project's bench runner: bundles each bench/*.bench.ts into bench/.data/ and runs it with
// node from the repository root, one after the other, printing its output as it comes.
//   node bench/run.mjs                 every bench
//   node bench/run.mjs sessions ...    only the named ones (file name without .bench.ts)
// Ends with one line per bench (its PASS/FAIL lines counted); exits 1 if a bench crashed.
import { spawn } from "node:child_process"
import { mkdirSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"

import { build } from "esbuild"

const benchDir = dirname(fileURLToPath(import.meta.url))
const root = dirname(benchDir)
const outDir = join(benchDir, ".data")
const version = JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version

const all = readdirSync(benchDir)
  .filter((name) => name.endsWith(".bench.ts"))
  .map((name) => name.slice(0, -".bench.ts".length))
  .sort()
const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !all.includes(name))
if (unknown.length > 0) {
  console.error(`no such bench: ${unknown.join(", ")} (there are: ${all.join(", ")})`)
  process.exit(2)
}
const names = wanted.length > 0 ? wanted : all

const banner = {
  js: [
    "import { createRequire as __mmCreateRequire } from 'node:module';",
    "const require = __mmCreateRequire(import.meta.url);"
  ].join("\n")
}

mkdirSync(outDir, { recursive: true })

const bundle = async (name) => {
  const outfile = join(outDir, `${name}.mjs`)
  await build({
    entryPoints: [join(benchDir, `${name}.bench.ts`)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    banner,
    define: { MM_VERSION: JSON.stringify(version) },
    logLevel: "warning"
  })
  return outfile
}

/** Runs one bundle, echoing its output; resolves with its exit code and its PASS/FAIL lines. */
const run = (file) =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: root, stdio: ["ignore", "pipe", "inherit"], env: process.env })
    let verdicts = { pass: 0, fail: 0 }
    let pending = ""
    child.stdout.on("data", (chunk) => {
      process.stdout.write(chunk)
      const lines = (pending + chunk.toString()).split("\n")
      pending = lines.pop() ?? ""
      for (const line of lines) {
        if (/\bFAIL\b/.test(line)) verdicts = { ...verdicts, fail: verdicts.fail + 1 }
        else if (/\bPASS\b/.test(line)) verdicts = { ...verdicts, pass: verdicts.pass + 1 }
      }
    })
    child.on("close", (code, signal) => resolve({ code: code ?? (signal ? 128 : 1), ...verdicts }))
  })

const results = []
for (const name of names) {
  console.log(`\n━━ ${name} ━━`)
  const started = Date.now()
  let result
  try {
    const file = await bundle(name)
    console.log(`(bundled to ${relative(root, file)})`)
    result = await run(file)
  } catch (error) {
    console.error(String(error?.message ?? error))
    result = { code: 1, pass: 0, fail: 0 }
  }
  results.push({ name, seconds: (Date.now() - started) / 1000, ...result })
}

console.log("\n━━ summary ━━")
for (const { name, seconds, code, pass, fail } of results) {
  const status = code !== 0 ? `CRASHED (exit ${code})` : fail > 0 ? `${fail} FAIL, ${pass} PASS` : `${pass} PASS`
  console.log(`  ${name.padEnd(16)} ${status.padEnd(22)} ${seconds.toFixed(1)} s`)
}
process.exit(results.some((r) => r.code !== 0) ? 1 : 0)
