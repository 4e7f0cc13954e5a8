// Glob patterns, matched by picomatch (loaded at first use, not at start-up). A pattern
// without a `/` is matched against file names at any depth; one with a `/` against the whole
// path relative to the folder searched. Dot files match like any other. A model's patterns
// (glob's, grep's `glob`) are matched in the search worker only (GrepSearch.ts,
// GlobSearch.ts): one can backtrack for ever on a long name.
import { loadSearchLibs } from "./ProjectWalk"

/** A test of paths (relative, `/` between names) against `pattern`. */
export const globMatcher = async (pattern: string): Promise<(relative: string) => boolean> => {
  const { picomatch } = await loadSearchLibs()
  const trimmed = pattern.trim().replace(/^\.\//, "")
  return picomatch(trimmed, { dot: true, basename: !trimmed.includes("/") })
}
