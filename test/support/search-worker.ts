// vitest's global set-up (vitest.config.ts): grep and glob run their searches in a worker
// thread built as a file of its own (src/tools/SearchWorker.ts). The tests run the source, not
// a dist/ that may be older, so the worker is built from the source once per run, into a
// temporary folder named in MM_SEARCH_WORKER, which the forks running the test files inherit
// (src/tools/SearchRunner.ts reads it when no worker lies beside it, as in dist/).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { buildSearchWorker } from "../../scripts/search-worker.mjs"

export default async function buildWorker(): Promise<() => void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-test-search-worker-"))
  const file = path.join(dir, "mm-search-worker.cjs")
  await buildSearchWorker(file, { minify: false })
  process.env.MM_SEARCH_WORKER = file
  return () => fs.rmSync(dir, { recursive: true, force: true })
}
