// Reading a bash command line for the approval rule, with a real bash parser (tree-sitter-bash,
// loaded on first use: BashSyntax.ts). The rule is an allowlist: a command is `Simple` only when
// it is one command made of literal words (plain, or quoted without any expansion); anything
// else is `Unresolved`, with the reason, and is asked as the exact command every time.
import * as Effect from "effect/Effect"

import type { SyntaxNode } from "./BashSyntax"

export type CommandReading =
  /** One command; its words as bash will pass them, quotes removed. */
  | { readonly _tag: "Simple"; readonly words: ReadonlyArray<string> }
  /** Anything the classifier does not fully resolve; `reason` names it (`a redirection`). */
  | { readonly _tag: "Unresolved"; readonly reason: string }

export interface CommandReader {
  readonly read: (command: string) => CommandReading
}

const unresolved = (reason: string): CommandReading => ({ _tag: "Unresolved", reason })

/** Why a node that is not a literal word cannot be resolved, by its type in tree-sitter-bash. */
const REASONS: Readonly<Record<string, string>> = {
  ansi_c_string: "$'…' quoting",
  translated_string: "$\"…\" quoting",
  simple_expansion: "a $ expansion",
  expansion: "a ${…} expansion",
  command_substitution: "a command substitution",
  process_substitution: "a process substitution",
  arithmetic_expansion: "an arithmetic expansion",
  brace_expression: "a brace expansion",
  file_redirect: "a redirection",
  herestring_redirect: "a here-string",
  heredoc_redirect: "a here-document",
  redirected_statement: "a redirection",
  variable_assignment: "a variable assignment",
  variable_assignments: "a variable assignment",
  list: "a list of commands (&&, ||)",
  pipeline: "a pipe",
  subshell: "a subshell",
  compound_statement: "a group { … }",
  negated_command: "a negation (!)",
  comment: "a comment",
  function_definition: "a function definition",
  declaration_command: "a declaration",
  unset_command: "an unset",
  test_command: "a test [[ … ]]",
  if_statement: "an if",
  for_statement: "a loop",
  c_style_for_statement: "a loop",
  while_statement: "a loop",
  case_statement: "a case",
  ERROR: "text the parser cannot read",
  ";": "more than one command",
  "$": "a $ (an expansion, or $\"…\" quoting)",
  "&": "a background job",
  ";;": "a case"
}

const reasonOf = (node: SyntaxNode): string => REASONS[node.type] ?? `a ${node.type.replace(/_/g, " ")}`

/**
 * Characters that are special to bash in an unquoted word (expansions, globs, quotes, escapes,
 * operators) or that a person cannot see: a word holding one is not literal.
 */
const NOT_LITERAL = /[\\$`*?[\]{}()<>!&|;'"\s\p{Cc}]|^~|[=:]~/u

/** The word a node stands for when it is a literal one, else why not. */
const wordOf = (node: SyntaxNode, text: string): string | { readonly reason: string } => {
  switch (node.type) {
    case "command_name":
      return node.childCount === 1 && node.child(0) !== null
        ? wordOf(node.child(0) as SyntaxNode, text)
        : { reason: reasonOf(node) }
    case "word":
    case "number": {
      const word = node.text
      return NOT_LITERAL.test(word) ? { reason: `a character bash expands or treats specially in ${word}` } : word
    }
    case "raw_string":
      return node.text.includes("\0") ? { reason: "a NUL character" } : node.text.slice(1, -1)
    case "string": {
      const inner = node.text.slice(1, -1)
      const plain = node.children.every((c) => c !== null && (c.type === "\"" || c.type === "string_content"))
      return plain && !/[\\$`\0]/.test(inner) ? inner : { reason: `an expansion or escape inside "…"` }
    }
    case "concatenation": {
      let word = ""
      let end = node.startIndex
      for (const child of node.children) {
        if (child === null) continue
        if (child.startIndex !== end) return { reason: reasonOf(node) }
        const part = wordOf(child, text)
        if (typeof part !== "string") return part
        word += part
        end = child.endIndex
      }
      return word
    }
    default:
      return { reason: reasonOf(node) }
  }
}

