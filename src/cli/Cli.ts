import * as CliArgs from "@effect/cli/Args"
import * as CliConfig from "@effect/cli/CliConfig"
import * as Command from "@effect/cli/Command"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Options from "@effect/cli/Options"
import type * as ValidationError from "@effect/cli/ValidationError"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as Arr from "effect/Array"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"

import { forkTarget, type StartOn } from "../domain/StartOn"
import type { Secrets } from "../lib/Secrets"
import { type RunArgs, usageText } from "./Args"
import {
  childrenOf,
  type CommandPath,
  type Operands,
  type OptionSpec,
  ROOT_OPERANDS,
  ROOT_OPTIONS,
  type Runnable,
  specOf,
  TOP_COMMANDS,
  type TopCommand
} from "./CommandLine"
import type { ExitCode } from "./Run"
import { type Given, runSubcommand } from "./Subcommands"
import { subcommandProblem } from "./SubcommandUsage"

/**
 * The command line as @effect/cli declares it, every declaration built from the rows of
 * CommandLine.ts: @effect/cli parses the subcommands' lines. Only its parser is used: its
 * built-in options (--help, --completions, --wizard, --version, --log-level) and its pages are
 * never shown: a usage error is said in mm's words with the usage of the table, --help is
 * mm's page (Help.ts), and the completions are mm's (Completions.ts). Loaded for a subcommand
 * only; `mm`, `mm "QUESTION"` and `mm -p` are read by hand (Args.ts), and a test checks that
 * both readings agree.
 */

/** A parsed command's values, by the table's names: `--json` → boolean, `--config` → Option, `operands`. */
type Values = Readonly<Record<string, unknown>>

type Declared = Options.Options<boolean | Option.Option<string>>

const OPERANDS = "operands"

/** One option of the table: a switch is a boolean, a value an optional text (or one of its choices). */
const declareOption = (spec: OptionSpec): Declared => {
  const name = spec.long.slice(2)
  const aliased = <A>(options: Options.Options<A>) =>
    spec.short === undefined ? options : Options.withAlias(options, spec.short.slice(1))
  if (spec.value === undefined) return Options.withDescription(aliased(Options.boolean(name)), spec.help)
  const valued = spec.choices === undefined ? Options.text(name) : Options.choice(name, spec.choices)
  return aliased(valued).pipe(
    Options.withPseudoName(spec.value),
    Options.withDescription(spec.help),
    Options.optional
  )
}

/** The operands of the table: one, between `min` and `max`, or any number from `min`. */
const declareOperands = (operands: Operands): CliArgs.Args<string | ReadonlyArray<string>> => {
  const one = CliArgs.text({ name: operands.name })
  return operands.min === 1 && operands.max === 1
    ? one
    : operands.max === undefined
    ? CliArgs.atLeast(one, operands.min)
    : CliArgs.between(one, operands.min, operands.max)
}

const declareConfig = (
  options: ReadonlyArray<OptionSpec>,
  operands: Operands | undefined
): Record<string, Declared | CliArgs.Args<string | ReadonlyArray<string>>> => ({
  ...Object.fromEntries(options.map((option) => [option.long, declareOption(option)])),
  ...(operands === undefined ? {} : { [OPERANDS]: declareOperands(operands) })
})

type Declaration = Command.Command<string, never, never, Values>

/** Which command of the table each declared command is, by the tag @effect/cli names it with in a parse. */
const pathOf = new Map<Context.Tag<unknown, unknown>, CommandPath>()

const declareCommand = (path: CommandPath): Declaration => {
  const spec = specOf(path)
  const made = Command.make(path.split(" ").at(-1)!, declareConfig(spec.options, spec.operands)).pipe(
    Command.withDescription(spec.summary)
  ) as Declaration
  const members = childrenOf(path).map(declareCommand)
  const declared = Arr.isNonEmptyReadonlyArray(members)
    ? (Command.withSubcommands(made, members) as unknown as Declaration)
    : made
  pathOf.set(declared.tag as Context.Tag<unknown, unknown>, path)
  return declared
}

