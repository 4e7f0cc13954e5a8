// Reusable "always" answers, kept in the user's own state rather than in the project
// (docs/how-to/approvals.md): `$XDG_STATE_HOME/mm/projects/<hash of the project's real
// path>/permissions.json`, where nothing a repository ships can write. So `npm test` approved
// today is not asked again tomorrow, in the terminal, `mm -p` or `mm acp`, sessions on or off.
// The file is read each time it is needed (another mm may have changed it), written whole and
// atomically (0600 in 0700 directories), names the project it belongs to, and is trusted whole
// or not at all: one that does not decode exactly, names another project, or others may write
// is refused with one line, ignored, and never overwritten. A `.mm/permissions.json` in the
// project grants nothing: it is only named (`ignoredLine`) and shown for import
// (ProjectApprovals.ts).
import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { commitTemp, tempNameFor } from "../lib/DurableFiles"
import { firstLineOf } from "../lib/OneLine"
import { realPathOf } from "../lib/RealPath"
import { othersMayWrite, projectStateDir, shownHomePath } from "../lib/UserState"
import type { Scope } from "./ApprovalScope"

/** Where earlier versions of mm kept them, in the project: never read for granting anything. */
export const PROJECT_PERMISSIONS_FILE = path.join(".mm", "permissions.json")

const Absolute = Schema.String.pipe(
  Schema.filter((p) => path.isAbsolute(p), { message: () => "a path that is not absolute" })
)
const Word = Schema.String.pipe(Schema.filter((w) => !w.includes("\0")))

/** One remembered answer, as it is written: exactly a `Scope`. */
export const ScopeSchema = Schema.Union(
  Schema.TaggedStruct("CommandPrefix", { words: Schema.NonEmptyArray(Word) }),
  Schema.TaggedStruct("ExactCommand", { command: Schema.NonEmptyTrimmedString }),
  Schema.TaggedStruct("File", { path: Absolute }),
  Schema.TaggedStruct("Project", { dir: Absolute }),
  Schema.TaggedStruct("Tool", { name: Schema.NonEmptyString }),
  Schema.TaggedStruct("Domain", { host: Schema.NonEmptyTrimmedString })
)

const FileSchema = Schema.Struct({
  version: Schema.Literal(1),
  /** The real path of the project the answers were given in. */
  project: Absolute,
  approvals: Schema.Array(ScopeSchema)
})

/** The file's decoder: exactly this shape, nothing more. */
const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(FileSchema), { onExcessProperty: "error" })

export interface RememberedState {
  /** What applies: empty when the file is refused. */
  readonly scopes: ReadonlyArray<Scope>
  /** Where they are kept: the file's path (which may not exist yet). */
  readonly where: string
  /** The one line that says why the file was refused; undefined when it was read (or is absent). */
  readonly problem: string | undefined
}

export interface RememberedApprovalsShape {
  readonly read: (project: string) => Effect.Effect<RememberedState>
  /** Keeps one more; a line saying why it could not be saved, else undefined. */
  readonly add: (project: string, scope: Scope) => Effect.Effect<string | undefined>
  /** Forgets the Nth (from 1, as `/permissions` lists them): the scope removed, or why not. */
  readonly remove: (project: string, n: number) => Effect.Effect<Either.Either<Scope, string>>
  /** The line saying the project's own `.mm/permissions.json` is ignored; undefined when it has none. */
  readonly ignoredLine: (project: string) => Effect.Effect<string | undefined>
}

export class RememberedApprovals extends Context.Tag("mm/RememberedApprovals")<
  RememberedApprovals,
  RememberedApprovalsShape
>() {}

export const sameScope = (a: Scope, b: Scope): boolean => JSON.stringify(a) === JSON.stringify(b)

const realOf = (project: string): string => {
  try {
    return realPathOf(project)
  } catch {
    return path.resolve(project)
  }
}

/** A Project scope must be this project (by its real path): one that names another directory was edited in. */
const belongsTo = (real: string) => (scope: Scope): boolean => scope._tag !== "Project" || realOf(scope.dir) === real

/** The file of remembered approvals of `project`, under the user's state. */
export const rememberedFileOf = (project: string, env: NodeJS.ProcessEnv = process.env): string =>
  path.join(projectStateDir(project, env), "permissions.json")

