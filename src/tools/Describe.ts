// What the tools' records share to describe a call for display: its title says what it works on
// (`ls -la` in `⚙ bash  ls -la`; a path for the file tools), also fit as an ACP tool-call title.
import * as path from "node:path"

import type { CallLocation } from "./ToolRecord"

const TITLE_MAX = 120

/** A title from text: its first line, cut to TITLE_MAX characters, ` …` after it when more lines follow. */
export const firstLineTitle = (text: string): string => {
  const lines = text.trim().split("\n")
  const first = lines[0].trim()
  const short = first.length > TITLE_MAX ? `${first.slice(0, TITLE_MAX - 1)}…` : first
  return lines.length > 1 && short === first ? `${short} …` : short
}

export const stringArg = (args: Record<string, unknown> | undefined, key: string): string | undefined =>
  typeof args?.[key] === "string" ? (args[key] as string) : undefined

export const numberArg = (args: Record<string, unknown> | undefined, key: string): number | undefined =>
  typeof args?.[key] === "number" ? (args[key] as number) : undefined

/**
 * Where a call's `path` argument is: absolute when `cwd` is given, as ACP clients expect;
 * none when it has no path (or an empty one).
 */
export const pathLocation = (
  args: Record<string, unknown> | undefined,
  cwd: string | undefined,
  line?: number
): ReadonlyArray<CallLocation> => {
  const file = stringArg(args, "path")
  if (file === undefined || file === "") return []
  const where = cwd === undefined ? file : path.resolve(cwd, file)
  return [line === undefined ? { path: where } : { path: where, line }]
}

/** A search's title and place: `PATTERN in PATH (FILTER)`, at its `path` when one is given. */
export const searchDescription = (
  args: Record<string, unknown> | undefined,
  cwd: string | undefined,
  filter?: string
) => {
  const pattern = stringArg(args, "pattern")
  const file = stringArg(args, "path")
  const title = pattern === undefined
    ? ""
    : `${firstLineTitle(pattern)}${file === undefined || file === "" ? "" : ` in ${file}`}${
      filter === undefined || filter === "" ? "" : ` (${filter})`
    }`
  return { title, locations: pathLocation(args, cwd) }
}
