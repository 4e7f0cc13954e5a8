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
