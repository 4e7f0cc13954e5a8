// What an "always" answer covers (docs/how-to/approvals.md). Pure functions: the core offers
// the scopes with each approval request, keeps the ones chosen (for the session, and remembered
// for the project: RememberedApprovals.ts), and asks `isAllowed` before it asks again. A bash
// command is read by a real bash parser (CommandReader.ts), passed in as `read`; a reusable
// "always" is offered, and covers, only a command the list of read-only programs passes
// (ReadOnlyCommands.ts). Every other command gets its exact line, kept or for this session.
import * as path from "node:path"

import { projectTargetOf } from "../lib/RealPath"
import { PROTECTED_TEXT, writesInsideProject } from "../tools/ProtectedPaths"
import { allTools } from "../tools/Registry"
import type { ToolAccess } from "../tools/ToolRecord"
import { hostOf } from "../tools/WebFetch"
import type { CommandReading } from "./CommandReader"
import { listedProgram, readOnlyOf, type SecretTest } from "./ReadOnlyCommands"

/** One "always" the user gave. */
export type Scope =
  /**
   * A command: the program (and git's subcommand) of a read-only command (`ls`, `git log`),
   * covering a later command only when that one is read-only by the list too.
   */
  | { readonly _tag: "CommandPrefix"; readonly words: ReadonlyArray<string> }
  /** A command: this exact command line (every command that is not read-only by the list). */
  | { readonly _tag: "ExactCommand"; readonly command: string }
  /** A file tool's writes to this file (its real path, inside the project); a reading tool's reads of it, outside. */
  | { readonly _tag: "File"; readonly path: string }
  /** A file tool's writes to any file that really lies inside this directory (the project). */
  | { readonly _tag: "Project"; readonly dir: string }
  /** Every call of this tool (tools without a finer scope, e.g. MCP tools). */
  | { readonly _tag: "Tool"; readonly name: string }
  /** A network tool's (`web_fetch`) calls to this host (`docs.python.org`, `[::1]`), any path, any port. */
  | { readonly _tag: "Domain"; readonly host: string }

/** A call as the approval rule sees it: the tool's name and access, its parsed arguments, the project directory. */
export interface CallToApprove {
  readonly tool: string
  readonly access: ToolAccess
  readonly input: Record<string, unknown> | undefined
  readonly cwd: string
  /**
   * Which files look secret in this project (tools/SecretFiles.ts: the built-in names and the
   * configuration's `secrets:` globs); the built-in names alone when not given.
   */
  readonly secret?: SecretTest
}

/** How a command line is read: `CommandReader.read`; a test may pass its own. */
export type ReadCommand = (command: string) => CommandReading

// ---------------------------------------------------------------------------
// Commands

/** What a command is for the rule: read-only (and the words a reusable "always" names), or why only its exact line. */
export type CommandClass =
  | { readonly _tag: "ReadOnly"; readonly key: ReadonlyArray<string> }
  | { readonly _tag: "ExactOnly"; readonly reason: string }

/** Classifies a command line run in `cwd` (the project directory, where its paths are resolved). */
export const classifyCommand = (
  read: ReadCommand,
  command: string,
  cwd: string,
  secret?: SecretTest
): CommandClass => {
  const reading = read(command)
  if (reading._tag === "Unresolved") return { _tag: "ExactOnly", reason: reading.reason }
  const verdict = readOnlyOf(reading.words, cwd, secret)
  return verdict._tag === "ReadOnly"
    ? { _tag: "ReadOnly", key: verdict.key }
    : { _tag: "ExactOnly", reason: verdict.reason }
}

/** The scope a kept "always" on this command gives: its program (and subcommand) when read-only, else its exact line. */
export const commandScope = (read: ReadCommand, command: string, cwd: string): Scope => {
  const own = classifyCommand(read, command, cwd)
  return own._tag === "ReadOnly"
    ? { _tag: "CommandPrefix", words: own.key }
    : { _tag: "ExactCommand", command: command.trim() }
}

const sameWords = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): boolean =>
  a.length === b.length && a.every((w, i) => w === b[i])

