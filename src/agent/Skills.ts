import * as fs from "node:fs"
import * as path from "node:path"

import * as Effect from "effect/Effect"
import * as Either from "effect/Either"

import { readRegularTextSync } from "../lib/RegularFiles"

export interface Skill {
  readonly name: string
  readonly description: string
  /** Absolute path of the skill's SKILL.md. */
  readonly path: string
}

interface LoadedSkills {
  readonly skills: ReadonlyArray<Skill>
  readonly warnings: ReadonlyArray<string>
}

const SKILL_FILE = "SKILL.md"
/** A SKILL.md larger than this is not read: only its front matter is used. */
const SKILL_MAX_BYTES = 1024 * 1024

/** `~` and `~/…` are the home directory; other relative paths are relative to `cwd`. */
const resolveSkillsDir = (dir: string, cwd: string, home: string): string =>
  dir === "~" ? home : dir.startsWith("~/") ? path.join(home, dir.slice(2)) : path.resolve(cwd, dir)

/** Parsed SKILL.md files by path, reused while their mtime and size stay the same. */
const cache = new Map<
  string,
  { mtimeMs: number; size: number; parsed: Either.Either<{ name: string; description: string }, string> }
>()

type ParseSkillFile = typeof import("./SkillFile").parseSkillFile

/** The front matter's reader (and the YAML parser), loaded only when there is a skill file to read. */
const skillFileReader = Effect.promise(() => import("./SkillFile"))

const readSkillFile = (
  parseSkillFile: ParseSkillFile,
  file: string,
  stat: fs.Stats
): Either.Either<{ name: string; description: string }, string> => {
  const cached = cache.get(file)
  if (cached !== undefined && cached.mtimeMs === stat.mtimeMs && cached.size === stat.size) return cached.parsed
  let parsed: Either.Either<{ name: string; description: string }, string>
  try {
    parsed = parseSkillFile(readRegularTextSync(file, SKILL_MAX_BYTES))
  } catch (cause) {
    parsed = Either.left(`cannot be read (${(cause as { code?: string }).code ?? String(cause)})`)
  }
  cache.set(file, { mtimeMs: stat.mtimeMs, size: stat.size, parsed })
  return parsed
}

const statOrUndefined = (file: string): fs.Stats | undefined => {
  try {
    return fs.statSync(file)
  } catch {
    return undefined
  }
}

/** The SKILL.md files directly under one skills directory, sorted by folder name. */
const skillFilesIn = (dir: string, warnings: Array<string>): Array<{ file: string; stat: fs.Stats }> => {
  let entries: Array<fs.Dirent>
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true })
  } catch (cause) {
    const code = (cause as { code?: string }).code
    if (code !== "ENOENT" && code !== "ENOTDIR") {
      warnings.push(`cannot read the skills directory ${dir} (${code ?? String(cause)})`)
    }
    return []
  }
  const found: Array<{ file: string; stat: fs.Stats }> = []
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue
    const file = path.join(dir, entry.name, SKILL_FILE)
    const stat = statOrUndefined(file)
    if (stat?.isFile() === true) found.push({ file, stat })
  }
  return found
}

/** The SKILL.md files of every directory, each directory once, in the order given. */
const skillFilesOf = (dirs: ReadonlyArray<string>, warnings: Array<string>) => {
  const seenDirs = new Set<string>()
  const found: Array<{ file: string; stat: fs.Stats }> = []
  for (const dir of dirs) {
    if (seenDirs.has(dir)) continue
    seenDirs.add(dir)
    found.push(...skillFilesIn(dir, warnings))
  }
  return found
}

/** The skills of the files found (the first file wins on a duplicate name). */
const skillsOf = (
  parseSkillFile: ParseSkillFile,
  files: ReadonlyArray<{ file: string; stat: fs.Stats }>,
  warnings: Array<string>
): Array<Skill> => {
  const skills: Array<Skill> = []
  const byName = new Map<string, Skill>()
  for (const { file, stat } of files) {
    const parsed = readSkillFile(parseSkillFile, file, stat)
    if (Either.isLeft(parsed)) {
      warnings.push(`skipped skill ${file}: ${parsed.left}`)
      continue
    }
    const earlier = byName.get(parsed.right.name)
    if (earlier !== undefined) {
      warnings.push(`skipped skill ${file}: the name "${parsed.right.name}" is already used by ${earlier.path}`)
      continue
    }
    const skill: Skill = { ...parsed.right, path: file }
    byName.set(skill.name, skill)
    skills.push(skill)
  }
  return skills
}

/**
 * Lists the skills of `dirs` (first directory wins on a duplicate name). Never fails:
 * a malformed skill or an unreadable directory becomes a one-line warning.
 */
export const loadSkills = (
  dirs: ReadonlyArray<string>,
  cwd: string,
  home: string
): Effect.Effect<LoadedSkills> =>
  Effect.suspend(() => {
    const warnings: Array<string> = []
    const files = skillFilesOf(dirs.map((d) => resolveSkillsDir(d, cwd, home)), warnings)
    if (files.length === 0) return Effect.succeed({ skills: [], warnings })
    return Effect.map(skillFileReader, ({ parseSkillFile }) => ({
      skills: skillsOf(parseSkillFile, files, warnings),
      warnings
    }))
  }).pipe(Effect.withSpan("Skills.load"))

/** A section for the end of the system prompt (join it with a blank line); "" when there is no skill. */
export const skillsPrompt = (skills: ReadonlyArray<Skill>): string =>
  skills.length === 0
    ? ""
    : [
      "# Skills",
      "",
      "A skill is a file of instructions for one kind of task. When a skill below fits the task at hand, " +
      "read its SKILL.md with read_file before you start, and follow it. Paths a skill mentions are relative to its folder.",
      "",
      ...skills.map((skill) => `- ${skill.name}: ${skill.description}\n  file: ${skill.path}`)
    ].join("\n")
