// The files of a folder as grep and glob see them: `.gitignore` rules respected (every
// .gitignore from the project's root down, and .git/info/exclude), `.git/` and `.mm/` never
// entered, symbolic links never followed, entries in name order. The walk gives the event
// loop back every few hundred entries and stops when told (at the search's time limit).
// `walkFiles` runs in the search worker (SearchWorker.ts), never on mm's main thread.
import * as fs from "node:fs"
import * as path from "node:path"

import type { Ignore } from "ignore"

import { gitRoot } from "../lib/Git"
import { readRegularTextSync } from "../lib/RegularFiles"

type IgnoreFactory = (options?: { ignorecase?: boolean }) => Ignore

let searchLibs: Promise<typeof import("./SearchLibs")> | undefined

/** The search tools' libraries (dist/mm-search.cjs), loaded on the first search rather than at start-up. */
export const loadSearchLibs = (): Promise<typeof import("./SearchLibs")> => (searchLibs ??= import("./SearchLibs"))

const loadIgnore = (): Promise<IgnoreFactory> => loadSearchLibs().then((libs) => libs.ignore as IgnoreFactory)

/** The folders never searched, whatever the ignore files say. */
const NEVER = new Set([".git", ".mm"])

/**
 * Why a search may not start at `start` (relative to the project `cwd`, else whole): a
 * path inside `.git/` or `.mm/`; undefined when it may.
 */
export const neverSearched = (cwd: string, start: string, shown: string): string | undefined => {
  const relative = path.relative(cwd, start)
  const inside = !relative.startsWith("..") && !path.isAbsolute(relative)
  const names = (inside ? relative : start).split(path.sep)
  const found = names.find((name) => NEVER.has(name))
  return found === undefined ? undefined : `${shown} is inside ${found}/, which is never searched`
}

/** How a path is shown: relative to the project when inside it, else whole. */
export const shownPathOf = (cwd: string, file: string): string => {
  const relative = path.relative(cwd, file)
  return relative.startsWith("..") || path.isAbsolute(relative) ? file : relative.split(path.sep).join("/")
}

/** How many entries are looked at before the event loop is given back. */
const BATCH = 512

interface Rules {
  /** Absolute folder the patterns are relative to. */
  readonly base: string
  readonly ignore: Ignore
}

interface WalkedFile {
  /** Absolute. */
  readonly file: string
  /** Relative to the folder walked, with `/` between names. */
  readonly relative: string
}

interface WalkOptions {
  /** The project's folder: where .gitignore files are looked for above `start` when there is no repository. */
  readonly projectDir: string
  /** Called for each file; returning false stops the walk. */
  readonly onFile: (file: WalkedFile) => boolean
  readonly cancelled: () => boolean
}

/** An ignore file larger than this is not read (its rules are left out). */
const IGNORE_FILE_MAX_BYTES = 4 * 1024 * 1024

const readRules = (make: IgnoreFactory, dir: string, file: string): Rules | undefined => {
  let text: string
  try {
    // a regular file only, of a sane size: a .gitignore committed as a link to /dev/zero or /dev/tty,
    // or left as a FIFO, would hold the search thread in a read that nothing can end
    text = readRegularTextSync(path.join(dir, file), IGNORE_FILE_MAX_BYTES)
  } catch {
    return undefined
  }
  return { base: dir, ignore: make().add(text) }
}

const toPosix = (p: string): string => (path.sep === "/" ? p : p.split(path.sep).join("/"))

/** Whether the deepest rules that say anything about `file` ignore it (git's precedence). */
const ignoredBy = (rules: ReadonlyArray<Rules>, file: string, isDir: boolean): boolean => {
  for (let i = rules.length - 1; i >= 0; i--) {
    const relative = toPosix(path.relative(rules[i].base, file))
    if (relative === "" || relative.startsWith("..")) continue
    const result = rules[i].ignore.test(isDir ? `${relative}/` : relative)
    if (result.ignored) return true
    if (result.unignored) return false
  }
  return false
}

