// Builds the search worker (src/tools/SearchWorker.ts: grep's and glob's searches, with the
// `ignore` and `picomatch` libraries inside) as one CommonJS file. scripts/build.mjs puts it
// beside the core as dist/mm-search-worker.cjs; the tests (test/support/search-worker.ts) and
// the search bench build it from the source into a folder of their own and name it in
// MM_SEARCH_WORKER.
//   node scripts/search-worker.mjs OUTFILE [--no-minify]
import { resolve } from "node:path"
import { fileURLToPath } from "node:url"

import { build } from "esbuild"

const root = resolve(fileURLToPath(import.meta.url), "..", "..")

/** Builds the worker into `outfile`. */
export const buildSearchWorker = (outfile, { minify = true } = {}) =>
  build({
    entryPoints: [resolve(root, "src/tools/SearchWorker.ts")],
    outfile,
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    minify,
    legalComments: "none",
    logLevel: "warning"
  })

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outfile = process.argv[2]
  if (outfile === undefined) {
    console.error("usage: node scripts/search-worker.mjs OUTFILE [--no-minify]")
    process.exit(2)
  }
  await buildSearchWorker(resolve(outfile), { minify: !process.argv.includes("--no-minify") })
}
