/**
 * A command file's front matter, read as YAML: `description` and `argument-hint`. Other keys
 * (Claude Code's `allowed-tools`, `model`, …) are ignored, so that its files are read as they
 * are. Loaded the first time a command file has front matter (UserCommands.ts).
 */
import { LineCounter, parseDocument } from "yaml"

import { isRecord } from "../lib/Guards"
import { yamlProblem } from "../lib/YamlErrors"

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

/** The fields mm reads and the body after the front matter, or one line saying what is wrong. */
export const parseCommandFile = (text: string): Parsed => {
  const match = FRONT_MATTER.exec(text)
  if (match === null) return { problem: "its front matter has no closing --- line" }
  const counter = new LineCounter()
  const doc = parseDocument(match[1] ?? "", { lineCounter: counter, prettyErrors: false })
  const error = doc.errors[0]
  if (error !== undefined) {
    const pos = counter.linePos(error.pos[0])
    // the front matter starts on the file's second line
    return {
      problem: `front matter is not valid YAML (line ${pos.line + 1}, column ${pos.col}): ${yamlProblem(error)}`
    }
  }
  const value: unknown = doc.toJS() ?? {}
  if (!isRecord(value)) return { problem: "front matter must be a YAML mapping" }
  const description = oneLine(value.description)
  const hint = oneLine(value["argument-hint"])
  if (description === undefined) return { problem: "\"description\" in the front matter must be text" }
  if (hint === undefined) return { problem: "\"argument-hint\" in the front matter must be text" }
  return { description, hint, body: text.slice(match[0].length) }
}
