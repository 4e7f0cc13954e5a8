// Unified diffs of a file's text, on the `diff` package (jsdiff). Shared by the approval
// preview (issue 10), /changes and /undo (16) and the ACP façade (14).
import { createTwoFilesPatch, diffLines } from "diff"

/**
 * The unified diff of `path` from `before` to `after`: `--- path` / `+++ path` headers, then
 * hunks with line numbers (`@@ -12,7 +12,8 @@`) and `context` unchanged lines around each
 * change. The empty string when the two texts are the same.
 */
export const unifiedDiff = (path: string, before: string, after: string, context = 3): string => {
  if (before === after) return ""
  return createTwoFilesPatch(path, path, before, after, undefined, undefined, {
    context,
    headerOptions: { includeIndex: false, includeUnderline: false, includeFileHeaders: true }
  })
}

/** How many lines `after` adds to `before` and how many it removes. */
export const lineCounts = (before: string, after: string): { added: number; removed: number } => {
  let added = 0
  let removed = 0
  if (before === after) return { added, removed }
  for (const part of diffLines(before, after)) {
    if (part.added) added += part.count
    else if (part.removed) removed += part.count
  }
  return { added, removed }
}