/** The options mm reads before any other (Args.ts, Main.ts): they end the reading or change the environment. */
const READ_FIRST = new Set(["--help", "--version", "--completions", "--no-color"])

const ROOT_DECLARED = ROOT_OPTIONS.filter((option) => !READ_FIRST.has(option.long))

/** The whole command line: `mm` with its options and QUESTION, and the subcommands of the table. */
export const mmCommand: Declaration = Command.withSubcommands(
  Command.make("mm", declareConfig(ROOT_DECLARED, ROOT_OPERANDS)),
  TOP_COMMANDS.map(declareCommand) as [Declaration, ...Array<Declaration>]
) as unknown as Declaration

/** As mm reads: `--JSON` is not `--json`, and a misspelt option is not taken for another. */
const cliConfig = CliConfig.make({ isCaseSensitive: true, autoCorrectLimit: 0, showBuiltIns: false })

/** What a subcommand's line says: the command to run, its page, or why it is bad usage. */
export type Reading =
  | { readonly _tag: "Command"; readonly given: Given }
  | { readonly _tag: "Help" }
  | { readonly _tag: "Usage"; readonly message: string }

const given = (value: unknown): Option.Option<string | true> =>
  value === true ? Option.some(true) : Option.isOption(value) ? (value as Option.Option<string>) : Option.none()

const operandsOf = (value: unknown): ReadonlyArray<string> =>
  typeof value === "string" ? [value] : Array.isArray(value) ? value : []

/** The command a parse names, from @effect/cli's values down the subcommands it took; a string says why it is bad usage. */
const givenOf = (root: Values): Given | string => {
  const levels: Array<{ readonly path: CommandPath; readonly values: Values }> = []
  let values = root
  for (;;) {
    const member = values.subcommand as Option.Option<readonly [Context.Tag<unknown, unknown>, Values]> | undefined
    if (member === undefined || Option.isNone(member)) break
    const [tag, below] = member.value
    levels.push({ path: pathOf.get(tag)!, values: below })
    values = below
  }
  const { path } = levels.at(-1)!
  // what the subcommand left, @effect/cli gives back to `mm`: its QUESTION or its options take it
  const left = operandsOf(root[OPERANDS])
  if (left.length > 0) return `${path} takes nothing more: ${left[0]}`
  const taken = ROOT_DECLARED.find((option) => Option.isSome(given(root[option.long])))
  if (taken !== undefined) return `${path} does not take ${taken.long}`
  const spec = specOf(path)
  if (!spec.runs) {
    return `${path} needs one of: ${childrenOf(path).map((child) => child.slice(path.length + 1)).join(", ")}`
  }
  // an option given before a member's name (`mm sessions --json list`) is the member's, if it takes it
  const options = new Map<string, string | true>()
  for (const level of levels) {
    for (const option of specOf(level.path).options) {
      const found = given(level.values[option.long])
      if (Option.isNone(found)) continue
      if (!spec.options.some((own) => own.long === option.long)) return `${path} does not take ${option.long}`
      options.set(option.long, found.value)
    }
  }
  return { path: path as Runnable, options, operands: operandsOf(values[OPERANDS]) }
}

