import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { isRecord } from "../lib/Guards"

const StringMap = Schema.Record({ key: Schema.String, value: Schema.String })

const Approval = Schema.String.pipe(
  Schema.filter((s): s is "ask" | "allow" => s === "ask" || s === "allow", {
    message: (issue) => `expected "ask" or "allow", got ${JSON.stringify(issue.actual)}`,
    jsonSchema: { enum: ["ask", "allow"] }
  })
)

const common = {
  enabled: Schema.optionalWith(Schema.Boolean, { default: () => true }).annotations({
    description: "false keeps the entry without starting the server"
  }),
  approval: Schema.optionalWith(Approval, { default: () => "ask" as const }).annotations({
    description: "ask: each call of its tools waits for approval (as bash does); allow: never ask"
  })
}

/** A local server, started as a child process that speaks MCP on its stdin and stdout. */
const McpStdioServer = Schema.Struct({
  command: Schema.NonEmptyTrimmedString.annotations({ description: "program to start (looked up in PATH)" }),
  args: Schema.optionalWith(Schema.Array(Schema.String), { default: () => [] }).annotations({
    description: "its arguments"
  }),
  env: Schema.optionalWith(StringMap, { default: () => ({}) }).annotations({
    description: "variables added to its environment; ${NAME} is read from mm's environment and kept secret"
  }),
  cwd: Schema.optional(Schema.NonEmptyTrimmedString).annotations({
    description: "directory it runs in, relative to the project (default: the project)"
  }),
  ...common
})

/** A remote server, reached over streamable HTTP (the SDK falls back to SSE for old servers). */
const McpHttpServer = Schema.Struct({
  url: Schema.String.pipe(
    Schema.filter(
      (url) => /^https?:\/\/[^\s/]+/.test(url) || `expected an http:// or https:// URL, got ${JSON.stringify(url)}`,
      {
        jsonSchema: { pattern: "^https?://[^\\s/]+" }
      }
    )
  ).annotations({ description: "the server's MCP endpoint" }),
  headers: Schema.optionalWith(StringMap, { default: () => ({}) }).annotations({
    description: "HTTP headers sent with every request; ${NAME} is read from mm's environment and kept secret"
  }),
  ...common
})

const stringMapJson = { type: "object", additionalProperties: { type: "string" } }
const commonJson = {
  enabled: { type: "boolean", default: true, description: "false keeps the entry without starting the server" },
  approval: {
    enum: ["ask", "allow"],
    default: "ask",
    description: "ask: each call of its tools waits for approval; allow: never ask"
  }
}

/** Published in agent.schema.json for one entry of `mcpServers`. */
const serverJsonSchema = {
  anyOf: [
    {
      type: "object",
      required: ["command"],
      additionalProperties: false,
      properties: {
        command: { type: "string", description: "program to start (looked up in PATH)" },
        args: { type: "array", items: { type: "string" }, description: "its arguments" },
        env: {
          ...stringMapJson,
          description: "variables added to its environment; ${NAME} is read from mm's environment and kept secret"
        },
        cwd: { type: "string", description: "directory it runs in, relative to the project (default: the project)" },
        ...commonJson
      }
    },
    {
      type: "object",
      required: ["url"],
      additionalProperties: false,
      properties: {
        url: {
          type: "string",
          pattern: "^https?://[^\\s/]+",
          description: "the server's MCP endpoint (streamable HTTP; SSE as a fallback)"
        },
        headers: {
          ...stringMapJson,
          description: "HTTP headers sent with every request; ${NAME} is read from mm's environment and kept secret"
        },
        ...commonJson
      }
    }
  ]
}

const AnyServer = Schema.Union(McpStdioServer, McpHttpServer)

/**
 * One server: an entry with `url` (and no `command`) is remote, any other a local command,
 * so that a mistake is told against the kind of server the user meant.
 */
export const McpServerConfig = Schema.transformOrFail(Schema.Unknown, Schema.typeSchema(AnyServer), {
  strict: true,
  decode: (input, options, ast) => {
    if (!isRecord(input)) {
      return ParseResult.fail(
        new ParseResult.Type(ast, input, `expected a mapping of keys, got ${JSON.stringify(input)}`)
      )
    }
    if (!("url" in input) && !("command" in input)) {
      return ParseResult.fail(
        new ParseResult.Type(ast, input, "expected command (a local server) or url (a remote one)")
      )
    }
    const remote = "url" in input && !("command" in input)
    return remote
      ? ParseResult.decodeUnknown(McpHttpServer)(input, options)
      : ParseResult.decodeUnknown(McpStdioServer)(input, options)
  },
  encode: (value) => ParseResult.succeed(value)
}).annotations({ jsonSchema: serverJsonSchema })

export type McpServerConfig = typeof McpServerConfig.Type

export const McpServersConfig = Schema.Record({ key: Schema.NonEmptyTrimmedString, value: McpServerConfig })
  .annotations({
    jsonSchema: { type: "object", additionalProperties: serverJsonSchema }
  })

export const mcpKeyDescriptions: Record<string, string> = {
  mcpServers:
    "MCP servers whose tools are given to the model, by name: {command, args?, env?, cwd?} for a local one, {url, headers?} for a remote one; each may add enabled: false and approval: ask | allow."
}
