// What an "always" answer covers (docs/how-to/approvals.md). Pure functions: the core offers
// the scopes with each approval request, keeps the ones chosen (for the session, and in
// .mm/permissions.json: RememberedApprovals.ts), and asks `isAllowed` before it asks again.
// A bash command is read by a real bash parser (CommandReader.ts), passed in as `read`.
import * as path from "node:path"

import { projectTargetOf } from "../lib/RealPath"
import { PROTECTED_TEXT, writesInsideProject } from "../tools/ProtectedPaths"
import type { ToolAccess } from "../tools/ToolRecord"
import type { CommandReading } from "./CommandReader"
import { riskOf } from "./RiskyOptions"

/** One "always" the user gave. */
export type Scope =
  /** A command: one simple command of literal words that starts with these words, none of them risky. */
  | { readonly _tag: "CommandPrefix"; readonly words: ReadonlyArray<string> }
  /** A command: this exact command line (compound commands, anything not literal, programs that run programs). */
  | { readonly _tag: "ExactCommand"; readonly command: string }
  /** A file tool's writes to this file (its real path, inside the project); a reading tool's reads of it, outside. */
  | { readonly _tag: "File"; readonly path: string }
  /** A file tool's writes to any file that really lies inside this directory (the project). */
  | { readonly _tag: "Project"; readonly dir: string }
  /** Every call of this tool (tools without a finer scope, e.g. MCP tools). */
  | { readonly _tag: "Tool"; readonly name: string }

/** A call as the approval rule sees it: the tool's name and access, its parsed arguments, the project directory. */
export interface CallToApprove {
  readonly tool: string
  readonly access: ToolAccess
  readonly input: Record<string, unknown> | undefined
  readonly cwd: string
}

/** How a command line is read: `CommandReader.read`; a test may pass its own. */
export type ReadCommand = (command: string) => CommandReading

// ---------------------------------------------------------------------------
// Commands

/**
 * The words an "always" on this simple command covers: the program and the words after it up
 * to its first one that is not an option (`npm test`, `git status`, `ls` for `ls -la`).
 */
export const prefixOf = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const argument = words.findIndex((w, i) => i > 0 && !w.startsWith("-"))
  return argument === -1 ? words.slice(0, 1) : words.slice(0, argument + 1)
}

/** What the command is for the rule: words a prefix may cover, or the reason only its exact line may. */
type CommandClass =
  | { readonly _tag: "Prefixable"; readonly words: ReadonlyArray<string> }
  | { readonly _tag: "ExactOnly"; readonly reason: string }

export const classifyCommand = (read: ReadCommand, command: string): CommandClass => {
  const reading = read(command)
  if (reading._tag === "Unresolved") return { _tag: "ExactOnly", reason: reading.reason }
  const risk = riskOf(reading.words)
  return risk === undefined ? { _tag: "Prefixable", words: reading.words } : { _tag: "ExactOnly", reason: risk }
}

/** The scope an "always" on this command gives: its word prefix, or the exact line. */
export const commandScope = (read: ReadCommand, command: string): Scope => {
  const own = classifyCommand(read, command)
  return own._tag === "Prefixable"
    ? { _tag: "CommandPrefix", words: prefixOf(own.words) }
    : { _tag: "ExactCommand", command: command.trim() }
}

const commandCovered = (scope: Scope, read: ReadCommand, command: string): boolean => {
  switch (scope._tag) {
    case "ExactCommand":
      return command.trim() === scope.command
    case "CommandPrefix": {
      const own = classifyCommand(read, command)
      return own._tag === "Prefixable" && scope.words.length <= own.words.length &&
        scope.words.every((w, i) => own.words[i] === w)
    }
    default:
      return false
  }
}

// ---------------------------------------------------------------------------
// Files and the project

const fileOf = (call: CallToApprove): string | undefined =>
  call.access === "write" && typeof call.input?.path === "string"
    ? path.resolve(call.cwd, call.input.path)
    : undefined

/**
 * Whether a file tool's call writes outside the project directory: its real target (every
 * symbolic link followed, dangling ones too) is outside, or it is a file with other hard links,
 * or it is one of the project's protected paths (.git/, .mm/, agent.yaml: tools/ProtectedPaths.ts).
 */
export const isOutsideProject = (call: CallToApprove): boolean => {
  const file = fileOf(call)
  return file !== undefined && !writesInsideProject(call.cwd, file)
}

