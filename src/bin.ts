import { VERSION } from "./lib/Version"

const args = process.argv.slice(2)

if (args.length === 1 && (args[0] === "--version" || args[0] === "-v")) {
  process.stdout.write(`mm ${VERSION}\n`)
} else {
  // required lazily, so that --version loads nothing else
  const { loadCore } = require("./CoreLoader") as typeof import("./CoreLoader")
  loadCore().main(process.argv)
}
