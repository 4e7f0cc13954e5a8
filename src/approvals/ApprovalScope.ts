// What an "always" answer covers (docs/reference/tools.md#approvals). Pure functions: the
// core offers the scopes with each approval request, keeps the ones chosen for the rest of
// the conversation, and asks `isAllowed` before it asks the user again.
import * as fs from "node:fs"
import * as path from "node:path"

/** One "always" the user gave; held per conversation, forgotten on /new and /resume. */
export type Scope =
  /** bash: every simple command whose prefix (program, first non-option argument) starts with these words. */
  | { readonly _tag: "CommandPrefix"; readonly words: ReadonlyArray<string> }
  /** bash: this exact command line, for compound commands and commands that run other commands. */
  | { readonly _tag: "ExactCommand"; readonly command: string }
  /** edit_file / write_file on this file (an absolute path); read_file of it, for a file outside the project. */
  | { readonly _tag: "File"; readonly path: string }
  /** edit_file / write_file anywhere inside this directory (the project). */
  | { readonly _tag: "Project"; readonly dir: string }
  /** Every call of this tool (tools without a finer scope, e.g. MCP tools). */
  | { readonly _tag: "Tool"; readonly name: string }

/** A call as the approval rule sees it: the tool's name, its parsed arguments, the project directory. */
export interface CallToApprove {
  readonly tool: string
  readonly input: Record<string, unknown> | undefined
  readonly cwd: string
}

// ---------------------------------------------------------------------------
// Reading a bash command line

/**
 * A bash command line as far as the approval rule needs it: `Simple` is one command whose
 * words are known (quotes removed); `Compound` is anything else, with the reason.
 */
export type ParsedCommand =
  | { readonly _tag: "Simple"; readonly words: ReadonlyArray<string> }
  | { readonly _tag: "Compound"; readonly reason: string }

const compound = (reason: string): ParsedCommand => ({ _tag: "Compound", reason })

const OPERATORS: Record<string, string> = {
  ";": "a command list (;)",
  "&": "a background job or a list (&, &&)",
  "|": "a pipe or a list (|, ||)",
  "<": "a redirection or here-document (<, <<)",
  ">": "a redirection (>)",
  "(": "a subshell (( ))",
  ")": "a subshell (( ))",
  "`": "a command substitution (backticks)",
  "\n": "several lines"
}

/** Splits a command line into words as bash would, or says why it is not one simple command. */
export const parseCommand = (command: string): ParsedCommand => {
  const text = command.trim()
  if (text === "") return compound("an empty command")
  const words: Array<string> = []
  let word = ""
  let inWord = false
  const endWord = () => {
    if (inWord) words.push(word)
    word = ""
    inWord = false
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (c === "\\") {
      if (text[i + 1] === "\n") {
        i++
        continue
      }
      if (i + 1 >= text.length) return compound("a trailing backslash")
      word += text[++i]
      inWord = true
      continue
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1)
      if (end === -1) return compound("an unterminated quote")
      word += text.slice(i + 1, end)
      inWord = true
      i = end
      continue
    }
    if (c === "\"") {
      let j = i + 1
      for (; j < text.length && text[j] !== "\""; j++) {
        const d = text[j]
        if (d === "`") return compound(OPERATORS["`"])
        if (d === "$" && text[j + 1] === "(") return compound("a command substitution ($( ))")
        if (d === "\\" && j + 1 < text.length && "$`\"\\\n".includes(text[j + 1])) {
          if (text[j + 1] !== "\n") word += text[j + 1]
          j++
          continue
        }
        word += d
      }
      if (j >= text.length) return compound("an unterminated quote")
      inWord = true
      i = j
      continue
    }
    if (c === " " || c === "\t") {
      endWord()
      continue
    }
    if (c === "$" && text[i + 1] === "(") return compound("a command substitution ($( ))")
    if (OPERATORS[c] !== undefined) return compound(OPERATORS[c])
    if (c === "#" && !inWord) return compound("a comment")
    word += c
    inWord = true
  }
  endWord()
  if (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0] ?? "")) return compound("a variable assignment before the command")
  return { _tag: "Simple", words }
}

/**
 * Programs that run another command given as their arguments: an "always" for one of them
 * covers only the exact command line, never a prefix (`timeout 5 npm test` must not allow
 * `timeout 5 rm -rf x`).
 */
const RUNS_OTHER_COMMANDS = new Set([
  "bash",
  "sh",
  "zsh",
  "dash",
  "fish",
  "ksh",
  "env",
  "sudo",
  "doas",
  "su",
  "exec",
  "eval",
  "command",
  "builtin",
  "xargs",
  "time",
  "timeout",
  "nice",
  "nohup",
  "ionice",
  "stdbuf",
  "chroot",
  "watch",
  "strace",
  "setsid",
  "unbuffer",
  "flock",
  "source",
  "."
])

/** Interpreters whose `-c` / `-e` runs the code given on the command line: the exact line too. */
const INLINE_CODE = new Set(["python", "python3", "node", "perl", "ruby", "php", "deno", "bun", "awk", "osascript"])
const INLINE_CODE_FLAGS = new Set(["-c", "-e", "--eval", "-p", "--print", "-E"])

const runsOtherCommands = (words: ReadonlyArray<string>): boolean => {
  const program = path.basename(words[0])
  return RUNS_OTHER_COMMANDS.has(program) || (INLINE_CODE.has(program) && words.some((w) => INLINE_CODE_FLAGS.has(w)))
}