/** Where a file or reading tool's path really leads; undefined for other tools. */
const realTargetOf = (call: CallToApprove): string | undefined =>
  typeof call.input?.path === "string" && (call.access === "write" || call.access === "read")
    ? projectTargetOf(call.cwd, call.input.path).real
    : undefined

// ---------------------------------------------------------------------------
// The rule

/**
 * True when one of the "always" answers given covers this call, so it runs without asking.
 * An edit or a write whose real target is outside the project, or is a protected path
 * (`isOutsideProject`), is never covered: it is asked every time.
 */
export const isAllowed = (scopes: ReadonlyArray<Scope>, call: CallToApprove, read: ReadCommand): boolean => {
  if (isOutsideProject(call)) return false
  return scopes.some((scope) => {
    if (scope._tag === "Tool") return scope.name === call.tool
    if (call.access === "command") {
      return typeof call.input?.command === "string" && commandCovered(scope, read, call.input.command)
    }
    if (call.access === "read") return scope._tag === "File" && scope.path === realTargetOf(call)
    const file = fileOf(call)
    if (file === undefined) return false
    if (scope._tag === "File") return scope.path === realTargetOf(call)
    if (scope._tag === "Project") return writesInsideProject(scope.dir, file) && writesInsideProject(call.cwd, file)
    return false
  })
}

/** A choice of "always" offered with a request: the scope and how the user is told it. */
export interface AlwaysChoice {
  readonly scope: Scope
  /** Names what is allowed: `"npm test …"`, `this exact command`, `src/a.ts`, `every edit in this project`. */
  readonly label: string
  /** What it covers, in a sentence a person can check: `"npm test" with any other arguments`. */
  readonly covers: string
}

const quoteWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

const shownPath = (file: string, cwd: string): string => {
  const relative = path.relative(cwd, file)
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative
}

/** How a scope is named to the user. */
const scopeLabel = (scope: Scope, cwd: string): string => {
  switch (scope._tag) {
    case "CommandPrefix":
      return `"${scope.words.map(quoteWord).join(" ")} …"`
    case "ExactCommand":
      return "this exact command"
    case "File":
      return shownPath(scope.path, cwd)
    case "Project":
      return "every edit in this project"
    case "Tool":
      return `every ${scope.name} call`
  }
}

/** What a scope covers, in words (`reason`: why a command gets only its exact line). */
export const scopeCovers = (scope: Scope, cwd: string, reason?: string): string => {
  switch (scope._tag) {
    case "CommandPrefix": {
      const words = scope.words.map(quoteWord).join(" ")
      return scope.words.length === 1 ? `"${words}" with any arguments` : `"${words}" with any other arguments`
    }
    case "ExactCommand":
      return `this exact command only${reason === undefined ? "" : ` (${reason})`}`
    case "File":
      return `${shownPath(scope.path, cwd)}, while it stays inside the project`
    case "Project":
      return `every edit and write inside ${scope.dir}, never a file outside it, a link that leads out, or ${PROTECTED_TEXT}`
    case "Tool":
      return `every ${scope.name} call`
  }
}

/**
 * The "always" choices a call offers, most specific first: a command its prefix (or the exact
 * line), a file tool its file and then the whole project. An edit or write outside the
 * project, or to a protected path, offers none: it is asked every time. A reading tool
 * (asked only outside the project): that file. Any other tool: the tool itself.
 */
export const alwaysChoices = (call: CallToApprove, read: ReadCommand): ReadonlyArray<AlwaysChoice> => {
  const choice = (scope: Scope, reason?: string): AlwaysChoice => ({
    scope,
    label: scopeLabel(scope, call.cwd),
    covers: scopeCovers(scope, call.cwd, reason)
  })
  if (call.access === "command") {
    if (typeof call.input?.command !== "string") return []
    const own = classifyCommand(read, call.input.command)
    return [choice(commandScope(read, call.input.command), own._tag === "ExactOnly" ? own.reason : undefined)]
  }
  // a read is asked only outside the project: "always" there is for reading that path again
  if (call.access === "read") {
    const real = realTargetOf(call)
    return real === undefined ? [] : [{ ...choice({ _tag: "File", path: real }), covers: `reading ${real}` }]
  }
  if (call.access === "write") {
    const file = fileOf(call)
    const real = realTargetOf(call)
    if (file === undefined || real === undefined || isOutsideProject(call)) return []
    return [choice({ _tag: "File", path: real }), choice({ _tag: "Project", dir: call.cwd })]
  }
  return [choice({ _tag: "Tool", name: call.tool })]
}
