import { build } from "esbuild"
import { describe, expect, it } from "vitest"

import { REPO_ROOT } from "../support/paths"

/**
 * What each way of running mm evaluates at start: the modules reached from its entries by
 * static imports (esbuild's own reading, after TypeScript's type-only imports are gone), not
 * through `import()`, which the bundle evaluates only when it runs.
 */
const eagerFrom = async (entries: ReadonlyArray<string>): Promise<{ files: Set<string>; packages: Set<string> }> => {
  const result = await build({
    absWorkingDir: REPO_ROOT,
    entryPoints: ["src/Main.ts"],
    bundle: true,
    write: false,
    metafile: true,
    packages: "external",
    platform: "node",
    format: "cjs",
    logLevel: "silent"
  })
  const inputs = result.metafile.inputs
  const seen = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: string): void => {
    if (seen.has(file) || !file.startsWith("src/")) return
    seen.add(file)
    for (const imported of inputs[file]?.imports ?? []) {
      if (imported.kind === "dynamic-import") continue
      if (imported.external === true) packages.add(imported.path)
      else visit(imported.path)
    }
  }
  for (const entry of entries) {
    expect(inputs[entry], `${entry} is in the bundle`).toBeDefined()
    visit(entry)
  }
  return { files: seen, packages }
}

const under = ({ files }: { files: Set<string> }, dir: string) => [...files].filter((file) => file.startsWith(dir))

/**
 * What decodes an agent.yaml (its schema and the YAML parser), loaded only for a text the memo
 * does not know (config/Config.ts); a skill file's reader, only when there is one; `mm init`.
 */
const DECODING = [
  "src/config/ConfigSchema.ts",
  "src/config/ConfigParse.ts",
  "src/agent/SkillFile.ts",
  "src/cli/Init.ts"
]

const expectNoDecoding = ({ files, packages }: { files: Set<string>; packages: Set<string> }) => {
  for (const file of DECODING) expect(files.has(file), file).toBe(false)
  expect([...packages].filter((name) => name === "yaml" || name.startsWith("yaml/"))).toEqual([])
}

describe("what each façade evaluates at start (the bundle's eager graph)", () => {
  it(
    "mm -p: none of the terminal's or the editor's modules, nor what decodes agent.yaml",
    async () => {
      const eager = await eagerFrom(["src/Main.ts", "src/print/Print.ts"])
      expectNoDecoding(eager)
      expect(eager.files.has("src/agent/Turn.ts")).toBe(true)
      expect(under(eager, "src/terminal/")).toEqual([])
      expect(under(eager, "src/acp/")).toEqual([])
    },
    60_000
  )

  it(
    "the terminal: none of print mode's or the editor's modules, nor what decodes agent.yaml",
    async () => {
      const eager = await eagerFrom(["src/Main.ts", "src/terminal/Repl.ts", "src/terminal/TerminalIO.ts"])
      expectNoDecoding(eager)
      expect(eager.files.has("src/agent/Turn.ts")).toBe(true)
      expect(under(eager, "src/print/")).toEqual([])
      expect(under(eager, "src/acp/")).toEqual([])
    },
    60_000
  )
})