const ansi = /\u001b\[[0-9;]*m/g

/** The first line @effect/cli would have printed, without its colours. */
const plainText = (error: ValidationError.ValidationError): string =>
  HelpDoc.toAnsiText(error.error).replace(ansi, "").trim().split("\n")[0]

/**
 * An operand that looks like an option and was not after `--`: @effect/cli takes a word it
 * does not know (`--force`, or `--config` without its value) for an operand where one may stand.
 */
const optionLike = (operands: ReadonlyArray<string>, args: ReadonlyArray<string>): string | undefined => {
  const end = args.indexOf("--")
  // the words after -- come last among the operands
  const forced = end === -1 ? 0 : args.length - end - 1
  return operands.slice(0, Math.max(0, operands.length - forced)).find((word) => word.startsWith("-") && word !== "-")
}

/** What @effect/cli makes of `mm TOP …`, in mm's terms; its own pages and messages are not printed. */
export const libraryReading = (top: TopCommand, args: ReadonlyArray<string>): Effect.Effect<Reading> =>
  Descriptor.parse(mmCommand.descriptor, ["mm", top, ...args], cliConfig).pipe(
    Effect.map((directive): Reading => {
      if (directive._tag === "BuiltIn") {
        return directive.option._tag === "ShowHelp"
          ? { _tag: "Help" }
          : { _tag: "Usage", message: `an option of @effect/cli's own (${directive.option._tag})` }
      }
      if (Arr.isNonEmptyReadonlyArray(directive.leftover)) {
        return { _tag: "Usage", message: `${top} takes nothing more: ${directive.leftover[0]}` }
      }
      const read = givenOf(directive.value)
      if (typeof read === "string") return { _tag: "Usage", message: read }
      const dashed = optionLike(read.operands, args)
      return dashed === undefined
        ? { _tag: "Command", given: read }
        : { _tag: "Usage", message: `unknown option ${dashed}` }
    }),
    Effect.catchAll((error) => Effect.succeed<Reading>({ _tag: "Usage", message: plainText(error) })),
    Effect.provide(NodeContext.layer)
  )

/**
 * `mm TOP …` as mm takes it: as @effect/cli parses it, and only if the table takes it too (a
 * switch followed by `true`, or an option given twice, @effect/cli takes and mm does not). A
 * refusal is worded from the table; in @effect/cli's words only if the table sees nothing
 * wrong, which test/cli/Cli.test.ts keeps from happening.
 */
export const readSubcommand = (top: TopCommand, args: ReadonlyArray<string>): Effect.Effect<Reading> =>
  Effect.map(libraryReading(top, args), (reading): Reading => {
    const problem = subcommandProblem(top, args)
    if (reading._tag === "Usage") return { _tag: "Usage", message: problem ?? reading.message }
    return problem === undefined ? reading : { _tag: "Usage", message: problem }
  })

/** `mm TOP …`: read by @effect/cli, then run; bad usage is one line, then the usage of TOP, and exit code 2. */
export const subcommand = (top: TopCommand, args: ReadonlyArray<string>) =>
  Effect.flatMap(readSubcommand(top, args), (reading): Effect.Effect<ExitCode, unknown, Secrets> => {
    switch (reading._tag) {
      case "Command":
        return runSubcommand(reading.given)
      case "Help":
        return Effect.map(
          Effect.promise(() => import("./Help")),
          ({ helpText }) => (process.stdout.write(`${helpText(top)}\n`), 0)
        )
      case "Usage":
        return Effect.sync(() => (process.stderr.write(`mm: ${reading.message}\n${usageText(top)}\n`), 2))
    }
  })

/** What @effect/cli makes of a line of `mm`'s own options (tests compare it with Args.ts). */
export const libraryRunArgs = (args: ReadonlyArray<string>): Effect.Effect<RunArgs | undefined> =>
  Descriptor.parse(mmCommand.descriptor, ["mm", ...args], cliConfig).pipe(
    Effect.map((directive) =>
      directive._tag === "UserDefined" && directive.leftover.length === 0 ? runArgsOf(directive.value) : undefined
    ),
    Effect.orElseSucceed(() => undefined),
    Effect.provide(NodeContext.layer)
  )

const runArgsOf = (values: Values): RunArgs => {
  const text = (long: string) => Option.getOrUndefined(given(values[long])) as string | undefined
  const fork = text("--fork")
  const forked = fork === undefined ? undefined : forkTarget(fork)
  const resume = text("--resume")
  const start: StartOn = values["--continue"] === true
    ? { _tag: "Latest" }
    : forked !== undefined
    ? { _tag: "Fork", ...forked }
    : resume !== undefined
    ? { _tag: "Id", id: resume }
    : { _tag: "New" }
  const question = operandsOf(values[OPERANDS]).join(" ")
  return {
    config: text("--config"),
    question: question.trim() === "" ? undefined : question,
    print: values["--print"] === true,
    outputFormat: text("--output-format") === "json" ? "json" : "text",
    start,
    yes: values["--yes"] === true,
    verbose: values["--verbose"] === true,
    trust: values["--trust"] === true
  }
}
