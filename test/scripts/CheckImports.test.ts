import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { describe, expect, it } from "vitest"

import { checkImports, specifiersOf } from "../../scripts/check-imports.mjs"
import { REPO_ROOT } from "../support/paths"

const tree = (files: Record<string, string>): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-imports-"))
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true })
    fs.writeFileSync(path.join(dir, name), text)
  }
  return dir
}

describe("the import rule (scripts/check-imports.mjs)", () => {
  it("holds for src/: no cycle, no façade importing another, nothing importing upward", () => {
    expect(checkImports(path.join(REPO_ROOT, "src"))).toEqual([])
  })

  it("reads static, type-only, multi-line, dynamic and require imports, and only relative ones", () => {
    const text = [
      "import * as Effect from \"effect/Effect\"",
      "import type { A } from \"./a\"",
      "import {",
      "  b,",
      "  type C",
      "} from \"../b\"",
      "export { d } from \"./d\"",
      "const e = await import(\"./e\")",
      "const f = require(\"./f\") as typeof import(\"./f\")"
    ].join("\n")
    // the last line names ./f twice: once in require(), once in typeof import()
    expect(specifiersOf(text)).toEqual(["./a", "../b", "./d", "./e", "./f", "./f"])
  })

  it("names an upward import, a façade importing a façade, a cycle and an unresolvable path", () => {
    const dir = tree({
      "lib/Low.ts": "import { high } from \"../agent/High\"\nexport const low = 1\n",
      "agent/High.ts": "import type { low } from \"../lib/Low\"\nexport const high = 2\n",
      "terminal/View.ts": "import { x } from \"../acp/Undo\"\n",
      "acp/Undo.ts": "export const x = 1\nimport(\"./Missing\")\n"
    })
    expect(checkImports(dir).sort()).toEqual([
      "acp/Undo.ts: cannot resolve ./Missing",
      "import cycle among: agent/High.ts, lib/Low.ts",
      "lib/Low.ts → agent/High.ts: lib/ is below agent/",
      "terminal/View.ts → acp/Undo.ts: terminal/ and acp/ are peers and may not import each other"
    ])
  })
})
