// `npm run docs`: writes what docs/ shows of mm's own code (the tools table of
// docs/reference/tools.md) from that code.
import { readFileSync, writeFileSync } from "node:fs"

import { allTools } from "../src/tools/Registry"
import { TABLE_END, TABLE_START, toolsTable, withToolsTable } from "./tools-table"

const page = "docs/reference/tools.md"
const written = withToolsTable(readFileSync(page, "utf8"), toolsTable(allTools))
if (written === undefined) throw new Error(`${page} lacks the lines ${TABLE_START} and ${TABLE_END}`)
writeFileSync(page, written)
process.stdout.write(`${page}: the tools table is up to date\n`)
