// Bundles src/bin.ts into dist/mm.js (plus lazily loaded chunks) and regenerates agent.schema.json.
import { build } from "esbuild"
import { execFileSync } from "node:child_process"
import { readFileSync, rmSync, writeFileSync } from "node:fs"

const pkg = JSON.parse(readFileSync("package.json", "utf8"))
const banner = {
  js: [
    "import { createRequire as __mmCreateRequire } from 'node:module';",
    "const require = __mmCreateRequire(import.meta.url);"
  ].join("\n")
}

rmSync("dist", { recursive: true, force: true })
await build({
  entryPoints: { mm: "src/bin.ts" },
  outdir: "dist",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  banner,
  define: { MM_VERSION: JSON.stringify(pkg.version) },
  chunkNames: "chunks/[name]-[hash]",
  minify: true,
  legalComments: "none",
  logLevel: "warning"
})

await build({
  entryPoints: ["scripts/json-schema.ts"],
  outfile: "dist/json-schema.mjs",
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  banner,
  logLevel: "warning"
})
const schema = execFileSync(process.execPath, ["dist/json-schema.mjs"], { encoding: "utf8" })
writeFileSync("agent.schema.json", schema)
rmSync("dist/json-schema.mjs")
