import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { firstLineOf } from "../lib/OneLine"

// The arguments of a call: JSON-parsed, then checked against the tool's schema, every problem
// said in one line the model can act on. Small models leave optional parameters out as `null`
// or `""`: the schemas below accept both as "not given".

/** The arguments' JSON text as an object; Left says in one line why it is not one. */
export const parseArguments = (raw: string): Either.Either<Record<string, unknown>, string> => {
  let value: unknown
  try {
    value = raw.trim() === "" ? {} : JSON.parse(raw)
  } catch (cause) {
    return Either.left(`arguments are not valid JSON (${firstLineOf(cause)})`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return Either.left("arguments must be a JSON object")
  }
  return Either.right(value as Record<string, unknown>)
}

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

/** A decoder of arguments against `schema`: every problem in one line, unknown parameters ignored. */
export const decodeArguments = <A, I>(schema: Schema.Schema<A, I>) => {
  const decode = Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "ignore" })
  return (value: unknown): Either.Either<A, string> =>
    Either.mapLeft(
      decode(value),
      (error) => ParseResult.ArrayFormatter.formatErrorSync(error).map(issueLine).join("; ")
    )
}

// The kinds of parameter the built-in tools take, each with the description the model reads
// (put on the schema before its check, where the JSON Schema keeps it).

/** Text that may not be blank: `what` names it in the error ("a path"). */
export const NonBlankText = (what: string, description: string) =>
  Schema.String.annotations({ description }).pipe(
    Schema.filter((s) => s.trim() !== "" || `expected ${what}, got an empty string`)
  )

/** A number of seconds above 0. */
export const Seconds = (description: string) =>
  Schema.Number.annotations({ description }).pipe(
    Schema.filter((n) => (Number.isFinite(n) && n > 0) || `expected a number of seconds above 0, got ${n}`)
  )

/** A whole number of 1 or more (the model is told an integer with a minimum of 1). */
export const Count = (description: string) =>
  Schema.Number.pipe(
    Schema.filter((n) => (Number.isInteger(n) && n >= 1) || `expected a whole number of 1 or more, got ${n}`, {
      jsonSchema: { type: "integer", minimum: 1, description }
    })
  )

/** A parameter that may be left out, or given as `null`. */
export const optional = <A, I, R>(schema: Schema.Schema<A, I, R>) => Schema.optionalWith(schema, { nullable: true })

/** The optional parameters given as "" dropped (a small model's way of leaving one out). */
export const withoutEmptyText = <A extends object>(args: A): A =>
  Object.fromEntries(Object.entries(args).filter(([, value]) => value !== "")) as A