/** Rules in force in a folder, with the folder's path relative to their base ("" at the base). */
interface ActiveRules {
  readonly rules: Rules
  readonly at: string
}

/** `ignoredBy` for an entry `name` of the folder the rules are active in, without computing paths anew. */
const ignoredHere = (active: ReadonlyArray<ActiveRules>, name: string, isDir: boolean): boolean => {
  for (let i = active.length - 1; i >= 0; i--) {
    const relative = active[i].at === "" ? name : `${active[i].at}/${name}`
    const result = active[i].rules.ignore.test(isDir ? `${relative}/` : relative)
    if (result.ignored) return true
    if (result.unignored) return false
  }
  return false
}

/**
 * The rules that apply inside `start`: .git/info/exclude and the .gitignore files of the
 * folders from the repository's root (else the project's folder `top`) down to `start`'s
 * parent. A folder named although those rules ignore it is searched under its own rules only.
 */
const rulesAbove = (make: IgnoreFactory, start: string, top: string): Array<Rules> => {
  const root = gitRoot(start)
  const rules: Array<Rules> = []
  const exclude = root === undefined ? undefined : readRules(make, path.join(root, ".git", "info"), "exclude")
  if (root !== undefined && exclude !== undefined) rules.push({ ...exclude, base: root })
  const highest = root ?? top
  const inside = path.relative(highest, start)
  if (inside === "" || inside.startsWith("..") || path.isAbsolute(inside)) return rules
  const folders: Array<string> = []
  for (let at = path.dirname(start);; at = path.dirname(at)) {
    folders.unshift(at)
    if (at === highest || path.dirname(at) === at) break
  }
  for (const folder of folders) {
    const found = readRules(make, folder, ".gitignore")
    if (found !== undefined) rules.push(found)
  }
  return ignoredBy(rules, start, true) ? [] : rules
}

const yieldToLoop = () => new Promise<void>((resolve) => setImmediate(resolve))

/** Walks the files under `start` (an absolute folder); resolves with whether it went through all of them. */
export const walkFiles = async (start: string, options: WalkOptions): Promise<boolean> => {
  const make = await loadIgnore()
  const above = rulesAbove(make, start, options.projectDir).map((rules) => ({
    rules,
    at: toPosix(path.relative(rules.base, start))
  }))
  const stack: Array<{ dir: string; relative: string; active: ReadonlyArray<ActiveRules> }> = [
    { dir: start, relative: "", active: above }
  ]
  let seen = 0
  while (stack.length > 0) {
    const { active: outer, dir, relative } = stack.pop()!
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      continue
    }
    const own = entries.some((e) => e.name === ".gitignore") ? readRules(make, dir, ".gitignore") : undefined
    const active = own === undefined ? outer : [...outer, { rules: own, at: "" }]
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    const subfolders: Array<fs.Dirent> = []
    for (const entry of entries) {
      if (++seen % BATCH === 0) {
        await yieldToLoop()
        if (options.cancelled()) return false
      }
      if (entry.isDirectory()) {
        if (!NEVER.has(entry.name) && !ignoredHere(active, entry.name, true)) subfolders.push(entry)
      } else if (entry.isFile() && !ignoredHere(active, entry.name, false)) {
        const file = {
          file: path.join(dir, entry.name),
          relative: relative === "" ? entry.name : `${relative}/${entry.name}`
        }
        if (!options.onFile(file)) return false
      }
    }
    // popped last in, so pushed in reverse: folders are walked in name order
    for (let i = subfolders.length - 1; i >= 0; i--) {
      const name = subfolders[i].name
      stack.push({
        dir: path.join(dir, name),
        relative: relative === "" ? name : `${relative}/${name}`,
        active: active.map((a) => ({ rules: a.rules, at: a.at === "" ? name : `${a.at}/${name}` }))
      })
    }
  }
  return true
}
