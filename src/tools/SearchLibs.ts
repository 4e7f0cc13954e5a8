// The libraries of grep and glob: `ignore` (git's ignore rules) and `picomatch` (glob
// patterns). Built apart as dist/mm-search.cjs and imported on the first search only, so
// that they cost nothing at start-up (scripts/build.mjs).
import ignore from "ignore"
import picomatch from "picomatch"

export { ignore, picomatch }
