import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

/**
 * A small JSON Schema (2020-12) validator for the subset the ACP schema uses: $ref into
 * $defs, type, properties, required, additionalProperties, items, enum, const, allOf,
 * anyOf, oneOf, not, minimum, maximum, minLength and the integer formats.
 */
type Schema = boolean | { readonly [key: string]: unknown }

const require = createRequire(import.meta.url)
const sdkRoot = path.dirname(path.dirname(path.dirname(path.dirname(require.resolve("@agentclientprotocol/sdk")))))
export const schemaPath = path.join(sdkRoot, "schema", "v1", "schema.json")
const root = JSON.parse(readFileSync(schemaPath, "utf8")) as { $defs: Record<string, Schema> }
/** The methods not in the stable schema yet (`session/fork`) are checked against the unstable one. */
const unstableRoot = JSON.parse(readFileSync(path.join(sdkRoot, "schema", "v1", "schema.unstable.json"), "utf8")) as {
  $defs: Record<string, Schema>
}
let defs = root.$defs

const typeOf = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "number" && Number.isInteger(value)
    ? "integer"
    : typeof value

const hasType = (value: unknown, type: string): boolean => {
  const actual = typeOf(value)
  return actual === type || (type === "number" && actual === "integer")
}

const deepEqual = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

const resolve = (ref: string): Schema => {
  const prefix = "#/$defs/"
  if (!ref.startsWith(prefix)) throw new Error(`unsupported $ref ${ref}`)
  const found = defs[ref.slice(prefix.length)]
  if (found === undefined) throw new Error(`unknown $ref ${ref}`)
  return found
}

const check = (schema: Schema, value: unknown, at: string, errors: Array<string>): void => {
  if (schema === true) return
  if (schema === false) {
    errors.push(`${at}: no value allowed`)
    return
  }
  const s = schema as Record<string, any>
  if (typeof s.$ref === "string") check(resolve(s.$ref), value, at, errors)
  if (s.type !== undefined) {
    const types: Array<string> = Array.isArray(s.type) ? s.type : [s.type]
    if (!types.some((t) => hasType(value, t))) {
      errors.push(`${at}: expected ${types.join(" or ")}, got ${typeOf(value)}`)
      return
    }
  }
  if ("const" in s && !deepEqual(s.const, value)) {
    errors.push(`${at}: expected ${JSON.stringify(s.const)}, got ${JSON.stringify(value)}`)
  }
  if (Array.isArray(s.enum) && !s.enum.some((e: unknown) => deepEqual(e, value))) {
    errors.push(`${at}: ${JSON.stringify(value)} is not one of ${JSON.stringify(s.enum)}`)
  }
  if (typeof value === "number") {
    if (typeof s.minimum === "number" && value < s.minimum) errors.push(`${at}: ${value} < ${s.minimum}`)
    if (typeof s.maximum === "number" && value > s.maximum) errors.push(`${at}: ${value} > ${s.maximum}`)
    if (typeof s.format === "string" && /^u?int\d+$/.test(s.format)) {
      if (!Number.isInteger(value)) errors.push(`${at}: ${value} is not an integer (${s.format})`)
      else if (s.format.startsWith("u") && value < 0) errors.push(`${at}: ${value} is negative (${s.format})`)
    }
  }
  if (typeof value === "string" && typeof s.minLength === "number" && value.length < s.minLength) {
    errors.push(`${at}: shorter than ${s.minLength}`)
  }
  if (typeOf(value) === "object") {
    const object = value as Record<string, unknown>
    for (const key of (s.required as Array<string> | undefined) ?? []) {
      if (!(key in object)) errors.push(`${at}: missing ${key}`)
    }
    const properties = (s.properties as Record<string, Schema> | undefined) ?? {}
    for (const [key, item] of Object.entries(object)) {
      if (key in properties) check(properties[key], item, `${at}.${key}`, errors)
      else if (s.additionalProperties !== undefined) {
        check(s.additionalProperties as Schema, item, `${at}.${key}`, errors)
      }
    }
  }
  if (Array.isArray(value) && s.items !== undefined) {
    value.forEach((item, i) => check(s.items as Schema, item, `${at}[${i}]`, errors))
  }
  for (const sub of (s.allOf as Array<Schema> | undefined) ?? []) check(sub, value, at, errors)
  if (Array.isArray(s.anyOf)) {
    const attempts = s.anyOf.map((sub: Schema) => collect(sub, value, at))
    if (!attempts.some((e: Array<string>) => e.length === 0)) {
      errors.push(`${at}: matches none of anyOf (${attempts.map((e: Array<string>) => e[0]).join(" | ")})`)
    }
  }
  if (Array.isArray(s.oneOf)) {
    const attempts = s.oneOf.map((sub: Schema) => collect(sub, value, at))
    const matching = attempts.filter((e: Array<string>) => e.length === 0).length
    if (matching !== 1) {
      errors.push(`${at}: matches ${matching} of oneOf (${attempts.map((e: Array<string>) => e[0]).join(" | ")})`)
    }
  }
  if (s.not !== undefined && collect(s.not as Schema, value, at).length === 0) {
    errors.push(`${at}: matches a "not" schema`)
  }
}

