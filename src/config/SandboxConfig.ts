import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

/** `auto`: confined where bubblewrap can start, else not; `on`: confined or mm does not start; `off`: never. */
export type SandboxMode = "auto" | "on" | "off"

/** The `sandbox` key once decoded: one shape whichever form agent.yaml used. */
export interface SandboxSettings {
  readonly mode: SandboxMode
  /** Whether a confined command may reach the network. */
  readonly network: boolean
  /** Paths a confined command may write besides the project (as written; resolved against the project). */
  readonly writable: ReadonlyArray<string>
}

const Mode = Schema.String.pipe(
  Schema.filter((s): s is SandboxMode => s === "auto" || s === "on" || s === "off", {
    message: (issue) => `expected "auto", "on" or "off", got ${JSON.stringify(issue.actual)}`,
    jsonSchema: { enum: ["auto", "on", "off"] }
  })
)

const SandboxMap = Schema.Struct({
  mode: Schema.optionalWith(Mode, { default: () => "auto" as const }).annotations({
    description: "auto: confine bash where bubblewrap can start; on: confine or refuse to start; off: never confine"
  }),
  network: Schema.optionalWith(Schema.Boolean, { default: () => false }).annotations({
    description: "let confined commands reach the network"
  }),
  writable: Schema.optionalWith(Schema.Array(Schema.NonEmptyTrimmedString), { default: () => [] }).annotations({
    description: "paths confined commands may write besides the project (relative ones are resolved against it)"
  })
})

const modes = ["auto", "on", "off"]

/** What editors are told of the key: a word, or the map (a hand-written JSON Schema, so nothing is built at start). */
const sandboxJsonSchema = {
  anyOf: [
    { type: "string", enum: modes },
    {
      type: "object",
      additionalProperties: false,
      properties: {
        mode: { type: "string", enum: modes, description: "as the word form", default: "auto" },
        network: { type: "boolean", description: "let confined commands reach the network", default: false },
        writable: {
          type: "array",
          items: { type: "string" },
          description: "paths confined commands may write besides the project",
          default: []
        }
      }
    }
  ]
}

/**
 * `sandbox: auto | on | off`, or the map `{mode, network, writable}`; both decode to one shape.
 * The form is chosen by the value's type, so that a mistake inside the map is reported at its key.
 */
export const SandboxConfig = Schema.transformOrFail(
  Schema.Unknown,
  Schema.typeSchema(
    Schema.Struct({
      mode: Schema.Literal("auto", "on", "off"),
      network: Schema.Boolean,
      writable: Schema.Array(Schema.String)
    })
  ),
  {
    strict: true,
    decode: (input, options) =>
      typeof input === "string"
        ? ParseResult.map(
          ParseResult.decodeUnknown(Mode)(input, options),
          (mode): SandboxSettings => ({ mode, network: false, writable: [] })
        )
        : ParseResult.decodeUnknown(SandboxMap)(input, options),
    encode: (settings) => ParseResult.succeed(settings)
  }
).annotations({ jsonSchema: sandboxJsonSchema })

export const defaultSandbox: SandboxSettings = { mode: "auto", network: false, writable: [] }

export const sandboxKeyDescriptions: Record<string, string> = {
  sandbox:
    "Confine every bash call the model makes with bubblewrap (read-only system, writable project, private /tmp, no network): auto (where bubblewrap can start), on (or refuse to start), off; or a map {mode, network, writable}.",
  "sandbox.mode":
    "auto: confine where bubblewrap can start, off with one banner line elsewhere; on: confine, or exit 2 at start; off: never confine.",
  "sandbox.network": "true lets confined commands reach the network (default false).",
  "sandbox.writable": "Extra paths confined commands may write, besides the project directory."
}
