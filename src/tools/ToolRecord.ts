/**
 * What a tool is: one record holding everything mm needs to know of it — what the model is
 * told, how a call's arguments are checked, what the call reaches (which decides when it is
 * asked), how it is shown (a title, an ACP kind, an approval preview) and how it runs. A
 * built-in tool is one module exporting one record made by `defineTool` (Bash.ts, ReadFile.ts…),
 * listed once in Registry.ts; an MCP server's tools are adapted into the same record
 * (mcp/McpTurnTools.ts). Nothing else in mm keeps a list of tool names.
 */
import type * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as JSONSchema from "effect/JSONSchema"
import * as Schema from "effect/Schema"

import type { FileAccess } from "./FileAccess"
import { noPreview, type Preview } from "./Preview"
import type { ToolContext, ToolResult } from "./Tool"
import { decodeArguments, parseArguments } from "./ToolArguments"

/**
 * What a tool's calls reach, which decides when they wait for the user (approvals/):
 * - `read`: reads inside the project; asked only for a `path` argument that leads outside it;
 * - `write`: writes the file its `path` argument names; inside the project, modes `edits` and
 *   `auto` let it through, and an "always" covers that file or the whole project (a protected
 *   path, .git/, .mm/ or agent.yaml, counts as outside: ProtectedPaths.ts);
 * - `command`: runs the command line of its `command` argument (confined by the sandbox when it
 *   is on, which lets mode `auto` run it unasked); an "always" covers a command prefix;
 * - `network`: reaches the network;
 * - `outside`: does what mm cannot see (an MCP server's tool); an "always" covers the tool;
 * - `mm`: works inside mm alone — keeps the plan (`todo`), runs a sub-agent whose own calls are
 *   asked (`task`); never asked itself, and it runs in plan mode.
 */
export type ToolAccess = "read" | "write" | "command" | "network" | "outside" | "mm"

/** How an editor groups a call (ACP's `ToolKind`). */
export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "other"

/** Where a call works, as an editor is told (absolute paths when the project directory is known). */
export interface CallLocation {
  readonly path: string
  readonly line?: number
}

/** How a call is shown: `title` says what it works on, without the tool's name (`ls -la`, a path). */
export interface CallDescription {
  readonly title: string
  readonly kind: ToolKind
  readonly locations: ReadonlyArray<CallLocation>
}

/** A call whose arguments were checked: what it was given, and how to run it. */
export interface PreparedCall {
  /** The arguments as decoded (what approvals, previews and titles read). */
  readonly input: Record<string, unknown>
  /** Runs the call; never fails: a problem is a failed result the model reads. */
  readonly run: (ctx: ToolContext) => Effect.Effect<ToolResult, never, FileAccess>
}

/** The text a stored file call changed, as far as its arguments tell (an editor shows it as a diff on reload). */
export interface ArgumentChange {
  /** The text replaced; absent for a new file. */
  readonly before?: string
  readonly after: string
}

export interface ToolRecord {
  readonly name: string
  /** What the model is told the tool does. */
  readonly description: string
  /** The JSON Schema of its arguments, as the model sees it. */
  readonly parameters: Record<string, unknown>
  readonly access: ToolAccess
  readonly kind: ToolKind
  /** How the default system prompt names what it is for: "run shell commands with `bash`". */
  readonly purpose?: string
  /** A call's arguments (JSON text) checked against the tool's schema; Left is a one-line reason. */
  readonly prepare: (raw: string) => Either.Either<PreparedCall, string>
  /** What the call works on (title) and where; `args` may be partial (a stored call, a bad one). */
  readonly describe: (
    args: Record<string, unknown> | undefined,
    cwd?: string
  ) => { readonly title: string; readonly locations: ReadonlyArray<CallLocation> }
  /** What the call will do, shown when it is asked and, for a file tool, as its diff once it ran. */
  readonly preview: (
    input: Record<string, unknown> | undefined,
    cwd: string
  ) => Effect.Effect<Preview, never, FileAccess>
  /** A stored call's change of a file, read from its arguments and result (write: its content, edit: old and new). */
  readonly changeFromArguments?: (
    args: Record<string, unknown>,
    output: string
  ) => ArgumentChange | undefined
  /** Set when its configuration lets every call through unasked (an MCP server with `approval: allow`). */
  readonly preapproved?: boolean
}

/** The description of any call of `record`: its title (the tool's name when there is nothing to say), kind and locations. */
export const describeCall = (
  record: ToolRecord,
  args: Record<string, unknown> | undefined,
  cwd?: string
): CallDescription => {
  const { locations, title } = record.describe(args, cwd)
  return { title: title === "" ? record.name : title, kind: record.kind, locations }
}

/** The JSON Schema the model is told, from the schema the arguments are decoded with: its type side, without draft or closed-object markers. */
const jsonSchemaOf = (schema: Schema.Schema.Any): Record<string, unknown> => {
  const made: Record<string, unknown> = { ...JSONSchema.make(Schema.typeSchema(schema)) }
  const { $schema: _draft, additionalProperties: _closed, ...rest } = made
  return rest
}

/** A built-in tool, as its module declares it. */
interface ToolDefinition<A extends Record<string, unknown>, I> {
  readonly name: string
  readonly description: string
  /** The one schema of its arguments: calls are decoded with it, and the model is told its JSON Schema. */
  readonly parameters: Schema.Schema<A, I>
  readonly access: ToolAccess
  readonly kind: ToolKind
  /** Absent for a tool the system prompt need not name (its description says enough). */
  readonly purpose?: string
  /** The decoded arguments, tidied before they are used (e.g. optional text given as ""). */
  readonly tidy?: (args: A) => A
  readonly describe: ToolRecord["describe"]
  readonly preview?: ToolRecord["preview"]
  readonly changeFromArguments?: ToolRecord["changeFromArguments"]
  readonly run: (args: A, ctx: ToolContext) => Effect.Effect<ToolResult, never, FileAccess>
}

/** The record of a built-in tool: its JSON Schema derived from its arguments' schema, its calls decoded with it. */
export const defineTool = <A extends Record<string, unknown>, I>(definition: ToolDefinition<A, I>): ToolRecord => {
  const { parameters, run, tidy } = definition
  const decode = decodeArguments(parameters)
  return {
    name: definition.name,
    description: definition.description,
    parameters: jsonSchemaOf(parameters),
    access: definition.access,
    kind: definition.kind,
    ...(definition.purpose === undefined ? {} : { purpose: definition.purpose }),
    prepare: (raw) =>
      Either.flatMap(parseArguments(raw), decode).pipe(
        Either.map((decoded): PreparedCall => {
          const args = tidy === undefined ? decoded : tidy(decoded)
          return { input: args, run: (ctx) => run(args, ctx) }
        })
      ),
    describe: definition.describe,
    preview: definition.preview ?? noPreview,
    ...(definition.changeFromArguments === undefined ? {} : { changeFromArguments: definition.changeFromArguments })
  }
}
