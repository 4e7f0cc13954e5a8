// How a listed program's arguments are read, as the program itself reads them (getopt_long for
// the GNU tools, and the few ways git, rg and tree differ), for the read-only check of
// ReadOnlyCommands.ts. Wherever mm's reading and the program's could differ, mm's reads more
// words as operands (each checked as a path), never fewer.

/**
 * What an option takes: nothing (`f`), a value (`v`: `--x=V`, `--x V`, `-xV`, `-x V`), a path
 * (`p`: a value checked as a path), a value only when attached (`o`: `--x=V`, `-xV`), or (for
 * git, whose values are otherwise taken only attached) a value that may also be the next word (`n`).
 */
export type Kind = "f" | "v" | "p" | "o" | "n"

/**
 * How a program reads its options. `gnu`: getopt_long (a long option may be abbreviated, a short
 * option's value is attached or the next word). `whole`: long options only whole (rg). `tree`:
 * long options whole, and a short option's value is always the next word, its cluster going on
 * after it. `git`: long options whole, values only attached (`--author=x`, `-n5`), so that a
 * word after an option is checked as an operand.
 */
export type Style = "gnu" | "whole" | "tree" | "git"

/**
 * What the words that are not options are: `paths` (each checked), `pattern` (the first is a
 * pattern unless a pattern option was given, the rest paths), `none` (no operand), `words`
 * (anything, and no option is read: echo), `revs` (git: revisions or paths, each checked as a
 * path), `listed` (git branch: patterns, only with --list; else a branch would be made).
 */
export type Operands = "paths" | "pattern" | "none" | "words" | "revs" | "listed"

export interface Program {
  readonly style: Style
  readonly operands: Operands
  /** Option name (a letter, or a long name without its dashes) → what it takes. */
  readonly options: ReadonlyMap<string, Kind>
  /** Option name → why it is not read-only (`writes a file`). */
  readonly refused: ReadonlyMap<string, string>
  /** `-NUM` is an option (head -5, git log -3, grep -2). */
  readonly numeric?: boolean
  /** Options after which every operand is a path (grep -e/-f, rg --files). */
  readonly patterns?: ReadonlySet<string>
}

export interface ParsedArgs {
  /** The words that are not options or their values, in order. */
  readonly operands: ReadonlyArray<string>
  /** Option values that are paths. */
  readonly paths: ReadonlyArray<string>
  /** A pattern option was given (`grep -e`): the first operand is a path, not the pattern. */
  readonly patternGiven: boolean
  /** `git branch --list` (or `-l`) was given: its operands are patterns. */
  readonly listing: boolean
  /** Every option read as an option (its long name, or its letter), not the words given as values. */
  readonly seen: ReadonlySet<string>
}

const LISTING = new Set(["l", "list"])

/** The long option a name given after `--` stands for: itself, or (GNU) the one long name it begins. */
const resolveLong = (shown: string, spec: Program, given: string): string => {
  if (given.length > 1 && (spec.options.has(given) || spec.refused.has(given))) return given
  if (spec.style !== "gnu" || given === "") return `${shown} --${given} is not on mm's list of read-only options`
  const names = [...spec.options.keys(), ...spec.refused.keys()].filter((n) => n.length > 1 && n.startsWith(given))
  if (names.length === 1) return names[0]
  return names.length === 0
    ? `${shown} --${given} is not on mm's list of read-only options`
    : `${shown} --${given} is ambiguous (--${names.slice(0, 3).join(", --")})`
}

/** A reason (a string with a space) or the option's long name (no space). */
const isReason = (text: string): boolean => text.includes(" ")

/**
 * The arguments of a listed program read as it reads them: its operands and path values, or
 * why they are not read-only (an unknown or refused option, a value missing).
 */
export const parseArgs = (shown: string, spec: Program, args: ReadonlyArray<string>): ParsedArgs | string => {
  const operands: Array<string> = []
  const paths: Array<string> = []
  let patternGiven = false
  let listing = false
  let ended = false
  const seen = new Set<string>()
  const note = (name: string) => {
    seen.add(name)
    if (spec.patterns?.has(name) === true) patternGiven = true
    if (LISTING.has(name)) listing = true
  }
  for (let i = 0; i < args.length; i++) {
    const word = args[i]
    if (ended || word === "-" || !word.startsWith("-")) {
      operands.push(word)
      continue
    }
    if (word === "--") {
      ended = true
      continue
    }
    if (spec.numeric === true && /^-\d+$/.test(word)) continue
    if (word.startsWith("--")) {
      const body = word.slice(2)
      const eq = body.indexOf("=")
      const given = eq < 0 ? body : body.slice(0, eq)
      const value = eq < 0 ? undefined : body.slice(eq + 1)
      const name = resolveLong(shown, spec, given)
      if (isReason(name)) return name
      const spelled = name === given ? `--${name}` : `--${given} (--${name})`
      const why = spec.refused.get(name)
      if (why !== undefined) return `${shown} ${spelled} ${why}`
      const kind = spec.options.get(name) as Kind
      note(name)
      if (kind === "f") {
        if (value !== undefined) return `${shown} ${spelled} takes no value`
        continue
      }
      if (value !== undefined) {
        if (kind === "p") paths.push(value)
        continue
      }
      if (kind === "o" || (spec.style === "git" && kind !== "n")) continue
      if (i + 1 >= args.length) return `${shown} ${spelled} needs a value`
      const next = args[++i]
      if (kind === "p") paths.push(next)
      continue
    }
    const cluster = shortCluster(shown, spec, args, i, paths, note)
    if (typeof cluster === "string") return cluster
    i = cluster
  }
  return { operands, paths, patternGiven, listing, seen }
}

/**
 * One word of short options (`-la`, `-n5`, `-La 2` for tree): each letter checked; a value taken
 * as the program takes it. The index of the last word it used, or why it is not read-only.
 */
const shortCluster = (
  shown: string,
  spec: Program,
  args: ReadonlyArray<string>,
  at: number,
  paths: Array<string>,
  note: (name: string) => void
): number | string => {
  const letters = Array.from(args[at].slice(1))
  let last = at
  for (let j = 0; j < letters.length; j++) {
    const letter = letters[j]
    const why = spec.refused.get(letter)
    if (why !== undefined) return `${shown} -${letter} ${why}`
    const kind = spec.options.get(letter)
    if (kind === undefined) return `${shown} -${letter} is not on mm's list of read-only options`
    note(letter)
    if (kind === "f") continue
    if (spec.style === "tree") {
      // tree takes the next word, whatever follows the letter
      if (last + 1 >= args.length) return `${shown} -${letter} needs a value`
      last += 1
      if (kind === "p") paths.push(args[last])
      continue
    }
    const rest = letters.slice(j + 1).join("")
    if (rest !== "") {
      if (kind === "p") paths.push(rest, ...(rest.startsWith("=") ? [rest.slice(1)] : []))
      return last
    }
    if (kind === "o" || (spec.style === "git" && kind !== "n")) return last
    if (last + 1 >= args.length) return `${shown} -${letter} needs a value`
    last += 1
    if (kind === "p") paths.push(args[last])
    return last
  }
  return last
}