const readFileOf = (project: string): RememberedState => {
  const file = rememberedFileOf(project)
  const refused = (why: string): RememberedState => ({
    scopes: [],
    where: file,
    problem: `remembered approvals not used: ${file} ${why}; fix or delete it`
  })
  let text: string
  try {
    const stat = fs.lstatSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return { scopes: [], where: file, problem: undefined }
    if (!stat.isFile()) return refused("is not a regular file")
    const unsafe = othersMayWrite(stat) ?? othersMayWrite(fs.statSync(path.dirname(file)))
    if (unsafe !== undefined) return refused(unsafe)
    if (stat.size > 1024 * 1024) return refused("is larger than 1 MiB")
    text = fs.readFileSync(file, "utf8")
  } catch (cause) {
    return refused(`cannot be read (${firstLineOf(cause)})`)
  }
  const decoded = decodeFile(text)
  if (Either.isLeft(decoded)) {
    const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
    const what = issue === undefined ? "" : firstLineOf(issue.message).slice(0, 120)
    return refused(`is not a valid permissions file (${what}${where})`)
  }
  const real = realOf(project)
  if (decoded.right.project !== real) return refused(`names another project (${decoded.right.project})`)
  const scopes = decoded.right.approvals as ReadonlyArray<Scope>
  if (!scopes.every(belongsTo(real))) return refused("names another project")
  return { scopes, where: file, problem: undefined }
}

/** Writes the file whole: a synced temporary file (0600) renamed over it, its directories made 0700. */
const writeFileOf = (project: string, scopes: ReadonlyArray<Scope>): void => {
  const target = rememberedFileOf(project)
  fs.mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 })
  const temp = tempNameFor(target)
  const fd = fs.openSync(temp, "wx", 0o600)
  const text = JSON.stringify({ version: 1, project: realOf(project), approvals: scopes }, null, 2) + "\n"
  commitTemp(fd, temp, target, new TextEncoder().encode(text), 0o600)
}

/** Whether the project holds a `.mm/permissions.json`; no when `.mm` is a file or cannot be looked into. */
const holdsProjectPermissions = (project: string): boolean => {
  try {
    return fs.lstatSync(path.join(project, PROJECT_PERMISSIONS_FILE), { throwIfNoEntry: false }) !== undefined
  } catch {
    return false
  }
}

/** Says that the project's own `.mm/permissions.json`, if it has one, grants nothing. */
const ignoredLineOf = (project: string): string | undefined =>
  holdsProjectPermissions(project)
    ? `${PROJECT_PERMISSIONS_FILE} in this project is ignored: approvals are kept in ${
      shownHomePath(rememberedFileOf(project))
    }; /permissions import shows its rows`
    : undefined

export const makeRememberedApprovals: Effect.Effect<RememberedApprovalsShape> = Effect.sync(() => ({
  read: Effect.fn("RememberedApprovals.read")((project: string) => Effect.sync(() => readFileOf(project))),
  add: Effect.fn("RememberedApprovals.add")((project: string, scope: Scope) =>
    Effect.sync(() => {
      const now = readFileOf(project)
      if (now.problem !== undefined) return `${now.problem} (this approval is kept for this run only)`
      if (now.scopes.some((s) => sameScope(s, scope))) return undefined
      try {
        writeFileOf(project, [...now.scopes, scope])
        return undefined
      } catch (cause) {
        return `approval kept for this run only: cannot write ${now.where} (${firstLineOf(cause)})`
      }
    })
  ),
  remove: Effect.fn("RememberedApprovals.remove")((project: string, n: number) =>
    Effect.sync((): Either.Either<Scope, string> => {
      const now = readFileOf(project)
      if (now.problem !== undefined) return Either.left(now.problem)
      const scope = now.scopes[n - 1]
      if (!Number.isInteger(n) || scope === undefined) return Either.left(`no remembered approval ${n}`)
      try {
        writeFileOf(project, now.scopes.filter((_, i) => i !== n - 1))
        return Either.right(scope)
      } catch (cause) {
        return Either.left(`cannot write ${now.where}: ${firstLineOf(cause)}`)
      }
    })
  ),
  ignoredLine: Effect.fn("RememberedApprovals.ignoredLine")((project: string) =>
    Effect.sync(() => ignoredLineOf(project))
  )
}))
