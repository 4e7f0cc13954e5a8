/**
 * The user's own slash commands: Markdown prompt files. `/NAME args` sends the file's body with
 * `$ARGUMENTS` and `$1`…`$9` filled in. They are read from the project's `.mm/commands/` (once
 * the project is trusted), then the user's `$XDG_CONFIG_HOME/mm/commands/`, and with
 * `commands.claude` from Claude Code's `.claude/commands/` and `~/.claude/commands/` too; the
 * first folder that names a command wins, and a built-in command's name always wins. A file
 * in a subfolder is `folder:name`. What goes wrong with a file is one line (`notes`); the
 * other files are read all the same.
 *
 * The project's files are trusted as they are (`projectCommands`): their names and contents are
 * hashed, and the trust store (config/TrustStore.ts) keeps the hash the user said yes to; a
 * file added, removed or changed is asked about again (cli/TrustQuestion.ts, acp/ProjectTrustAsk.ts).
 *
 * Front matter (`description`, `argument-hint`) is read by CommandFile.ts, loaded only when a
 * file has some, so that a folder of plain prompts never loads the YAML parser.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import * as Effect from "effect/Effect"

import type { LoadedConfig } from "../config/Config"
import { trustsCommands } from "../config/TrustStore"
import { nodeCrypto } from "../lib/NodeModules"
import { readRegularSync, readRegularTextSync } from "../lib/RegularFiles"
import { shownHomePath, userConfigDir } from "../lib/UserState"
import { SLASH_COMMANDS } from "./SlashCommands"

export interface UserCommand {
  /** Without its slash: `review`, `git:commit`. */
  readonly name: string
  /** What it does: the front matter's `description`, else the body's first line. */
  readonly description: string
  /** Its argument as typed (`argument-hint`); empty for none. */
  readonly hint: string
  /** The prompt, without its front matter. */
  readonly body: string
  /** Where it was read, as the user reads a path (`.mm/commands/review.md`, `~/.config/…`). */
  readonly shown: string
}

export interface UserCommands {
  readonly commands: ReadonlyArray<UserCommand>
  /** One line for each file skipped, and for a project's folder left unread until trusted. */
  readonly notes: ReadonlyArray<string>
}

/** Where they are looked for, and whether the project's folders may be read. */
export interface CommandPlaces {
  readonly cwd: string
  readonly home: string
  readonly env: NodeJS.ProcessEnv
  /** `commands.claude` in agent.yaml. */
  readonly claude: boolean
  /** Whether the project's commands are trusted (`projectTrusted`): asked only when it has command files. */
  readonly trusted: () => boolean
}

/** A command file larger than this is skipped: a prompt is never near it. */
const COMMAND_MAX_BYTES = 64 * 1024
/** How deep subfolders are read, and how many files at most, so that a huge tree costs nothing. */
const MAX_DEPTH = 3
const MAX_FILES = 500

/** One name part: letters, digits, `-` and `_`; parts joined by `:`. */
const NAME = /^[A-Za-z0-9][\w-]*(?::[A-Za-z0-9][\w-]*)*$/

const isCommandName = (name: string): boolean => NAME.test(name) && name.length <= 64

/** Every name and alias of the built-in commands, of any façade: none of them can be a file's. */
const BUILT_IN = new Set<string>(SLASH_COMMANDS.flatMap((command) => [command.name, ...command.aliases]))

interface Folder {
  readonly dir: string
  readonly project: boolean
}

const foldersOf = (places: CommandPlaces): ReadonlyArray<Folder> => [
  { dir: path.join(places.cwd, ".mm", "commands"), project: true },
  ...(places.claude ? [{ dir: path.join(places.cwd, ".claude", "commands"), project: true }] : []),
  { dir: path.join(userConfigDir(places.env, places.home), "commands"), project: false },
  ...(places.claude ? [{ dir: path.join(places.home, ".claude", "commands"), project: false }] : [])
]

const shownOf = (file: string, places: CommandPlaces): string => {
  const relative = path.relative(places.cwd, file)
  return !relative.startsWith("..") && !path.isAbsolute(relative) ? relative : shownHomePath(file, places.home)
}

/**
 * The `.md` files under `dir`, with the name each gives (`folder:name`); names are checked
 * later. `links`: whether a symbolic link is followed — not in a project's folder, where a
 * link could make a command of any file the user can read (`review.md -> ~/.aws/credentials`).
 */
const filesIn = (dir: string, links = true): ReadonlyArray<{ readonly file: string; readonly name: string }> => {
  const found: Array<{ file: string; name: string }> = []
  const walk = (at: string, parts: ReadonlyArray<string>) => {
    if (parts.length > MAX_DEPTH) return
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(at, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (found.length >= MAX_FILES || entry.name.startsWith(".")) continue
      const file = path.join(at, entry.name)
      if (!links && entry.isSymbolicLink()) continue
      if (entry.isDirectory()) walk(file, [...parts, entry.name])
      else if (entry.name.endsWith(".md")) found.push({ file, name: [...parts, entry.name.slice(0, -3)].join(":") })
    }
  }
  walk(dir, [])
  return found
}

