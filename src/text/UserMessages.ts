import { SHELL_CONTEXT_HEAD } from "../domain/Turns"

/**
 * What a `user` message of a conversation is: a question the user asked, a shell command the
 * user ran with `!` (its output kept as context), or a note mm added (`[mm] …`, for instance
 * after an undo). Recaps and `sessions show` draw only questions as questions.
 */
type UserMessageKind =
  | { readonly _tag: "Question"; readonly text: string }
  | { readonly _tag: "Shell"; readonly command: string; readonly output: string }
  | { readonly _tag: "Note"; readonly text: string }

/** How mm's own notes to the model start. */
const NOTE_HEAD = "[mm] "

export const userMessageKind = (content: string): UserMessageKind => {
  if (content.startsWith(SHELL_CONTEXT_HEAD)) {
    const line = /\n\$ (.*)\n?/.exec(content)
    if (line !== null) return { _tag: "Shell", command: line[1], output: content.slice(line.index + line[0].length) }
  }
  if (content.startsWith(NOTE_HEAD)) return { _tag: "Note", text: content.slice(NOTE_HEAD.length) }
  return { _tag: "Question", text: content }
}
