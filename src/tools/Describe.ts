import * as path from "node:path"

import { isMcpToolName, isReadOnlyMcpTool, mcpCallTitle } from "./ToolNames"

export interface CallDescription {
  readonly title: string
  readonly kind: "execute" | "read" | "edit" | "search" | "other"
  readonly locations: ReadonlyArray<{ readonly path: string; readonly line?: number }>
}

const TITLE_MAX = 120

/** A title from text: its first line, cut to TITLE_MAX characters, ` …` after it when more lines follow. */
const firstLineTitle = (text: string): string => {
  const lines = text.trim().split("\n")
  const first = lines[0].trim()
  const short = first.length > TITLE_MAX ? `${first.slice(0, TITLE_MAX - 1)}…` : first
  return lines.length > 1 && short === first ? `${short} …` : short
}

const stringArg = (args: Record<string, unknown> | undefined, key: string): string | undefined =>
  typeof args?.[key] === "string" ? (args[key] as string) : undefined

const numberArg = (args: Record<string, unknown> | undefined, key: string): number | undefined =>
  typeof args?.[key] === "number" ? (args[key] as number) : undefined

const lineRange = (offset: number | undefined, limit: number | undefined): string =>
  offset === undefined && limit === undefined
    ? ""
    : limit === undefined
    ? ` (from line ${offset})`
    : ` (lines ${offset ?? 1}-${(offset ?? 1) + limit - 1})`

/**
 * For display: `title` says what the call works on without the tool's name (`ls -la` in
 * `⚙ bash  ls -la`; a path for the file tools), also fit as an ACP tool-call title.
 * Locations are absolute when `cwd` is given, as ACP clients expect.
 */
export const describeCall = (
  name: string,
  args: Record<string, unknown> | undefined,
  cwd?: string
): CallDescription => {
  const file = stringArg(args, "path")
  const where = (p: string) => (cwd === undefined ? p : path.resolve(cwd, p))
  const locate = (line?: number) =>
    file === undefined ? [] : [line === undefined ? { path: where(file) } : { path: where(file), line }]
  const titled = (detail: string | undefined) => (detail === undefined || detail === "" ? name : detail)
  switch (name) {
    case "bash": {
      const command = stringArg(args, "command")
      return {
        title: titled(command === undefined ? undefined : firstLineTitle(command)),
        kind: "execute",
        locations: []
      }
    }
    case "read_file": {
      const offset = numberArg(args, "offset")
      const range = lineRange(offset, numberArg(args, "limit"))
      return { title: titled(file === undefined ? undefined : file + range), kind: "read", locations: locate(offset) }
    }
    case "grep":
    case "glob": {
      const pattern = stringArg(args, "pattern")
      const filter = stringArg(args, "glob")
      const detail = pattern === undefined
        ? undefined
        : `${firstLineTitle(pattern)}${file === undefined || file === "" ? "" : ` in ${file}`}${
          filter === undefined || filter === "" ? "" : ` (${filter})`
        }`
      return { title: titled(detail), kind: "search", locations: file === undefined || file === "" ? [] : locate() }
    }
    case "write_file":
    case "edit_file":
      return { title: titled(file), kind: "edit", locations: locate() }
    default:
      if (isMcpToolName(name)) {
        return { title: titled(mcpCallTitle(args)), kind: isReadOnlyMcpTool(name) ? "read" : "other", locations: [] }
      }
      return { title: name, kind: "other", locations: [] }
  }
}
