// Runs scripts/docs.ts: bundled with esbuild into a temporary file, then run by this node.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

import { build } from "esbuild"

const dir = mkdtempSync(join(tmpdir(), "mm-docs-"))
try {
  const outfile = join(dir, "docs.cjs")
  await build({
    entryPoints: ["scripts/docs.ts"],
    outfile,
    bundle: true,
    platform: "node",
    format: "cjs",
    logLevel: "warning"
  })
  execFileSync(process.execPath, [outfile], { stdio: "inherit" })
} finally {
  rmSync(dir, { recursive: true, force: true })
}