const collect = (schema: Schema, value: unknown, at: string): Array<string> => {
  const errors: Array<string> = []
  check(schema, value, at, errors)
  return errors
}

/** The problems of `value` against the definition `name` of the ACP schema; empty when it is valid. */
export const validateAgainst = (name: string, value: unknown): Array<string> =>
  collect({ $ref: `#/$defs/${name}` }, value, name)

/** The schema definition a successful result of each method must match. */
export const responseSchemaOf: Readonly<Record<string, string>> = {
  initialize: "InitializeResponse",
  authenticate: "AuthenticateResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/list": "ListSessionsResponse",
  "session/resume": "ResumeSessionResponse",
  "session/close": "CloseSessionResponse",
  "session/prompt": "PromptResponse",
  "session/set_mode": "SetSessionModeResponse",
  "session/set_config_option": "SetSessionConfigOptionResponse"
}

/** The schema definition of each request or notification the agent may send. */
export const outgoingSchemaOf: Readonly<Record<string, string>> = {
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
  "fs/read_text_file": "ReadTextFileRequest",
  "fs/write_text_file": "WriteTextFileRequest",
  "terminal/create": "CreateTerminalRequest",
  "terminal/output": "TerminalOutputRequest",
  "terminal/wait_for_exit": "WaitForTerminalExitRequest",
  "terminal/kill": "KillTerminalRequest",
  "terminal/release": "ReleaseTerminalRequest",
  "$/cancel_request": "CancelRequestNotification"
}

/**
 * Checks one message the agent wrote. `methodOf` names the method of the client request a
 * response answers. Returns the problems found, empty when the message is valid.
 */
export const validateAgentMessage = (message: any, methodOf: (id: unknown) => string | undefined): Array<string> => {
  if (typeof message !== "object" || message === null || message.jsonrpc !== "2.0") {
    return ["not a JSON-RPC 2.0 message"]
  }
  if ("method" in message) {
    const name = outgoingSchemaOf[message.method]
    if (name === undefined) return [`unexpected method ${message.method}`]
    const isNotification = message.method === "session/update" || message.method.startsWith("$/")
    if ("id" in message && isNotification) return [`${message.method} sent as a request`]
    if (!("id" in message) && !isNotification) return [`${message.method} sent as a notification`]
    return validateAgainst(name, message.params)
  }
  if (!("id" in message)) return ["neither a request, a notification nor a response"]
  if ("error" in message) return validateAgainst("Error", message.error)
  const method = methodOf(message.id)
  if (method === undefined) return [`response to an unknown request ${JSON.stringify(message.id)}`]
  if (method === "session/fork") {
    defs = unstableRoot.$defs
    try {
      return validateAgainst("ForkSessionResponse", message.result)
    } finally {
      defs = root.$defs
    }
  }
  const name = responseSchemaOf[method]
  return name === undefined ? [`no response schema for ${method}`] : validateAgainst(name, message.result)
}
