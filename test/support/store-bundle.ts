import { execFileSync } from "node:child_process"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

import { build } from "esbuild"

const here = NodePath.dirname(fileURLToPath(import.meta.url))

/** Bundles a helper of test/support into one .mjs that node runs as a child process. */
export const bundleHelper = async (name: string, outDir: string): Promise<string> => {
  const outfile = NodePath.join(outDir, `${name}.mjs`)
  await build({
    entryPoints: [NodePath.join(here, `${name}.ts`)],
    outfile,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning"
  })
  return outfile
}

/**
 * Bundles a helper of test/support as one CommonJS script and builds a V8 start-up snapshot of
 * it (`node --build-snapshot`): the arguments that start node on it. The helper hands its work
 * to `v8.startupSnapshot.setDeserializeMainFunction` when a snapshot is being built.
 */
export const snapshotHelper = async (name: string, outDir: string): Promise<ReadonlyArray<string>> => {
  const script = NodePath.join(outDir, `${name}.cjs`)
  const blob = NodePath.join(outDir, `${name}.blob`)
  await build({
    entryPoints: [NodePath.join(here, `${name}.ts`)],
    outfile: script,
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20",
    logLevel: "warning"
  })
  execFileSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", script], { cwd: outDir, stdio: "pipe" })
  return ["--snapshot-blob", blob]
}
