// The libraries of grep and glob: `ignore` (git's ignore rules) and `picomatch` (glob
// patterns). Bundled into the search worker (dist/mm-search-worker.cjs), where the searches
// run; built apart as dist/mm-search.cjs for mm's own thread, which imports it only to match
// the configuration's `secrets:` globs, so that it costs nothing at start-up (scripts/build.mjs).
import ignore from "ignore"
import picomatch from "picomatch"

export { ignore, picomatch }
