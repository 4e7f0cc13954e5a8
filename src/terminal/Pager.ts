// What the approval prompt offers to read whole with `v`, in the user's pager: a change too large
// for mm to diff (lib/Diff.ts), through the system's `diff -u` (a separate process, fast on
// rewrites) or the new text when there is no `diff`; or a command too long for the screen, as
// plain text. Either way the text is written to files only the user can read, in a directory of
// their own, removed once the pager is closed. mm waits for the pager; it holds the terminal meanwhile.
// The text is sanitized first: a pager run with -R (LESS=R is common) would pass a sequence on,
// and each control or bidi character is shown as its escape, as on mm's own screen.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { nodeChildProcesses } from "../lib/NodeModules"
import { programPath } from "../lib/Programs"
import { sanitize } from "../text/Sanitize"

/** The pager mm runs: $PAGER, else `less`. */
export const pagerName = (env: NodeJS.ProcessEnv = process.env): string =>
  env.PAGER !== undefined && env.PAGER.trim() !== "" ? env.PAGER.trim() : "less"

const DIFF_SCRIPT = [
  "if command -v diff >/dev/null 2>&1",
  `then diff -u --label "$3" --label "$3" -- "$1" "$2"`,
  `else cat -- "$2"`,
  `fi | $4`
].join("\n")

// the pager reads the text on its stdin, as it reads the diff
const TEXT_SCRIPT = `$2 < "$1"`

/** Writes `files` (mode 0600) into a new directory, runs `sh -c script` on their paths and `args`, then removes them. */
const withFiles = (files: ReadonlyArray<string>, script: string, args: ReadonlyArray<string>): void => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mm-view-"))
  try {
    const paths = files.map((text, i) => {
      const file = path.join(dir, String(i))
      fs.writeFileSync(file, text, { mode: 0o600 })
      return file
    })
    nodeChildProcesses().spawnSync(programPath("sh", [process.cwd()]), ["-c", script, "sh", ...paths, ...args], {
      stdio: "inherit"
    })
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** Shows the change of `shown` from `before` to `after` in the pager; returns once it is closed. */
export const viewInPager = (shown: string, before: string, after: string): void =>
  withFiles([sanitize(before), sanitize(after)], DIFF_SCRIPT, [sanitize(shown), pagerName()])

/** Shows `text` (a command), sanitized, in the pager; returns once it is closed. */
export const viewTextInPager = (text: string): void =>
  withFiles([sanitize(text.endsWith("\n") ? text : `${text}\n`)], TEXT_SCRIPT, [pagerName()])
