/**
 * The user's own commands (src/commands/UserCommands.ts) as the terminal shows them: a section
 * of `/help`, rows of the `/` menu, words Tab completes, and the lines said when they are read.
 */
import { type UserCommands, userUsage } from "../commands/UserCommands"
import { sanitize } from "../text/Sanitize"
import type { Style } from "../text/Style"

/** `/help`'s section "your commands", with the lines of the files skipped; nothing when there are none. */
export const ownHelp = (own: UserCommands | undefined, width: number): ReadonlyArray<string> => {
  if (own === undefined || own.commands.length + own.notes.length === 0) return []
  const wide = Math.max(width, ...own.commands.map((command) => userUsage(command).length + 2))
  return [
    "Your commands (Markdown files in .mm/commands/ and ~/.config/mm/commands/):",
    // a file's words are printed through sanitize: a project's file is text from outside mm
    ...own.commands.map((command) => `  ${sanitize(userUsage(command)).padEnd(wide)}${sanitize(command.description)}`),
    ...own.notes.map((note) => `  ${sanitize(note)}`)
  ]
}

/** The `/` menu's rows of the user's commands, after the built-in ones. */
export const ownMenu = (own: UserCommands | undefined, width: number, style: Style): ReadonlyArray<string> =>
  (own?.commands ?? []).map((command) =>
    `  ${`/${command.name}`.padEnd(width)}${style.dim(sanitize(command.description))}`
  )

/** The words Tab completes for them. */
export const ownWords = (own: UserCommands | undefined): ReadonlyArray<string> =>
  (own?.commands ?? []).map((command) => `/${command.name}`)
