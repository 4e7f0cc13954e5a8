// A change too large for mm to diff (lib/Diff.ts), shown whole in the user's pager: the system's
// `diff -u` (a separate process, fast on rewrites) piped into $PAGER, or the new text when there is
// no `diff`. mm waits for the pager to close; it holds the terminal meanwhile.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { nodeChildProcesses } from "../lib/NodeModules"

/** The pager mm runs: $PAGER, else `less`. */
export const pagerName = (env: NodeJS.ProcessEnv = process.env): string =>
  env.PAGER !== undefined && env.PAGER.trim() !== "" ? env.PAGER.trim() : "less"

const SCRIPT = [
  "if command -v diff >/dev/null 2>&1",
  `then diff -u --label "$3" --label "$3" -- "$1" "$2"`,
  `else cat -- "$2"`,
  `fi | $4`
].join("\n")

/** Shows the change of `shown` from `before` to `after` in the pager; returns once it is closed. */
export const viewInPager = (shown: string, before: string, after: string): void => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-view-"))
  try {
    const oldFile = path.join(dir, "before")
    const newFile = path.join(dir, "after")
    fs.writeFileSync(oldFile, before, { mode: 0o600 })
    fs.writeFileSync(newFile, after, { mode: 0o600 })
    nodeChildProcesses().spawnSync("sh", ["-c", SCRIPT, "sh", oldFile, newFile, shown, pagerName()], {
      stdio: "inherit"
    })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