/** A file's text, or why it was skipped. */
const readText = (file: string): { readonly text: string } | { readonly problem: string } => {
  try {
    return { text: readRegularTextSync(file, COMMAND_MAX_BYTES) }
  } catch (cause) {
    const code = (cause as { code?: string }).code
    const problem = code === "EFBIG"
      ? `larger than ${COMMAND_MAX_BYTES / 1024} KiB`
      : code === "ENOTREG"
      ? "not a regular file"
      : code ?? String(cause)
    return { problem }
  }
}

const startsWithFrontMatter = (text: string): boolean => /^\uFEFF?---[ \t]*\r?\n/.test(text)

/** The first line of the body that says something: the description of a file without one. */
const firstWords = (body: string): string => {
  const line = body.split(/\r?\n/).find((text) => text.trim() !== "") ?? ""
  const words = line.replace(/^#+\s*/, "").trim()
  return words.length > 80 ? `${words.slice(0, 79)}…` : words
}

/** The commands of every folder, in the order `/help` lists them (by name), and a line for each file skipped. */
export const loadUserCommands = Effect.fn("UserCommands.load")(function*(places: CommandPlaces) {
  const notes: Array<string> = []
  const byName = new Map<string, UserCommand>()
  let parse: typeof import("./CommandFile").parseCommandFile | undefined
  let trustedNow: boolean | undefined
  for (const folder of foldersOf(places)) {
    // a folder is listed once: a missing one costs one failed readdir
    const files = filesIn(folder.dir, !folder.project)
    // trust is asked only of a project that has command files (it may cost a hash)
    if (folder.project && files.length > 0 && !(trustedNow ??= places.trusted())) {
      notes.push(
        `commands: ${
          shownOf(folder.dir, places)
        } skipped — this project is not trusted (docs/how-to/custom-commands.md)`
      )
      continue
    }
    for (const { file, name } of files) {
      const shown = shownOf(file, places)
      if (!isCommandName(name)) {
        notes.push(`commands: ${shown} skipped — a name has letters, digits, - and _ only`)
        continue
      }
      if (BUILT_IN.has(name)) {
        notes.push(`commands: ${shown} skipped — /${name} is a built-in command`)
        continue
      }
      // an earlier folder (the project's, mm's own) already named it
      if (byName.has(name)) continue
      const read = readText(file)
      if ("problem" in read) {
        notes.push(`commands: ${shown} skipped — ${read.problem}`)
        continue
      }
      let fields = { description: "", hint: "", body: read.text }
      if (startsWithFrontMatter(read.text)) {
        parse ??= (yield* Effect.promise(() => import("./CommandFile"))).parseCommandFile
        const parsed = parse(read.text)
        if ("problem" in parsed) {
          notes.push(`commands: ${shown} skipped — ${parsed.problem}`)
          continue
        }
        fields = parsed
      }
      const body = fields.body.trim()
      const description = fields.description !== "" ? fields.description : firstWords(body)
      byName.set(name, { name, description, hint: fields.hint, body, shown })
    }
  }
  const commands = [...byName.values()].sort((a, b) => a.name.localeCompare(b.name))
  return { commands, notes } satisfies UserCommands
})

/** The project's command files as they stand: what the user is asked to trust. */
export interface ProjectCommands {
  /** The folder the trust is kept for: the project's `.mm/commands` (whether or not it exists). */
  readonly folder: string
  /** The folders that offer files, as shown: `.mm/commands`, `.claude/commands`. */
  readonly shown: ReadonlyArray<string>
  /** The commands they would offer, by name (a bad or built-in name left out). */
  readonly names: ReadonlyArray<string>
  /** The sha256 of their sorted relative paths and the sha256 of each file's bytes. */
  readonly hash: string
}

const contentHash = (file: string): string => {
  try {
    return nodeCrypto().createHash("sha256").update(readRegularSync(file, COMMAND_MAX_BYTES)).digest("hex")
  } catch (cause) {
    // a file that cannot be read is skipped: what is trusted is that it could not be
    return `unread:${(cause as { code?: string }).code ?? "error"}`
  }
}

/**
 * The command files of the project's folders, hashed; undefined when they have none (then no
 * file was read: one failed `readdir` per folder is all a project without commands costs).
 */
export const projectCommands = (places: Omit<CommandPlaces, "trusted">): ProjectCommands | undefined => {
  const folders = foldersOf({ ...places, trusted: () => false }).filter((folder) => folder.project)
  const found = folders.map((folder) => ({ folder, files: filesIn(folder.dir, false) }))
    .filter((entry) => entry.files.length > 0)
  if (found.length === 0) return undefined
  const names = new Set<string>()
  const entries: Array<readonly [string, string]> = []
  for (const { files } of found) {
    for (const { file, name } of files) {
      if (isCommandName(name) && !BUILT_IN.has(name)) names.add(name)
      entries.push([path.relative(places.cwd, file), contentHash(file)])
    }
  }
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
  return {
    folder: folders[0].dir,
    shown: found.map(({ folder }) => shownOf(folder.dir, { ...places, trusted: () => false })),
    names: [...names],
    hash: nodeCrypto().createHash("sha256").update(JSON.stringify(entries)).digest("hex")
  }
}

/** The places of a conversation in `cwd`, with the configuration in force. */
const placesOf = (loaded: LoadedConfig, cwd: string, env: NodeJS.ProcessEnv) => ({
  cwd,
  home: os.homedir(),
  env,
  claude: loaded.config.commands.claude
})

/**
 * The project's command files that wait for the user's trust: undefined when it has none, when
 * `--trust` or `MM_TRUST_PROJECT=1` trusts the project for this run, or when the trust store
 * holds the hash of these very files.
 */
export const commandsWaiting = (
  loaded: LoadedConfig,
  cwd: string,
  env: NodeJS.ProcessEnv = process.env
): ProjectCommands | undefined => {
  if (loaded.trustAll === true) return undefined
  const offered = projectCommands(placesOf(loaded, cwd, env))
  // files that would offer no command (bad names only) have nothing to trust: read, they are skipped
  if (offered === undefined || offered.names.length === 0) return undefined
  return trustsCommands(cwd, offered.folder, offered.hash, env) ? undefined : offered
}

/**
 * Whether the project's own commands may be read: `--trust` or `MM_TRUST_PROJECT=1` for this
 * run, or the user trusted these command files (the trust store holds their hash).
 */
export const projectTrusted =
  (loaded: LoadedConfig, cwd: string, env: NodeJS.ProcessEnv = process.env) => (): boolean =>
    commandsWaiting(loaded, cwd, env) === undefined

/** The line of the trust question that names the project's commands. */
export const commandsQuestionLine = (waiting: ProjectCommands): string => {
  const listed = waiting.names.slice(0, 8).map((name) => `/${name}`).join(", ")
  const more = waiting.names.length > 8 ? ` and ${waiting.names.length - 8} more` : ""
  return `  - its own slash commands ${listed}${more} (prompts from ${
    waiting.shown.join(" and ")
  }, sent when you type them)`
}

/** The commands a conversation in `cwd` offers, with the configuration in force. */
export const readUserCommands = (loaded: LoadedConfig, cwd: string, env: NodeJS.ProcessEnv = process.env) =>
  loadUserCommands({ ...placesOf(loaded, cwd, env), trusted: projectTrusted(loaded, cwd, env) })

/** The command a line names, and its argument text: `/review src` → review, "src". */
export const findUserCommand = (
  text: string,
  commands: ReadonlyArray<UserCommand>
): { readonly command: UserCommand; readonly arg: string } | undefined => {
  const match = /^\/([A-Za-z0-9][\w:-]*)(?:\s+([\s\S]*))?$/.exec(text.trim())
  if (match === null) return undefined
  const command = commands.find((candidate) => candidate.name === match[1])
  return command === undefined ? undefined : { command, arg: match[2]?.trim() ?? "" }
}

/** The argument text as words: split at white space, a word in single or double quotes kept whole. */
export const argumentWords = (text: string): ReadonlyArray<string> =>
  [...text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3])

/**
 * The prompt a command sends: `$ARGUMENTS` is the whole argument text, `$1`…`$9` its words
 * (empty when there are fewer). A body that names none of them gets the arguments on a line
 * of its own at its end, so that what was typed is not lost.
 */
export const fillCommand = (command: UserCommand, arg: string): string => {
  const words = argumentWords(arg)
  const placeholders = /\$ARGUMENTS|\$([1-9])/g
  const named = placeholders.test(command.body)
  const filled = command.body.replace(
    placeholders,
    (_whole, digit: string | undefined) => digit === undefined ? arg : words[Number(digit) - 1] ?? ""
  )
  return named || arg === "" ? filled : `${filled}\n\n${arg}`
}

/** `/review [path]` as help and the `/` menu show it. */
export const userUsage = (command: UserCommand): string =>
  command.hint === "" ? `/${command.name}` : `/${command.name} ${command.hint}`

/** The line the terminal shows when a command was expanded: which file the prompt came from. */
export const expandedLine = (command: UserCommand): string => `/${command.name} — sent the prompt of ${command.shown}`
