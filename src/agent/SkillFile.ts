/**
 * What a SKILL.md says of itself: its front matter, read as YAML. Loaded the first time a skill
 * file is read (Skills.ts), so that a project without skills never loads the YAML parser.
 */
import * as Either from "effect/Either"
import { LineCounter, parseDocument } from "yaml"

import { yamlProblem } from "../lib/YamlErrors"

const FRONT_MATTER = /^\uFEFF?---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/

const requiredString = (value: Record<string, unknown>, key: string): Either.Either<string, string> => {
  const field = value[key]
  if (field === undefined || field === null) return Either.left(`front matter has no "${key}"`)
  if (typeof field !== "string") return Either.left(`"${key}" in the front matter must be a string`)
  const text = field.replace(/\s+/g, " ").trim()
  return text === "" ? Either.left(`"${key}" in the front matter is empty`) : Either.right(text)
}

/** The `name` and `description` of a SKILL.md, or one line saying what is wrong with it. */
export const parseSkillFile = (text: string): Either.Either<{ name: string; description: string }, string> => {
  const match = FRONT_MATTER.exec(text)
  if (match === null) {
    return Either.left("no front matter (the file must start with a --- line, and a second --- line must close it)")
  }
  const counter = new LineCounter()
  const doc = parseDocument(match[1] ?? "", { lineCounter: counter, prettyErrors: false })
  const error = doc.errors[0]
  if (error !== undefined) {
    const pos = counter.linePos(error.pos[0])
    const detail = yamlProblem(error)
    return Either.left(`front matter is not valid YAML (line ${pos.line + 1}, column ${pos.col}): ${detail}`)
  }
  const value: unknown = doc.toJS()
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left("front matter must be a YAML mapping with name and description")
  }
  return Either.all({
    name: requiredString(value as Record<string, unknown>, "name"),
    description: requiredString(value as Record<string, unknown>, "description")
  })
}
