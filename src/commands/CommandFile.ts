/**
 * A command file's front matter: `description` and `argument-hint`. Other keys
 * (Claude Code's `allowed-tools`, `model`, …) are ignored, so that its files are read as they
 * are. Loaded the first time a command file has front matter (UserCommands.ts).
 */
import { parseDocument } from "yaml"

import { isRecord } from "../lib/Guards"

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/

type Parsed =
  | { readonly description: string; readonly hint: string; readonly body: string }
  | { readonly problem: string }

const oneLine = (value: unknown): string | undefined =>
  value === undefined || value === null
    ? ""
    : typeof value === "string" || typeof value === "number"
    ? String(value).replace(/\s+/g, " ").trim()
    : undefined

/**
 * A key's value as its line writes it, for what YAML does not read as text: Claude Code's own
 * examples write `argument-hint: [message]` (a YAML list) or `[pr] [priority]` (no YAML at all).
 * Surrounding quotes are dropped; undefined when no line of the front matter names the key.
 */
const asWritten = (frontMatter: string, key: string): string | undefined => {
  const line = new RegExp(`^${key}:[ \\t]*(.*)$`, "m").exec(frontMatter)?.[1]?.trim()
  if (line === undefined) return undefined
  const quoted = /^(["'])(.*)\1$/.exec(line)
  return (quoted?.[2] ?? line).replace(/\s+/g, " ").trim()
}

/**
 * The fields mm reads and the body after the front matter, or one line saying what is wrong.
 * The front matter is read as YAML; a field YAML does not give as text (or front matter YAML
 * cannot read at all) is taken as its line writes it, so that Claude Code's files read as
 * they do there.
 */
export const parseCommandFile = (text: string): Parsed => {
  const match = FRONT_MATTER.exec(text)
  if (match === null) return { problem: "its front matter has no closing --- line" }
  const frontMatter = match[1] ?? ""
  const doc = parseDocument(frontMatter, { prettyErrors: false })
  const value: unknown = doc.errors.length === 0 ? doc.toJS() ?? {} : {}
  const fields = isRecord(value) ? value : {}
  // a value YAML gives as text; else, as its line writes it
  const field = (key: string): string => {
    const read = oneLine(fields[key])
    return read === undefined || read === "" ? asWritten(frontMatter, key) ?? "" : read
  }
  return { description: field("description"), hint: field("argument-hint"), body: text.slice(match[0].length) }
}
