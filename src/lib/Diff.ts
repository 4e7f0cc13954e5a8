// Unified diffs of a file's text, on the `diff` package (jsdiff). Shared by the approval
// preview, /changes and /undo, and the ACP façade. Bounded: jsdiff's line diff is worse than
// quadratic on a rewrite (169 s for 20,000 changed lines), and it runs on the main thread, where
// it would hold off Ctrl-C and signals; past the bounds below it gives up and the change is
// summed up from a linear scan instead.
import { formatPatch, structuredPatch } from "diff"

/** A diff gives up past this many changed lines (its edit length)… */
const DIFF_MAX_EDIT_LENGTH = 2000
/** …or this much time spent diffing (milliseconds). */
const DIFF_TIMEOUT_MS = 200

interface TextDiff {
  /**
   * The unified diff: `--- path` / `+++ path` headers, then hunks with line numbers
   * (`@@ -12,7 +12,8 @@`) and `context` unchanged lines around each change. The empty string
   * when the texts are the same, or when the diff was too large (`tooLarge`).
   */
  readonly diff: string
  /** Lines added and removed; when `tooLarge`, estimated (the changed middle of each side). */
  readonly added: number
  readonly removed: number
  /** Lines of each text. */
  readonly beforeLines: number
  readonly afterLines: number
  /** The diff passed its bounds: no `diff`, and the counts are estimates. */
  readonly tooLarge: boolean
}

const lineStarts = (text: string): Array<number> => {
  const starts = [0]
  for (let at = text.indexOf("\n"); at !== -1 && at + 1 < text.length; at = text.indexOf("\n", at + 1)) {
    starts.push(at + 1)
  }
  return text === "" ? [] : starts
}

const lineAt = (text: string, starts: ReadonlyArray<number>, i: number): string =>
  text.slice(starts[i], i + 1 < starts.length ? starts[i + 1] : text.length)

/**
 * The lines both texts share at the start and at the end, found in linear time, and the lines
 * each side keeps once they are set aside (the changed middle).
 */
const trim = (before: string, after: string) => {
  const a = lineStarts(before)
  const b = lineStarts(after)
  let prefix = 0
  while (prefix < a.length && prefix < b.length && lineAt(before, a, prefix) === lineAt(after, b, prefix)) prefix++
  let suffix = 0
  while (
    suffix < a.length - prefix && suffix < b.length - prefix &&
    lineAt(before, a, a.length - 1 - suffix) === lineAt(after, b, b.length - 1 - suffix)
  ) suffix++
  return { a, b, prefix, suffix }
}

/** From line `from` (0-based) of `text` to the end of the line before `to`. */
const slice = (text: string, starts: ReadonlyArray<number>, from: number, to: number): string =>
  text.slice(from < starts.length ? starts[from] : text.length, to < starts.length ? starts[to] : text.length)

/**
 * The diff of `path` from `before` to `after`, within the bounds above: the lines both share at
 * the start and the end are set aside first (linearly), so a small change in a large file costs
 * little, and jsdiff sees only the changed middle with its context.
 */
export const diffTexts = (path: string, before: string, after: string, context = 3): TextDiff => {
  const { a, b, prefix, suffix } = trim(before, after)
  const sizes = { beforeLines: a.length, afterLines: b.length }
  if (before === after) return { diff: "", added: 0, removed: 0, ...sizes, tooLarge: false }
  const skipStart = Math.max(0, prefix - context)
  const skipEnd = Math.max(0, suffix - context)
  const estimate = { removed: a.length - prefix - suffix, added: b.length - prefix - suffix }
  // at least this many lines are added or removed: past the bound, jsdiff need not even start
  const surely = Math.abs(estimate.added - estimate.removed) > DIFF_MAX_EDIT_LENGTH
  const patch = surely ? undefined : structuredPatch(
    path,
    path,
    slice(before, a, skipStart, a.length - skipEnd),
    slice(after, b, skipStart, b.length - skipEnd),
    undefined,
    undefined,
    { context, maxEditLength: DIFF_MAX_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS }
  )
  if (patch === undefined) return { diff: "", ...estimate, ...sizes, tooLarge: true }
  let added = 0
  let removed = 0
  for (const hunk of patch.hunks) {
    hunk.oldStart += skipStart
    hunk.newStart += skipStart
    for (const line of hunk.lines) {
      if (line.startsWith("+")) added++
      else if (line.startsWith("-")) removed++
    }
  }
  const diff = formatPatch(patch, { includeIndex: false, includeUnderline: false, includeFileHeaders: true })
  return { diff, added, removed, ...sizes, tooLarge: false }
}

const lines = (n: number): string => `${n} line${n === 1 ? "" : "s"}`

/** What is said of a diff too large to show: `rewrites N lines (M → K lines); diff too large to show`. */
export const tooLargeSummary = (diff: Pick<TextDiff, "added" | "removed" | "beforeLines" | "afterLines">): string =>
  `rewrites ${lines(Math.max(diff.added, diff.removed))} (${diff.beforeLines} → ${lines(diff.afterLines)}); ` +
  "diff too large to show"

/** The unified diff, or "" when the texts are the same (or the diff too large: see `diffTexts`). */
export const unifiedDiff = (path: string, before: string, after: string, context = 3): string =>
  diffTexts(path, before, after, context).diff
