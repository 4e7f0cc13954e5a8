// Files whose content is likely a secret (issue 43): read only with a question, even inside the
// project, in every mode but `allow`, and left out of grep's and glob's walks. By name: the
// built-in names below cost nothing; the configuration's `secrets:` globs are matched by
// picomatch, loaded (with the search tools' libraries) only when there are such globs.
import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import { projectTargetOf, within } from "../lib/RealPath"
import { globMatcher } from "./GlobMatch"

/**
 * The built-in names: `.env` and `.env.*`, private keys and certificates (`*.pem`, `*.key`,
 * `id_rsa*`, `id_ed25519*`, `id_ecdsa*`, `id_dsa*`), and the files package managers and tools
 * keep tokens in (`.npmrc`, `.netrc`, `.pypirc`, `.pgpass`), in any case: `.ENV` is `.env` where
 * the file system ignores case, as on macOS.
 */
const SECRET_NAME =
  /^(?:\.env(?:\..+)?|.+\.(?:pem|key)|id_(?:rsa|ed25519|ecdsa|dsa)(?:[._-].*)?|\.npmrc|\.netrc|\.pypirc|\.pgpass)$/i

/** Whether a file's name is one of the built-in secret names (any directory part is ignored). */
export const looksSecret = (file: string): boolean => SECRET_NAME.test(path.basename(file))

/**
 * The line a search ends with when it left files out because they look secret: how many, and
 * how to get at one (`what`: "not searched", "not listed").
 */
export const secretsLeftOut = (count: number, what: string): string =>
  `[${count} file${count === 1 ? "" : "s"} that look${count === 1 ? "s" : ""} secret (.env, keys…) ${what}; ` +
  "read_file asks the user before reading one]"

/** Which files of one project look secret: the built-in names and the configuration's globs. */
export interface SecretFiles {
  /**
   * Whether `file` (absolute, as found) looks secret by its name or its path in the project; for
   * the configuration's globs, its path where it really is counts too (its folder's links followed).
   */
  readonly test: (file: string) => boolean
  /**
   * Why reading `file` (relative to the project, or absolute) is reading a secret, e.g.
   * "`.env` looks like it holds secrets"; undefined when it is not. The name as written and
   * the file it really leads to (every link followed) both count; a folder never does.
   */
  readonly reason: (file: string) => string | undefined
}

type PathTest = (relative: string) => boolean

/** The configuration's globs, compiled once per list and kept for the run. */
const compiled = new Map<string, Promise<PathTest>>()

const globsTest = (globs: ReadonlyArray<string>): Promise<PathTest> => {
  const key = JSON.stringify(globs)
  const known = compiled.get(key)
  if (known !== undefined) return known
  // a glob picomatch cannot compile still names the one path it spells
  const each = (glob: string): Promise<PathTest> =>
    globMatcher(glob).catch(() => (relative: string) => relative === glob.replace(/^\.\//, ""))
  const made = Promise.all(globs.map(each)).then((tests) => (relative: string) => tests.some((test) => test(relative)))
  compiled.set(key, made)
  return made
}

const toPosix = (p: string): string => (path.sep === "/" ? p : p.split(path.sep).join("/"))

/** `file` relative to `dir` with `/` between names when it lies inside it; else its name alone. */
const relativeIn = (dir: string, file: string): string =>
  within(dir, file) && file !== dir ? toPosix(path.relative(dir, file)) : path.basename(file)

/** How a file is named in a question: relative to `dir` when it lies inside it; else whole. */
const shownIn = (dir: string, file: string): string =>
  within(dir, file) && file !== dir ? toPosix(path.relative(dir, file)) : file

const isFolder = (file: string): boolean => {
  try {
    return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() === true
  } catch {
    return false
  }
}

/** The test of `cwd`'s files, given the configuration's globs compiled (or none). */
export const secretFilesWith = (cwd: string, configured: PathTest | undefined): SecretFiles => {
  const project = path.resolve(cwd)
  const byName = (file: string, dir: string): boolean =>
    looksSecret(file) || (configured !== undefined && configured(relativeIn(dir, file)))
  // a glob names a path in the project: a file found through a link (`conf/` → `config/`) is
  // tested where it really is too, its folder resolved once per folder
  const realFolders = new Map<string, string>()
  let realRoot: string | undefined
  const realProject = (): string => (realRoot ??= projectTargetOf(project, ".").real)
  const atItsRealPlace = (file: string): boolean => {
    const folder = path.dirname(file)
    let real = realFolders.get(folder)
    if (real === undefined) {
      real = projectTargetOf(project, folder).real
      realFolders.set(folder, real)
    }
    return byName(path.join(real, path.basename(file)), realProject())
  }
  return {
    test: (file) => {
      const found = path.resolve(cwd, file)
      return byName(found, project) || (configured !== undefined && atItsRealPlace(found))
    },
    reason: (file) => {
      const written = path.resolve(cwd, file)
      const real = projectTargetOf(cwd, file).real
      if (isFolder(real)) return undefined
      const realSecret = byName(real, realProject())
      if (!realSecret && !byName(written, project)) return undefined
      const name = shownIn(project, written)
      const target = shownIn(realProject(), real)
      return realSecret && real !== written && target !== name
        ? `\`${name}\` leads to \`${target}\`, which looks like it holds secrets`
        : `\`${name}\` looks like it holds secrets`
    }
  }
}

/** What a test of secret files is made from: enough to make it again in grep's and glob's worker thread. */
export interface SecretSource {
  readonly cwd: string
  readonly globs: ReadonlyArray<string>
}

/** The source of each test made by `secretFilesOf`, which a function alone cannot carry to another thread. */
const sources = new WeakMap<(file: string) => boolean, SecretSource>()

/** What the `test` of a `secretFilesOf` was made from; undefined for any other function. */
export const secretSourceOf = (test: (file: string) => boolean): SecretSource | undefined => sources.get(test)

const madeFrom = (files: SecretFiles, source: SecretSource): SecretFiles => {
  sources.set(files.test, source)
  return files
}

/** The secret files of the project `cwd`: the built-in names, and `globs` (the `secrets:` key) when there are any. */
export const secretFilesOf = (cwd: string, globs: ReadonlyArray<string>): Effect.Effect<SecretFiles> =>
  globs.length === 0
    ? Effect.sync(() => madeFrom(secretFilesWith(cwd, undefined), { cwd, globs }))
    : Effect.map(
      Effect.promise(() => globsTest(globs)),
      (configured) => madeFrom(secretFilesWith(cwd, configured), { cwd, globs })
    )

/** The test `secretFilesOf` made from `source`, made again (in the search worker). */
export const secretTestOf = async (source: SecretSource): Promise<(file: string) => boolean> =>
  secretFilesWith(source.cwd, source.globs.length === 0 ? undefined : await globsTest(source.globs)).test
