// Reusable "always" answers kept per project in `.mm/permissions.json` (docs/how-to/approvals.md),
// so that `npm test` approved today is not asked again tomorrow, in the terminal, `mm -p` or
// `mm acp`. With sessions off they are kept in memory for the run only. The file is read each
// time it is needed (another mm may have changed it), written whole and atomically (0600 in a
// 0700 directory), and trusted whole or not at all: one that does not decode exactly is refused
// with one line, ignored, and never overwritten.
import * as fs from "node:fs"
import * as path from "node:path"

import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Either from "effect/Either"
import * as ParseResult from "effect/ParseResult"
import * as Schema from "effect/Schema"

import { AppConfig } from "../config/Config"
import { fsyncDir, tempNameOf, unlinkQuietly } from "../lib/DurableFiles"
import { firstLineOf } from "../lib/OneLine"
import type { Scope } from "./ApprovalScope"

const PERMISSIONS_FILE = path.join(".mm", "permissions.json")

const Absolute = Schema.String.pipe(
  Schema.filter((p) => path.isAbsolute(p), { message: () => "a path that is not absolute" })
)
const Word = Schema.String.pipe(Schema.filter((w) => !w.includes("\0")))

const ScopeSchema = Schema.Union(
  Schema.TaggedStruct("CommandPrefix", { words: Schema.NonEmptyArray(Word) }),
  Schema.TaggedStruct("ExactCommand", { command: Schema.NonEmptyTrimmedString }),
  Schema.TaggedStruct("File", { path: Absolute }),
  Schema.TaggedStruct("Project", { dir: Absolute }),
  Schema.TaggedStruct("Tool", { name: Schema.NonEmptyString })
)

const FileSchema = Schema.Struct({ version: Schema.Literal(1), approvals: Schema.Array(ScopeSchema) })

/** The file's decoder: exactly this shape, nothing more. */
const decodeFile = Schema.decodeUnknownEither(Schema.parseJson(FileSchema), { onExcessProperty: "error" })

export interface RememberedState {
  /** What applies: empty when the file is refused. */
  readonly scopes: ReadonlyArray<Scope>
  /** Where they are kept: the file's path, or `in memory (sessions are off)`. */
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
}

export class RememberedApprovals extends Context.Tag("mm/RememberedApprovals")<
  RememberedApprovals,
  RememberedApprovalsShape
>() {}

const sameScope = (a: Scope, b: Scope): boolean => JSON.stringify(a) === JSON.stringify(b)

/** A Project scope must be this project: one that names another directory was edited in. */
const belongsTo = (project: string) => (scope: Scope): boolean => scope._tag !== "Project" || scope.dir === project

const readFileOf = (project: string): RememberedState => {
  const file = path.join(project, PERMISSIONS_FILE)
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
    if (stat.size > 1024 * 1024) return refused("is larger than 1 MiB")
    text = fs.readFileSync(file, "utf8")
  } catch (cause) {
    return refused(`cannot be read (${firstLineOf(cause instanceof Error ? cause.message : String(cause))})`)
  }
  const decoded = decodeFile(text)
  if (Either.isLeft(decoded)) {
    const [issue] = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)
    const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`
    const what = issue === undefined ? "" : firstLineOf(issue.message).slice(0, 120)
    return refused(`is not a valid permissions file (${what}${where})`)
  }
  const scopes = decoded.right.approvals as ReadonlyArray<Scope>
  if (!scopes.every(belongsTo(project))) return refused("names another project")
  return { scopes, where: file, problem: undefined }
}

/** Writes the file whole: a synced temporary file (0600) renamed over it, in `.mm/` (0700). */
const writeFileOf = (project: string, scopes: ReadonlyArray<Scope>): void => {
  const dir = path.join(project, ".mm")
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  const target = path.join(project, PERMISSIONS_FILE)
  const temp = path.join(dir, tempNameOf(path.basename(target)))
  const fd = fs.openSync(temp, "wx", 0o600)
  try {
    fs.fchmodSync(fd, 0o600)
    fs.writeFileSync(fd, JSON.stringify({ version: 1, approvals: scopes }, null, 2) + "\n")
    fs.fsyncSync(fd)
  } catch (cause) {
    fs.closeSync(fd)
    unlinkQuietly(temp)
    throw cause
  }
  fs.closeSync(fd)
  try {
    fs.renameSync(temp, target)
  } catch (cause) {
    unlinkQuietly(temp)
    throw cause
  }
  fsyncDir(dir)
}

const onDisk = (): RememberedApprovalsShape => ({
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
        return `approval kept for this run only: cannot write ${now.where} (${
          firstLineOf(cause instanceof Error ? cause.message : String(cause))
        })`
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
        return Either.left(
          `cannot write ${now.where}: ${firstLineOf(cause instanceof Error ? cause.message : String(cause))}`
        )
      }
    })
  )
})

const inMemory = (): RememberedApprovalsShape => {
  const kept = new Map<string, ReadonlyArray<Scope>>()
  const where = "in memory (sessions are off: forgotten when mm exits)"
  return {
    read: (project) => Effect.sync(() => ({ scopes: kept.get(project) ?? [], where, problem: undefined })),
    add: (project, scope) =>
      Effect.sync(() => {
        const now = kept.get(project) ?? []
        if (!now.some((s) => sameScope(s, scope))) kept.set(project, [...now, scope])
        return undefined
      }),
    remove: (project, n) =>
      Effect.sync(() => {
        const now = kept.get(project) ?? []
        const scope = now[n - 1]
        if (!Number.isInteger(n) || scope === undefined) return Either.left(`no remembered approval ${n}`)
        kept.set(project, now.filter((_, i) => i !== n - 1))
        return Either.right(scope)
      })
  }
}

/** On disk with sessions on (`sessions.enabled`), in memory otherwise. */
export const makeRememberedApprovals = Effect.map(
  AppConfig,
  ({ config }) => (config.sessions.enabled ? onDisk() : inMemory())
)