/** The command's words, when every part of it is literal and nothing hides between them. */
const readSimple = (command: SyntaxNode, text: string): CommandReading => {
  const words: Array<string> = []
  let end = command.startIndex
  for (const child of command.children) {
    if (child === null) continue
    const gap = text.slice(end, child.startIndex)
    if (words.length > 0 && !/^[ \t]+$/.test(gap)) {
      return unresolved(gap.includes("\\") ? "a line continuation" : "text between words")
    }
    if (words.length === 0 && child.type !== "command_name") return unresolved(reasonOf(child))
    const word = wordOf(child, text)
    if (typeof word !== "string") return unresolved(word.reason)
    words.push(word)
    end = child.endIndex
  }
  if (end !== command.endIndex) return unresolved("text after the command")
  return { _tag: "Simple", words }
}

/** Reads a command line as the approval rule needs it (the parser's tree in, words or a reason out). */
const readCommandTree = (root: SyntaxNode, text: string): CommandReading => {
  if (text.trim() === "") return unresolved("an empty command")
  if (root.hasError) return unresolved("text the parser cannot read (an unclosed quote?)")
  const parts = root.children.filter((c): c is SyntaxNode => c !== null)
  const commands = parts.filter((c) => c.type === "command")
  if (parts.length !== 1) {
    const other = parts.find((c) => c.type !== "command")
    return unresolved(commands.length > 1 ? "more than one command" : other === undefined ? "" : reasonOf(other))
  }
  const only = parts[0]
  if (only.type !== "command") return unresolved(reasonOf(only))
  if (!/^[ \t\n]*$/.test(text.slice(0, only.startIndex)) || !/^[ \t\n]*$/.test(text.slice(only.endIndex))) {
    return unresolved(text.includes("\\\n") ? "a line continuation" : "text around the command")
  }
  return readSimple(only, text)
}

/** When the parser cannot be loaded, nothing is resolved: every command is asked as it is. */
const noParser = (why: string): CommandReader => ({
  read: () => unresolved(`the bash parser could not be loaded (${why})`)
})

/**
 * A longer command is not parsed: tree-sitter's time grows faster than the command on some
 * shapes (a chain of 16 KB of `a | ` takes a third of a second, 64 KB aborts its WebAssembly),
 * and a command this long is rarely read-only. It is asked as it is, as any command the
 * classifier cannot resolve. The classify bench's 2 KB commands are well inside it.
 */
export const PARSED_MAX_BYTES = 8 * 1024

let loading: Promise<CommandReader> | undefined

/** The reader, loading the parser the first time (a few tens of milliseconds); never fails. */
export const loadCommandReader = (): Promise<CommandReader> => (loading ??= import("./BashSyntax").then(
  async ({ loadBashSyntax }) => {
    const syntax = await loadBashSyntax()
    return {
      read: (command: string) => {
        const bytes = Buffer.byteLength(command)
        if (bytes > PARSED_MAX_BYTES) return unresolved(`too long to check (${bytes} bytes)`)
        try {
          return syntax.parse(command, (root) => readCommandTree(root, command))
        } catch (cause) {
          const message = cause instanceof Error ? cause.message : String(cause)
          return unresolved(`the bash parser failed on it (${message.split(/\. |\n/)[0]})`)
        }
      }
    }
  },
  (cause: unknown) => noParser(cause instanceof Error ? cause.message : String(cause))
).catch((cause: unknown) => noParser(cause instanceof Error ? cause.message : String(cause))))

/** The reader as an effect (for the core, before it decides on a bash call). */
export const commandReader: Effect.Effect<CommandReader> = Effect.promise(loadCommandReader)