const commandCovered = (
  scope: Scope,
  read: ReadCommand,
  command: string,
  cwd: string,
  secret?: SecretTest
): boolean => {
  switch (scope._tag) {
    case "ExactCommand":
      return command.trim() === scope.command
    case "CommandPrefix": {
      const own = classifyCommand(read, command, cwd, secret)
      return own._tag === "ReadOnly" && sameWords(own.key, scope.words)
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

/** What tools with these accesses reach is scoped finer than the whole tool: a command, a file, a domain. */
const FINER_ACCESS: ReadonlySet<ToolAccess> = new Set(["command", "read", "write", "network"])

/**
 * True when one of the "always" answers given covers this call, so it runs without asking.
 * An edit or a write whose real target is outside the project, or is a protected path
 * (`isOutsideProject`), is never covered: it is asked every time.
 */
export const isAllowed = (scopes: ReadonlyArray<Scope>, call: CallToApprove, read: ReadCommand): boolean => {
  if (isOutsideProject(call)) return false
  return scopes.some((scope) => {
    // a whole tool is offered only for tools without a finer scope: a row naming bash or a file
    // tool (mm never writes one) grants nothing, wherever it was found
    if (scope._tag === "Tool") {
      return scope.name === call.tool && !FINER_ACCESS.has(call.access)
    }
    if (call.access === "network") return scope._tag === "Domain" && scope.host === hostOf(call.input?.url)
    if (call.access === "command") {
      return typeof call.input?.command === "string" &&
        commandCovered(scope, read, call.input.command, call.cwd, call.secret)
    }
    if (call.access === "read") return scope._tag === "File" && scope.path === realTargetOf(call)
    const file = fileOf(call)
    if (file === undefined) return false
    if (scope._tag === "File") return scope.path === realTargetOf(call)
    if (scope._tag === "Project") return writesInsideProject(scope.dir, file) && writesInsideProject(call.cwd, file)
    return false
  })
}

/** mm's own tools with a finer scope than the whole tool (a command, a file, a domain): a `Tool` row naming one grants nothing. */
const FINER_SCOPED: ReadonlySet<string> = new Set(
  allTools.filter((tool) => FINER_ACCESS.has(tool.access)).map((tool) => tool.name)
)

/** Whether an "always" is remembered for the project (later runs too) or kept for this conversation only. */
export type Keep = "project" | "session"

/** A choice of "always" offered with a request: the scope, whether it is remembered, and how the user is told it. */
export interface AlwaysChoice {
  readonly scope: Scope
  readonly keep: Keep
  /** Names what is allowed: `` allow `git log` with read-only options ``, `run exactly this command`, `src/a.ts`. */
  readonly label: string
  /** What it covers, in a sentence a person can check: `` `git log` with read-only options, on paths inside the project ``. */
  readonly covers: string
}

const quoteWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

const shownPath = (file: string, cwd: string): string => {
  const relative = path.relative(cwd, file)
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative
}

const shownWords = (words: ReadonlyArray<string>): string => `\`${words.map(quoteWord).join(" ")}\``

/** How a scope is named to the user. */
const scopeLabel = (scope: Scope, cwd: string): string => {
  switch (scope._tag) {
    case "CommandPrefix":
      return `allow ${shownWords(scope.words)} with read-only options`
    case "ExactCommand":
      return "run exactly this command"
    case "File":
      return shownPath(scope.path, cwd)
    case "Project":
      return "every edit in this project"
    case "Tool":
      return `every ${scope.name} call`
    case "Domain":
      return `fetch anything from ${scope.host}`
  }
}

/**
 * What a remembered prefix that names no listed program covers: nothing (a row kept before the
 * list, such as `["rm"]` or `["npm", "test"]`).
 */
const stalePrefix = (words: ReadonlyArray<string>, cwd: string): string => {
  const verdict = readOnlyOf(words, cwd)
  const why = verdict._tag === "NotReadOnly"
    ? verdict.reason
    : "a reusable answer names only a read-only program, and git's subcommand"
  return `${shownWords(words)} …, which covers nothing now: ${why}`
}

/** What a scope covers, in words (`reason`: why a command gets only its exact line). */
export const scopeCovers = (scope: Scope, cwd: string, reason?: string): string => {
  switch (scope._tag) {
    case "CommandPrefix":
      return listedProgram(scope.words) === undefined
        ? stalePrefix(scope.words, cwd)
        : `${shownWords(scope.words)} with read-only options, on paths inside the project`
    case "ExactCommand":
      return `exactly this command line${reason === undefined ? "" : ` (${reason})`}`
    case "File":
      return `${shownPath(scope.path, cwd)}, while it stays inside the project`
    case "Project":
      return `every edit and write inside ${scope.dir}, never a file outside it, a link that leads out, or ${PROTECTED_TEXT}`
    case "Tool":
      return `every ${scope.name} call`
    case "Domain":
      return `any page of ${scope.host} (a redirect to another host is not followed)`
  }
}

/** Why a remembered answer grants nothing whatever it says (a `Tool` row naming bash or a file tool); undefined when it may. */
export const grantsNothing = (scope: Scope): string | undefined =>
  scope._tag === "Tool" && FINER_SCOPED.has(scope.name)
    ? `covers nothing: ${scope.name} is built in, its calls are asked one by one`
    : undefined

/** The two answers a command that is not read-only offers: its exact line, remembered, or for this conversation. */
const exactChoices = (command: string, reason: string): ReadonlyArray<AlwaysChoice> => {
  const scope: Scope = { _tag: "ExactCommand", command: command.trim() }
  return [
    {
      scope,
      keep: "project",
      label: scopeLabel(scope, ""),
      covers: `exactly this command line, in this project from now on (${reason})`
    },
    { scope, keep: "session", label: "session only", covers: "exactly this command line, until this conversation ends" }
  ]
}

/**
 * The "always" choices a call offers, most specific first: a read-only command its program
 * (and subcommand), any other command its exact line (remembered, or for this conversation
 * only), a file tool its file and then the whole project. An edit or write outside the
 * project, or to a protected path, offers none: it is asked every time. A reading tool
 * (asked only outside the project): that file. Any other tool: the tool itself.
 */
export const alwaysChoices = (call: CallToApprove, read: ReadCommand): ReadonlyArray<AlwaysChoice> => {
  const choice = (scope: Scope): AlwaysChoice => ({
    scope,
    keep: "project",
    label: scopeLabel(scope, call.cwd),
    covers: scopeCovers(scope, call.cwd)
  })
  if (call.access === "command") {
    if (typeof call.input?.command !== "string") return []
    const own = classifyCommand(read, call.input.command, call.cwd, call.secret)
    return own._tag === "ReadOnly"
      ? [choice({ _tag: "CommandPrefix", words: own.key })]
      : exactChoices(call.input.command, own.reason)
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
  // a fetch: its host, whatever the path
  if (call.access === "network") {
    const host = hostOf(call.input?.url)
    return host === undefined ? [] : [choice({ _tag: "Domain", host })]
  }
  return [choice({ _tag: "Tool", name: call.tool })]
}
