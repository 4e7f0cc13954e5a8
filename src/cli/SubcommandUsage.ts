/**
 * Why a subcommand's line is bad usage, in mm's words, read against CommandLine.ts: the
 * words that name a member (`search`) are followed down, each option must be one the
 * command takes, and the operands must be as many as it wants. @effect/cli (Cli.ts) is what
 * parses the line; this only words its refusal, and a test holds the two to the same verdict.
 */
import { childrenOf, type CommandPath, HELP, optionsOf, type OptionSpec, specOf, type TopCommand } from "./CommandLine"

/** The options of every command at or below `path`, by the names they are typed with. */
const namedBelow = (path: CommandPath): ReadonlyMap<string, OptionSpec> => {
  const all = new Map<string, OptionSpec>()
  const visit = (at: CommandPath) => {
    for (const option of optionsOf(at)) {
      all.set(option.long, option)
      if (option.short !== undefined) all.set(option.short, option)
    }
    for (const child of childrenOf(at)) visit(child)
  }
  visit(path)
  return all
}

const takes = (path: CommandPath, long: string): boolean => optionsOf(path).some((option) => option.long === long)

const members = (path: CommandPath): string => childrenOf(path).map((child) => child.slice(path.length + 1)).join(", ")

const operandsProblem = (path: CommandPath, operands: ReadonlyArray<string>): string | undefined => {
  const wanted = specOf(path).operands
  if (wanted === undefined) {
    if (operands.length === 0) return undefined
    return childrenOf(path).length > 0
      ? `${path} has no subcommand ${operands[0]} (it has: ${members(path)})`
      : `${path} takes nothing more: ${operands[0]}`
  }
  if (operands.length < wanted.min) return `${path} needs ${wanted.name}`
  if (wanted.max !== undefined && operands.length > wanted.max) {
    return `${path} takes one ${wanted.name}, not also ${operands[wanted.max]}`
  }
  return undefined
}

/** What is wrong with the line, once read to its end. */
const ended = (
  path: CommandPath,
  options: ReadonlySet<string>,
  operands: ReadonlyArray<string>
): string | undefined => {
  if (!specOf(path).runs && operands.length === 0) return `${path} needs one of: ${members(path)}`
  for (const long of options) if (!takes(path, long)) return `${path} does not take ${long}`
  return operandsProblem(path, operands)
}

/** `mm TOP …`: what is wrong with it, or undefined when the table takes it (`--help` is taken). */
export const subcommandProblem = (top: TopCommand, args: ReadonlyArray<string>): string | undefined => {
  const known = namedBelow(top)
  let path: CommandPath = top
  const options = new Set<string>()
  const operands: Array<string> = []
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]
    if (arg === "--") {
      operands.push(...args.slice(i + 1))
      break
    }
    if (!arg.startsWith("-") || arg === "-") {
      const member = `${path} ${arg}`
      if (operands.length === 0 && childrenOf(path).includes(member as CommandPath)) path = member as CommandPath
      else operands.push(arg)
      continue
    }
    const eq = arg.startsWith("--") ? arg.indexOf("=") : -1
    const spec = known.get(eq > 0 ? arg.slice(0, eq) : arg)
    if (spec === undefined) return `unknown option ${eq > 0 ? arg.slice(0, eq) : arg}`
    if (!takes(path, spec.long)) return `${path} does not take ${spec.long}`
    if (spec === HELP) return undefined
    if (options.has(spec.long)) return `${spec.long} is given twice`
    options.add(spec.long)
    if (spec.value === undefined) {
      if (eq > 0) return `${spec.long} takes no value`
      continue
    }
    const value = eq > 0 ? arg.slice(eq + 1) : args[++i]
    if (value === undefined || value === "") return `${spec.long} needs ${spec.value}`
    if (spec.choices !== undefined && !spec.choices.includes(value)) {
      return `${spec.long} takes ${spec.choices.join(" or ")}, not ${JSON.stringify(value)}`
    }
  }
  return ended(path, options, operands)
}
