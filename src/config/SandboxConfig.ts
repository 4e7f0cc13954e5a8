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
  /** Variables let into a confined command's environment although their names look secret. */
  readonly env: ReadonlyArray<string>
  /** Per call: the most processes (threads count) and the largest file, in MiB. */
  readonly limits: SandboxLimits
}

export interface SandboxLimits {
  readonly processes: number
  readonly fileSize: number
}

export const defaultLimits: SandboxLimits = { processes: 2048, fileSize: 8192 }

const VariableName = Schema.String.pipe(
  Schema.filter((s) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(s), {
    message: (issue) => `expected a variable name (letters, digits, _), got ${JSON.stringify(issue.actual)}`
  })
)

const Positive = (what: string) =>
  Schema.Number.pipe(
    Schema.filter((n) => Number.isInteger(n) && n >= 1 && n <= 2 ** 30, {
      message: (issue) => `expected a whole number of ${what} from 1, got ${JSON.stringify(issue.actual)}`
    })
  )

const Limits = Schema.Struct({
  processes: Schema.optionalWith(Positive("processes"), { default: () => defaultLimits.processes }).annotations({
    description: "the most processes and threads a confined call may run at once"
  }),
  fileSize: Schema.optionalWith(Positive("MiB"), { default: () => defaultLimits.fileSize }).annotations({
    description: "the largest file a confined call may write, in MiB"
  })
})

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
  }),
  env: Schema.optionalWith(Schema.Array(VariableName), { default: () => [] }).annotations({
    description: "variables let into confined commands although their names look secret"
  }),
  limits: Schema.optionalWith(Limits, { default: () => defaultLimits }).annotations({
    description: "per call: processes (at once) and fileSize (MiB)"
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
        },
        env: {
          type: "array",
          items: { type: "string" },
          description: "variables let into confined commands although their names look secret",
          default: []
        },
        limits: {
          type: "object",
          additionalProperties: false,
          properties: {
            processes: {
              type: "integer",
              minimum: 1,
              description: "the most processes and threads at once",
              default: 2048
            },
            fileSize: { type: "integer", minimum: 1, description: "the largest file written, in MiB", default: 8192 }
          }
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
      writable: Schema.Array(Schema.String),
      env: Schema.Array(Schema.String),
      limits: Schema.Struct({ processes: Schema.Number, fileSize: Schema.Number })
    })
  ),
  {
    strict: true,
    decode: (input, options) =>
      typeof input === "string"
        ? ParseResult.map(
          ParseResult.decodeUnknown(Mode)(input, options),
          (mode): SandboxSettings => ({ ...defaultSandbox, mode })
        )
        : ParseResult.decodeUnknown(SandboxMap)(input, options),
    encode: (settings) => ParseResult.succeed(settings)
  }
).annotations({ jsonSchema: sandboxJsonSchema })

export const defaultSandbox: SandboxSettings = {
  mode: "auto",
  network: false,
  writable: [],
  env: [],
  limits: defaultLimits
}

export const sandboxKeyDescriptions: Record<string, string> = {
  sandbox:
    "Confine every bash call the model makes with bubblewrap (read-only system, writable project, private /tmp, no network): auto (where bubblewrap can start), on (or refuse to start), off; or a map {mode, network, writable}.",
  "sandbox.mode":
    "auto: confine where bubblewrap can start, off with one banner line elsewhere; on: confine, or exit 2 at start; off: never confine.",
  "sandbox.network": "true lets confined commands reach the network (default false).",
  "sandbox.writable": "Extra paths confined commands may write, besides the project directory.",
  "sandbox.env":
    "Names of variables let into confined commands although they look secret (*_API_KEY, *_TOKEN, AWS_*, …); mm's own secrets never are.",
  "sandbox.limits":
    "Per confined call: processes, the most processes and threads at once (default 2048); fileSize, the largest file in MiB (default 8192)."
}
