// docs/reference/tools.md's table of the tools, made from their registry: `npm run docs`
// writes it between the page's two markers, and test/tools/Registry.test.ts fails when the
// page holds another.
import type { ToolAccess, ToolRecord } from "../src/tools/ToolRecord"

export const TABLE_START = "<!-- tools table: made by `npm run docs` from src/tools/Registry.ts -->"
export const TABLE_END = "<!-- end of the tools table -->"

/** What a tool reaches, and when `permissions: ask` asks before it runs. */
const accessWords: Record<ToolAccess, { readonly reaches: string; readonly asked: string }> = {
  read: {
    reaches: "reads the project",
    asked: "only for a `path` outside the project, or a file that [looks secret](#files-that-look-secret)"
  },
  write: { reaches: "writes the file at `path`", asked: "yes (modes `edits`, `auto`: not inside the project)" },
  command: { reaches: "runs a command line", asked: "yes (mode `auto`: not when the sandbox is on)" },
  network: {
    reaches: "reaches the network",
    asked: "yes, per domain: an always answer covers the host (mode `allow`: no)"
  },
  outside: { reaches: "acts outside mm's view", asked: "yes, unless its configuration allows it" },
  mm: {
    reaches: "works inside mm alone (what a sub-agent runs, or a job started by `bash`, is asked as any call)",
    asked: "no"
  }
}

/** A tool's parameters as `name`, optional ones with a `?`, in the order of its schema. */
const parametersOf = (tool: ToolRecord): string => {
  const properties = Object.keys((tool.parameters.properties ?? {}) as Record<string, unknown>)
  const required = new Set((tool.parameters.required ?? []) as ReadonlyArray<string>)
  return properties.map((name) => `\`${name}${required.has(name) ? "" : "?"}\``).join(", ")
}

/** The table, one row per tool. */
export const toolsTable = (tools: ReadonlyArray<ToolRecord>): string =>
  [
    "| tool | parameters (`?`: optional) | what it reaches | asked under `permissions: ask` | editor kind |",
    "| --- | --- | --- | --- | --- |",
    ...tools.map((tool) => {
      const words = accessWords[tool.access]
      return `| [\`${tool.name}\`](#${tool.name}) | ${
        parametersOf(tool)
      } | ${words.reaches} | ${words.asked} | \`${tool.kind}\` |`
    })
  ].join("\n")

/** `page` with its table (between the markers) replaced by `table`; undefined when it has no markers. */
export const withToolsTable = (page: string, table: string): string | undefined => {
  const start = page.indexOf(TABLE_START)
  const end = page.indexOf(TABLE_END)
  if (start === -1 || end < start) return undefined
  return `${page.slice(0, start + TABLE_START.length)}\n\n${table}\n\n${page.slice(end)}`
}
