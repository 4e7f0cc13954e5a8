// What `/permissions import` reads: a project's own `.mm/permissions.json` (written by an older
// mm, or shipped by whoever made the repository), row by row, each judged by whether mm would
// offer that "always" itself. Nothing here grants anything: the rows the user confirms are added
// to the user's own file by RememberedApprovals.ts, and the project's file is never changed.
import * as fs from "node:fs"
import * as path from "node:path"

import * as Either from "effect/Either"
import * as Schema from "effect/Schema"

import { firstLineOf, squashed } from "../lib/OneLine"
import { realPathOf } from "../lib/RealPath"
import { readRegularTextSync } from "../lib/RegularFiles"
import { bashTool } from "../tools/Bash"
import { PROTECTED_TEXT, writesInsideProject } from "../tools/ProtectedPaths"
import { allTools } from "../tools/Registry"
import { alwaysChoices, type ReadCommand, type Scope } from "./ApprovalScope"
import { PROJECT_PERMISSIONS_FILE, sameScope, ScopeSchema } from "./RememberedApprovals"

/** One row of the project's file, and whether it may be imported (`why` not, when not). */
export type ProjectRow =
  | { readonly _tag: "Scope"; readonly scope: Scope; readonly why: string | undefined }
  /** A row that is no approval mm knows: its text, squashed to one short line. */
  | { readonly _tag: "Unknown"; readonly text: string }

export type ProjectApprovalsFile =
  | { readonly _tag: "None"; readonly file: string }
  /** The file cannot be read as a list of rows: why, in one line. */
  | { readonly _tag: "Refused"; readonly file: string; readonly why: string }
  | { readonly _tag: "Rows"; readonly file: string; readonly rows: ReadonlyArray<ProjectRow> }

const decodeScope = Schema.decodeUnknownEither(ScopeSchema, { onExcessProperty: "error" })

const Envelope = Schema.Struct({ approvals: Schema.Array(Schema.Unknown) })
const decodeEnvelope = Schema.decodeUnknownEither(Schema.parseJson(Envelope))

/** A word as bash reads it back: bare when plain, else single-quoted. */
const shellWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

const BUILTIN = new Set(allTools.map((tool) => tool.name))

const sameDir = (a: string, b: string): boolean => {
  const real = (dir: string) => {
    try {
      return realPathOf(dir)
    } catch {
      return path.resolve(dir)
    }
  }
  return real(a) === real(b)
}

/**
 * Why a row may not be imported; undefined when mm would offer it itself: an exact command; a
 * prefix the rule offers for the command made of its words; a file or the project, inside this
 * project and not protected; an MCP tool (never a built-in one, whose calls are asked one by one).
 */
export const importRefusal = (scope: Scope, project: string, read: ReadCommand): string | undefined => {
  switch (scope._tag) {
    case "ExactCommand":
      return undefined
    case "CommandPrefix": {
      const command = scope.words.map(shellWord).join(" ")
      const offered = alwaysChoices({ tool: bashTool.name, access: "command", input: { command }, cwd: project }, read)
      return offered.some((choice) => sameScope(choice.scope, scope))
        ? undefined
        : `mm would not offer it: for \`${command}\` it offers ${offered.map((c) => c.covers).join(", ") || "nothing"}`
    }
    case "File":
      return writesInsideProject(project, scope.path)
        ? undefined
        : `outside this project, or one of ${PROTECTED_TEXT}`
    case "Project":
      return sameDir(scope.dir, project) ? undefined : "another directory than this project"
    case "Tool":
      return BUILTIN.has(scope.name) ? `${scope.name} is built in: its calls are asked one by one` : undefined
    case "Domain":
      return undefined
  }
}

/** The project's `.mm/permissions.json`, each row judged (`read` reads a command as the rule does). */
export const readProjectApprovals = (project: string, read: ReadCommand): ProjectApprovalsFile => {
  const file = path.join(project, PROJECT_PERMISSIONS_FILE)
  let text: string
  try {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return { _tag: "None", file }
    if (!stat.isFile()) return { _tag: "Refused", file, why: "is not a regular file" }
    if (stat.size > 1024 * 1024) return { _tag: "Refused", file, why: "is larger than 1 MiB" }
    text = readRegularTextSync(file, 1024 * 1024)
  } catch (cause) {
    return { _tag: "Refused", file, why: `cannot be read (${firstLineOf(cause)})` }
  }
  const envelope = decodeEnvelope(text)
  if (Either.isLeft(envelope)) return { _tag: "Refused", file, why: "holds no list of approvals" }
  const rows = envelope.right.approvals.map((row): ProjectRow => {
    const scope = decodeScope(row)
    if (Either.isLeft(scope)) return { _tag: "Unknown", text: squashed(JSON.stringify(row) ?? String(row), 80) }
    const known = scope.right as Scope
    return { _tag: "Scope", scope: known, why: importRefusal(known, project, read) }
  })
  return { _tag: "Rows", file, rows }
}

/** The rows that may be imported. */
export const importable = (rows: ReadonlyArray<ProjectRow>): ReadonlyArray<Scope> =>
  rows.flatMap((row) => (row._tag === "Scope" && row.why === undefined ? [row.scope] : []))