/** The program and its first argument that is not an option (`npm test`, `git status`, `ls`). */
export const prefixOf = (words: ReadonlyArray<string>): ReadonlyArray<string> => {
  const argument = words.slice(1).find((w) => !w.startsWith("-"))
  return argument === undefined ? words.slice(0, 1) : [words[0], argument]
}

/** The scope an "always" on this command gives: its prefix, or the exact line for a compound command. */
export const commandScope = (command: string): Scope => {
  const parsed = parseCommand(command)
  if (parsed._tag === "Simple" && !runsOtherCommands(parsed.words)) {
    return { _tag: "CommandPrefix", words: prefixOf(parsed.words) }
  }
  return { _tag: "ExactCommand", command: command.trim() }
}

const commandCovered = (scope: Scope, command: string): boolean => {
  switch (scope._tag) {
    case "ExactCommand":
      return command.trim() === scope.command
    case "CommandPrefix": {
      const own = commandScope(command)
      return own._tag === "CommandPrefix" && scope.words.every((w, i) => own.words[i] === w)
    }
    default:
      return false
  }
}

// ---------------------------------------------------------------------------
// Files and the project

/** The real path of `file`, following symbolic links as far as the path exists. */
const realPath = (file: string): string => {
  const missing: Array<string> = []
  let at = file
  for (;;) {
    try {
      return path.join(fs.realpathSync(at), ...missing.reverse())
    } catch {
      const parent = path.dirname(at)
      if (parent === at) return file
      missing.push(path.basename(at))
      at = parent
    }
  }
}

/** Whether `file` (absolute) lies inside `dir`, symbolic links followed. */
export const isInside = (dir: string, file: string): boolean => {
  const relative = path.relative(realPath(dir), realPath(file))
  return relative !== "" && !relative.startsWith("..") && !path.isAbsolute(relative)
}

const FILE_TOOLS = new Set(["edit_file", "write_file"])
/** The tools that only read (asked only outside the project): "always" covers the path read. */
const READ_TOOLS = new Set(["read_file", "grep", "glob"])

const fileOf = (call: CallToApprove): string | undefined =>
  FILE_TOOLS.has(call.tool) && typeof call.input?.path === "string"
    ? path.resolve(call.cwd, call.input.path)
    : undefined

/** Whether a file tool's call writes outside the project directory. */
export const isOutsideProject = (call: CallToApprove): boolean => {
  const file = fileOf(call)
  return file !== undefined && !isInside(call.cwd, file)
}

// ---------------------------------------------------------------------------
// The rule

/**
 * True when one of the "always" answers given covers this call, so it runs without asking.
 * An edit or a write outside the project is never covered: it is asked every time.
 */
export const isAllowed = (scopes: ReadonlyArray<Scope>, call: CallToApprove): boolean => {
  if (isOutsideProject(call)) return false
  return scopes.some((scope) => {
    if (scope._tag === "Tool") return scope.name === call.tool
    if (call.tool === "bash") {
      return typeof call.input?.command === "string" && commandCovered(scope, call.input.command)
    }
    if (READ_TOOLS.has(call.tool)) {
      return scope._tag === "File" && typeof call.input?.path === "string" &&
        scope.path === path.resolve(call.cwd, call.input.path)
    }
    const file = fileOf(call)
    if (file === undefined) return false
    if (scope._tag === "File") return scope.path === file
    if (scope._tag === "Project") return isInside(scope.dir, file)
    return false
  })
}

/** A choice of "always" offered with a request: the scope and how the user is told it. */
export interface AlwaysChoice {
  readonly scope: Scope
  /** Names what is allowed: `"npm test …"`, `this exact command`, `src/a.ts`, `every edit in this project`. */
  readonly label: string
}

const quoteWord = (word: string): string => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/** How a scope is named to the user. */
export const scopeLabel = (scope: Scope, cwd: string): string => {
  switch (scope._tag) {
    case "CommandPrefix":
      return `"${scope.words.map(quoteWord).join(" ")} …"`
    case "ExactCommand":
      return "this exact command"
    case "File": {
      const relative = path.relative(cwd, scope.path)
      return relative.startsWith("..") || path.isAbsolute(relative) ? scope.path : relative
    }
    case "Project":
      return "every edit in this project"
    case "Tool":
      return `every ${scope.name} call`
  }
}

/**
 * The "always" choices a call offers, most specific first: bash its prefix (or the exact
 * line), a file tool its file and then the whole project. An edit or write outside the
 * project offers none: it is asked every time. read_file (asked only outside the project):
 * that file. Any other tool: the tool itself.
 */
export const alwaysChoices = (call: CallToApprove): ReadonlyArray<AlwaysChoice> => {
  const choice = (scope: Scope): AlwaysChoice => ({ scope, label: scopeLabel(scope, call.cwd) })
  if (call.tool === "bash") {
    return typeof call.input?.command === "string" ? [choice(commandScope(call.input.command))] : []
  }
  // a read is asked only outside the project: "always" there is for reading that path again
  if (READ_TOOLS.has(call.tool)) {
    return typeof call.input?.path === "string"
      ? [choice({ _tag: "File", path: path.resolve(call.cwd, call.input.path) })]
      : []
  }
  if (FILE_TOOLS.has(call.tool)) {
    const file = fileOf(call)
    if (file === undefined || !isInside(call.cwd, file)) return []
    return [choice({ _tag: "File", path: file }), choice({ _tag: "Project", dir: call.cwd })]
  }
  return [choice({ _tag: "Tool", name: call.tool })]
}
