/**
 * Reading an agent.yaml: YAML first, then the schema, each failure one line naming the file,
 * the key and where it is. Loaded only when a configuration has to be decoded (Config.ts).
 */
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"
import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, type Node as YamlNode, parseDocument } from "yaml"

import { ConfigError } from "../domain/Errors"
import { yamlProblem } from "../lib/YamlErrors"
import { type AgentConfig, AgentConfigSchema, PROVIDER_URLS } from "./ConfigSchema"

const nodeAt = (doc: Document, keys: ReadonlyArray<PropertyKey>): { node?: YamlNode; key?: YamlNode } => {
  let current: unknown = doc.contents
  let keyNode: YamlNode | undefined
  for (const [index, key] of keys.entries()) {
    const last = index === keys.length - 1
    if (isSeq(current) && typeof key === "number") {
      current = current.items[key]
      if (last) return { node: (current ?? undefined) as YamlNode | undefined, key: keyNode }
      continue
    }
    if (!isMap(current)) break
    const pair = current.items.find((p) => isPair(p) && isScalar(p.key) && p.key.value === key)
    if (pair === undefined) break
    keyNode = pair.key as YamlNode
    current = pair.value
    if (last) return { node: (current ?? undefined) as YamlNode | undefined, key: keyNode }
  }
  return { key: keyNode }
}

const where = (doc: Document, counter: LineCounter, keys: ReadonlyArray<PropertyKey>, atKey: boolean): string => {
  const { node, key } = nodeAt(doc, keys)
  const range = atKey ? key?.range : (node?.range ?? key?.range)
  if (range === undefined || range === null) return ""
  const pos = counter.linePos(range[0])
  return ` (line ${pos.line}, column ${pos.col})`
}

/** Schema's names for what was expected, in words a person reading agent.yaml uses. */
const expectedWords = (expected: string): string => {
  if (expected.startsWith("Struct") || expected.startsWith("{")) return "a mapping of keys"
  if (expected.startsWith("ReadonlyArray<")) return "a list of strings"
  if (expected === "NonEmptyTrimmedString" || expected === "string") return "a string"
  if (expected === "Int") return "a whole number"
  if (expected === "number" || expected === "boolean") return `a ${expected}`
  return expected
}

const issueText = (issue: ParseResult.ArrayFormatterIssue): string => {
  if (issue._tag === "Unexpected") return "unknown key"
  if (issue._tag === "Missing") return "missing value"
  const plain = /^Expected (.*), actual (.*)$/s.exec(issue.message)
  if (plain !== null) return `expected ${expectedWords(plain[1])}, got ${plain[2]}`.replace(/\s+/g, " ")
  return issue.message.replace(/\s+/g, " ")
}

const keyPathOf = (keys: ReadonlyArray<PropertyKey>): string =>
  keys.length === 0
    ? "(top level)"
    : keys.reduce<string>(
      (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
      ""
    )

/**
 * With `model.api: anthropic` or `responses` and no `model.url` written, the provider's own
 * address rather than the local server's default.
 */
const withProviderUrl = (config: AgentConfig, value: unknown): AgentConfig => {
  const model = typeof value === "object" && value !== null ? (value as { model?: unknown }).model : undefined
  const written = typeof model === "object" && model !== null && typeof (model as { url?: unknown }).url === "string"
  return written || config.model.api === "chat"
    ? config
    : { ...config, model: { ...config.model, url: PROVIDER_URLS[config.model.api] } }
}

/** A value of agent.yaml's shape decoded; a failure names `file`, the key and, with the document, where it is. */
const decodeWith = (
  value: unknown,
  file: string,
  doc?: { readonly doc: Document; readonly counter: LineCounter }
): Either.Either<AgentConfig, ConfigError> =>
  Schema.decodeUnknownEither(AgentConfigSchema, { onExcessProperty: "error", errors: "first" })(value).pipe(
    Either.map((config) => withProviderUrl(config, value)),
    Either.mapLeft((error) => {
      const issue = ParseResult.ArrayFormatter.formatErrorSync(error)[0]
      const keys = issue?.path ?? []
      const at = doc === undefined ? "" : where(doc.doc, doc.counter, keys, issue?._tag === "Unexpected")
      return new ConfigError({
        message: `${file}: ${keyPathOf(keys)}${at}: ${issue === undefined ? "invalid" : issueText(issue)}`
      })
    })
  )

/** One file read: its values as written (a mapping) and what they decode to. */
export interface ReadConfig {
  readonly values: Record<string, unknown>
  readonly config: AgentConfig
}

/** Reads the text of an agent.yaml; every failure is one line naming the file and the key. */
export const readConfig = (text: string, file: string): Either.Either<ReadConfig, ConfigError> => {
  const counter = new LineCounter()
  const doc = parseDocument(text, { lineCounter: counter, prettyErrors: false, uniqueKeys: true })
  const yamlError = doc.errors[0]
  if (yamlError !== undefined) {
    const pos = counter.linePos(yamlError.pos[0])
    const detail = yamlProblem(yamlError)
    return Either.left(
      new ConfigError({ message: `${file}:${pos.line}:${pos.col}: YAML syntax error: ${detail}` })
    )
  }
  const value: unknown = doc.toJS() ?? {}
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left(new ConfigError({ message: `${file}: expected a mapping of keys at the top level` }))
  }
  const values = value as Record<string, unknown>
  return Either.map(decodeWith(values, file, { doc, counter }), (config) => ({ values, config }))
}

/** Decodes the text of an agent.yaml; every failure is one line naming the file and the key. */
export const parseConfig = (text: string, file: string): Either.Either<AgentConfig, ConfigError> =>
  Either.map(readConfig(text, file), (read) => read.config)

/** Decodes values of agent.yaml's shape that no one file holds (the files merged); `what` names them in a failure. */
export const decodeValues = (values: unknown, what: string): Either.Either<AgentConfig, ConfigError> =>
  decodeWith(values, what)

export { defaultConfig } from "./ConfigSchema"
