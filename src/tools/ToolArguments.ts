import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { firstLineOf } from "../lib/OneLine"
import { isToolName, toolNames } from "./Tool"

// The arguments of a built-in tool's call: JSON-parsed and validated, every problem said in
// one line the model can act on.

/** The schemas of each tool's arguments, made at the first call decoded (see `paramsSchemas`). */
const makeParamsSchemas = () => {
  const NonEmptyString = (what: string) =>
    Schema.String.pipe(Schema.filter((s) => s.trim() !== "" || `expected ${what}, got an empty string`))
  const PositiveSeconds = Schema.Number.pipe(
    Schema.filter((n) => (Number.isFinite(n) && n > 0) || `expected a number of seconds above 0, got ${n}`)
  )
  const LineCount = Schema.Number.pipe(
    Schema.filter((n) => (Number.isInteger(n) && n >= 1) || `expected a whole number of 1 or more, got ${n}`)
  )
  // optional parameters accept an explicit `null` as "not given": small models often send one;
  // the search tools' optional text parameters also take "" so (Tools.ts drops them)
  const OptionalText = Schema.optionalWith(Schema.String, { nullable: true })
  return {
    bash: Schema.Struct({
      command: NonEmptyString("a command"),
      timeout: Schema.optionalWith(PositiveSeconds, { nullable: true })
    }),
    read_file: Schema.Struct({
      path: NonEmptyString("a path"),
      offset: Schema.optionalWith(LineCount, { nullable: true }),
      limit: Schema.optionalWith(LineCount, { nullable: true })
    }),
    write_file: Schema.Struct({ path: NonEmptyString("a path"), content: Schema.String }),
    edit_file: Schema.Struct({ path: NonEmptyString("a path"), old: Schema.String, new: Schema.String }),
    grep: Schema.Struct({
      pattern: Schema.String.pipe(
        Schema.filter((s) => s !== "" || "expected a regular expression, got an empty string")
      ),
      path: OptionalText,
      glob: OptionalText,
      ignore_case: Schema.optionalWith(Schema.Boolean, { nullable: true })
    }),
    glob: Schema.Struct({ pattern: NonEmptyString("a glob pattern"), path: OptionalText })
  } as const
}

type ParamsSchemas = ReturnType<typeof makeParamsSchemas>

/** The arguments of each tool, as decoded. */
export type ToolArgs = { readonly [Name in keyof ParamsSchemas]: ParamsSchemas[Name]["Type"] }

let made: ParamsSchemas | undefined

/**
 * Made at the first call decoded rather than as the module loads: the terminal's recap of a
 * resumed session imports this module, and a session without tool calls never needs them.
 */
const paramsSchemas = (): ParamsSchemas => (made ??= makeParamsSchemas())

const issueLine = (issue: ParseResult.ArrayFormatterIssue): string => {
  const key = issue.path.length === 0 ? undefined : issue.path.map(String).join(".")
  if (key === undefined) return "arguments must be a JSON object"
  if (issue._tag === "Missing") return `missing required parameter "${key}"`
  const text = issue.message
    .replace(/^Expected /, "expected ")
    .replace(/, actual /, ", got ")
    .replace(/\s+/g, " ")
  return `parameter "${key}": ${text}`
}

const decodeParams = <A, I>(schema: Schema.Schema<A, I>, value: unknown): Either.Either<A, string> =>
  Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })(value).pipe(
    Either.mapLeft((error) => ParseResult.ArrayFormatter.formatErrorSync(error).map(issueLine).join("; "))
  )

const unknownTool = (name: string): string => `unknown tool "${name}"; the tools are ${toolNames.join(", ")}`

/** JSON-parses and validates the arguments of one call; Left is a one-line reason. */
export const parseToolArguments = (name: string, raw: string): Either.Either<Record<string, unknown>, string> => {
  if (!isToolName(name)) return Either.left(unknownTool(name))
  let value: unknown
  try {
    value = raw.trim() === "" ? {} : JSON.parse(raw)
  } catch (cause) {
    return Either.left(`arguments are not valid JSON (${firstLineOf(cause)})`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left("arguments must be a JSON object")
  }
  return decodeParams(paramsSchemas()[name] as unknown as Schema.Schema<Record<string, unknown>, unknown>, value)
}
